import { describe, expect, it } from 'vitest';
import type { FakeConntrackEntry } from './fake-conntrack.ts';
import { FakeConntrack, conntrackInsertArgs } from './fake-conntrack.ts';

const e: FakeConntrackEntry = { family: 'IPv4', protocol: 'UDP', orig: { src: '10.244.1.5', dst: '10.96.0.10', sport: 40000, dport: 53 }, reply: { src: '10.244.2.3', dst: '10.244.1.5', sport: 5353, dport: 40000 } };
const ct = (fake: FakeConntrack, ...args: string[]) => fake.handle({ command: 'conntrack', args });

describe('FakeConntrack', () => {
  it('lists and deletes by the original destination, its port and the reply source, per family', () => {
    const fake = new FakeConntrack();
    fake.insert(e, { ...e, family: 'IPv6', orig: { ...e.orig, dst: 'fd00::a' } });
    expect(ct(fake, '-L', '-p', 'udp')?.stdout).toBe('udp      17 119 src=10.244.1.5 dst=10.96.0.10 sport=40000 dport=53 src=10.244.2.3 dst=10.244.1.5 sport=5353 dport=40000 mark=0 use=1\n');
    expect(ct(fake, '-D', '-p', 'udp', '--orig-dst', '10.96.0.10', '--reply-src', '10.244.9.9', '-f', 'ipv4')).toMatchObject({ code: 1, stderr: expect.stringMatching(/ 0 flow entries have been deleted/) });
    expect(ct(fake, '-D', '-p', 'tcp', '--orig-port-dst', '53', '-f', 'ipv4')?.code).toBe(1);
    expect(ct(fake, '-D', '-p', 'udp', '--orig-port-dst', '53', '-f', 'ipv4')).toMatchObject({ code: 0, stderr: expect.stringMatching(/ 1 flow entries have been deleted/) });
    expect(fake.entries().map((x) => x.family)).toEqual(['IPv6']);
  });

  it('answers --version, refuses what it does not model, leaves other programs alone', () => {
    const fake = new FakeConntrack();
    expect(ct(fake, '--version')?.stdout).toMatch(/^conntrack v1\.4/);
    expect(ct(fake, '-F')?.code).toBe(2);
    expect(fake.handle({ command: 'ip', args: [] })).toBeUndefined();
  });

  it('conntrackInsertArgs creates the same entry with the real tool', () => {
    expect(conntrackInsertArgs(e).join(' ')).toBe('-I -p udp -s 10.244.1.5 -d 10.96.0.10 --sport 40000 --dport 53 -r 10.244.2.3 -q 10.244.1.5 --reply-port-src 5353 --reply-port-dst 40000 -t 120');
  });
});
