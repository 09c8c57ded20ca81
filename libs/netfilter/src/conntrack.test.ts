import { describe, expect, it } from 'vitest';
import type { FakeConntrackEntry } from '../testing/index.ts';
import { FakeConntrack, RecordingExec } from '../testing/index.ts';
import { ApplyError } from './apply-error.ts';
import type { ConntrackFilter } from './conntrack.ts';
import { Conntrack, conntrackDeleteArgs, conntrackDeleteCommand } from './conntrack.ts';

const flow = (src: string, dst: string, dport: number, endpoint: string, family: 'IPv4' | 'IPv6' = 'IPv4'): FakeConntrackEntry => ({
  family,
  protocol: 'UDP',
  orig: { src, dst, sport: 40000, dport },
  reply: { src: endpoint, dst: src, sport: 5353, dport: 40000 },
});

describe('conntrackDeleteArgs', () => {
  const cases: { name: string; filter: ConntrackFilter; want: string }[] = [
    {
      name: 'a service address and port answered by one endpoint',
      filter: { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.1.2' },
      want: 'conntrack -D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --reply-src 10.244.1.2 -f ipv4',
    },
    { name: 'every flow to a NodePort', filter: { family: 'IPv4', protocol: 'UDP', origDstPort: 30053 }, want: 'conntrack -D -p udp --orig-port-dst 30053 -f ipv4' },
    { name: 'IPv6 says so', filter: { family: 'IPv6', protocol: 'UDP', origDst: 'fd00::a', origDstPort: 53 }, want: 'conntrack -D -p udp --orig-dst fd00::a --orig-port-dst 53 -f ipv6' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(conntrackDeleteCommand(c.filter)).toBe(c.want);
      expect(['conntrack', ...conntrackDeleteArgs(c.filter)].join(' ')).toBe(c.want);
    });
  }
});

describe('Conntrack', () => {
  it('deletes what the filter matches and returns the count; nothing matching is 0, not an error', async () => {
    const fake = new FakeConntrack();
    fake.insert(flow('10.244.1.5', '10.96.0.10', 53, '10.244.2.3'), flow('10.244.1.6', '10.96.0.10', 53, '10.244.2.4'), flow('10.244.1.7', '10.96.0.10', 54, '10.244.2.3'));
    const ct = new Conntrack({ exec: new RecordingExec([fake]).exec });
    expect(await ct.delete({ family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.2.3' })).toBe(1);
    expect(await ct.delete({ family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.2.3' })).toBe(0);
    expect(fake.entries().map((e) => `${e.orig.dst}:${e.orig.dport}>${e.reply.src}`)).toEqual(['10.96.0.10:53>10.244.2.4', '10.96.0.10:54>10.244.2.3']);
    expect(await ct.delete({ family: 'IPv6', protocol: 'UDP', origDstPort: 53 })).toBe(0);
    expect(await ct.unavailableReason()).toBeNull();
  });

  it('a missing tool or another failure is an ApplyError with the tool\'s words', async () => {
    const rec = new RecordingExec([]);
    const ct = new Conntrack({ exec: rec.exec });
    expect(await ct.unavailableReason()).toMatch(/conntrack: command not found/);
    const err = await ct.delete({ family: 'IPv4', protocol: 'UDP', origDstPort: 53 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplyError);
    expect((err as ApplyError).message).toMatch(/^conntrack failed \(exit 127\): conntrack: command not found/);
    const rec2 = new RecordingExec([new FakeConntrack()]);
    rec2.failWhen((c) => c.command === 'conntrack', { stderr: 'conntrack v1.4.7 (conntrack-tools): Operation failed: Permission denied\n' });
    await expect(new Conntrack({ exec: rec2.exec }).delete({ family: 'IPv4', protocol: 'UDP', origDstPort: 53 })).rejects.toThrow(/Permission denied/);
  });
});
