// The conntrack adapter against the real tool and kernel in a throwaway network namespace,
// and the fake checked against the same sequence (habit 10). Entries are made with
// `conntrack -I`, so no traffic is needed. Skips, saying why, without namespaces or the tool.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeConntrackEntry } from '../testing/index.ts';
import { FakeConntrack, RecordingExec, conntrackInsertArgs } from '../testing/index.ts';
import type { ConntrackFilter } from './conntrack.ts';
import { Conntrack } from './conntrack.ts';
import type { Exec } from './exec.ts';
import { netnsExec, spawnExec } from './exec.ts';

const ns = `ct13-nf-${randomUUID().slice(0, 8)}`;
let skip: string | null = null;

const flow = (src: string, dst: string, dport: number, endpoint: string, family: 'IPv4' | 'IPv6' = 'IPv4'): FakeConntrackEntry => ({
  family,
  protocol: 'UDP',
  orig: { src, dst, sport: 40000 + Number(src.split(/[.:]/).pop() ?? 0), dport },
  reply: { src: endpoint, dst: src, sport: 5353, dport: 40000 + Number(src.split(/[.:]/).pop() ?? 0) },
});

const FLOWS: readonly FakeConntrackEntry[] = [
  flow('10.244.1.5', '10.96.0.10', 53, '10.244.2.3'), // ClusterIP → the endpoint that goes away
  flow('10.244.1.6', '10.96.0.10', 53, '10.244.2.4'), // ClusterIP → an endpoint that stays
  flow('192.168.77.100', '192.168.77.11', 30053, '10.244.2.3'), // NodePort → the endpoint that goes
  flow('192.168.77.101', '192.168.77.11', 30053, '10.244.2.4'),
  flow('10.244.1.7', '10.96.0.20', 53, '10.96.0.20'), // black-holed: no DNAT happened
  flow('fd00:244::5', 'fd00:96::a', 53, 'fd00:244::9', 'IPv6'),
];

const STEPS: readonly ConntrackFilter[] = [
  { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.2.3' },
  { family: 'IPv4', protocol: 'UDP', origDstPort: 30053, replySrc: '10.244.2.3' },
  { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.2.3' }, // again: nothing left
  { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.20', origDstPort: 53 },
  { family: 'IPv6', protocol: 'UDP', origDst: 'fd00:96::a', origDstPort: 53, replySrc: 'fd00:244::9' },
];

async function scenario(exec: Exec, list: () => Promise<string[]>): Promise<{ deleted: number[]; left: string[] }> {
  const ct = new Conntrack({ exec });
  const deleted: number[] = [];
  for (const f of STEPS) deleted.push(await ct.delete(f));
  return { deleted, left: await list() };
}

/** `src>dst:dport` of every IPv4 and IPv6 UDP entry, sorted. */
function summarize(listing: string): string[] {
  return listing
    .split('\n')
    .filter((l) => l.startsWith('udp') || l.startsWith('ipv'))
    .map((l) => {
      const src = /src=(\S+)/.exec(l)?.[1];
      const dst = /dst=(\S+)/.exec(l)?.[1];
      const dport = /dport=(\d+)/.exec(l)?.[1];
      return `${src}>${dst}:${dport}`;
    })
    .sort();
}

beforeAll(() => {
  const tool = spawnSync('conntrack', ['--version'], { encoding: 'utf8' });
  if (tool.status !== 0) {
    skip = `the conntrack tool is missing (apt-get install conntrack): ${tool.stderr || tool.error?.message}`;
    return;
  }
  const r = spawnSync('ip', ['netns', 'add', ns], { encoding: 'utf8' });
  if (r.status !== 0) skip = `cannot create a network namespace: ${r.stderr.trim() || r.error?.message}`;
});
afterAll(() => {
  if (skip === null) spawnSync('ip', ['netns', 'delete', ns]);
});

describe('conntrack adapter on the real kernel', () => {
  it('D.7 deletes exactly the flows each filter names, counts them, and the fake agrees', async (ctx) => {
    if (skip !== null) ctx.skip(skip);
    for (const f of FLOWS) {
      const r = spawnSync('ip', ['netns', 'exec', ns, 'conntrack', ...conntrackInsertArgs(f)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    }
    const real = netnsExec(spawnExec(), ns);
    const listReal = async () => {
      const v4 = await real({ command: 'conntrack', args: ['-L', '-p', 'udp', '-f', 'ipv4'] });
      const v6 = await real({ command: 'conntrack', args: ['-L', '-p', 'udp', '-f', 'ipv6'] });
      return summarize(v4.stdout + v6.stdout);
    };
    const kernel = await scenario(real, listReal);
    const fake = new FakeConntrack();
    fake.insert(...FLOWS);
    const rec = new RecordingExec([fake]);
    const faked = await scenario(rec.exec, async () => fake.entries().map((e) => `${e.orig.src}>${e.orig.dst}:${e.orig.dport}`).sort());
    expect(kernel).toEqual({ deleted: [1, 1, 0, 1, 1], left: ['10.244.1.6>10.96.0.10:53', '192.168.77.101>192.168.77.11:30053'] });
    expect(faked).toEqual(kernel);
  });
});
