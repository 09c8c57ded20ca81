// Habit 7 on the real kernel: the iptables backend writes only chains of its own naming. A
// foreign chain and foreign rules (in our tables and in the built-in chains we jump from) must
// come through a first sync, partial syncs, a service removal and a restarted agent's full
// sync unchanged, both for a small restore and for one that takes the large-restore path
// (`-S` first, see libs/netfilter/src/iptables-restorer.ts). Skips with the reason when
// namespaces cannot be made.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { DpServicePort } from '@slicemesh/dataplane';
import { dpEndpoint, dpServicePort, dpState } from '@slicemesh/dataplane/testing';
import type { Exec, ExecRequest } from '@slicemesh/netfilter';
import { IptablesRestorer, netnsExec, spawnExec } from '@slicemesh/netfilter';
import { missingTools, netnsAddFailure } from '@slicemesh/netfilter/testing/netns-lab';
import { realClock } from '@slicemesh/runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IptablesBackend } from './backends/iptables-backend.ts';

const failure = netnsAddFailure();
const tools = missingTools(['iptables-restore', 'iptables-save']);
const unavailable = failure !== null ? `cannot create network namespaces: ${failure}` : tools.length > 0 ? `missing tools: ${tools.join(', ')}` : null;
const id = randomUUID().slice(0, 6);

/** Someone else's rules: a chain in each of our tables, and rules in the built-in chains. */
const FOREIGN = [
  '*filter',
  ':OTHER-FILTER - [0:0]',
  '-A OTHER-FILTER -s 192.0.2.1/32 -j DROP',
  '-A INPUT -p tcp -m tcp --dport 22 -j ACCEPT',
  '-A FORWARD -j OTHER-FILTER',
  'COMMIT',
  '*nat',
  ':OTHER-NAT - [0:0]',
  '-A OTHER-NAT -d 198.51.100.7/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.9.9.9:8080',
  '-A PREROUTING -j OTHER-NAT',
  '-A OUTPUT -d 198.51.100.8/32 -j RETURN',
  'COMMIT',
  '',
].join('\n');

function run(ns: string, cmd: string, args: readonly string[], input?: string): string {
  const r = spawnSync('ip', ['netns', 'exec', ns, cmd, ...args], { encoding: 'utf8', ...(input === undefined ? {} : { input }) });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} in ${ns}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Every `iptables-save` line of filter and nat that does not name one of our chains, counters dropped. */
function foreignLines(ns: string): string[] {
  const out: string[] = [];
  for (const table of ['filter', 'nat']) {
    for (const line of run(ns, 'iptables-save', ['-t', table]).split('\n')) {
      if (line.startsWith('#') || line.includes('SLICEMESH-')) continue;
      out.push(`${table} ${line.replace(/ \[\d+:\d+\]$/, '')}`);
    }
  }
  return out;
}

const ourChains = (ns: string): string[] =>
  ['filter', 'nat'].flatMap((t) => run(ns, 'iptables-save', ['-t', t]).split('\n').filter((l) => l.startsWith(':SLICEMESH-')).map((l) => `${t} ${l.split(' ')[0]}`));

function web(endpoints: number, name = 'ns1/web:http', clusterIP = '10.96.0.10'): DpServicePort {
  return dpServicePort(name, { clusterIP, endpoints: Array.from({ length: endpoints }, (_, i) => dpEndpoint(`10.180.0.${i + 1}`, { port: 8080 })) });
}
const db = dpServicePort('ns1/db:pg', { clusterIP: '10.96.0.11', port: 5432, endpoints: [dpEndpoint('10.180.1.1', { port: 5432 })] });
const cache = dpServicePort('ns2/cache:redis', { clusterIP: '10.96.0.12', port: 6379, endpoints: [dpEndpoint('10.180.2.1', { port: 6379 })] });

/** An exec that remembers every request, so a test can see which path a restore took. */
function recorded(exec: Exec): { exec: Exec; calls: ExecRequest[] } {
  const calls: ExecRequest[] = [];
  return { calls, exec: (req) => (calls.push(req), exec(req)) };
}

describe(`foreign chains and rules survive every sync on the real kernel${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const cases = [
    { name: 'small restores', listTableAbove: 1000, listed: false },
    { name: 'large-restore path (-S first)', listTableAbove: 1, listed: true },
  ];
  const namespaces: string[] = [];
  beforeAll(() => {
    if (unavailable) return;
    cases.forEach((_, i) => {
      const ns = `smfr${id}${i}`;
      spawnSync('ip', ['netns', 'add', ns]);
      namespaces.push(ns);
      run(ns, 'iptables-restore', ['--noflush', '-w'], FOREIGN);
    });
  });
  afterAll(() => {
    for (const ns of namespaces) spawnSync('ip', ['netns', 'delete', ns]);
  });

  cases.forEach((tc, i) => {
    it(`${tc.name}: first sync, partial syncs, a removal and a restarted agent's full sync leave them as they were`, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      const ns = namespaces[i] ?? '';
      const before = foreignLines(ns);
      expect(before).toContain('nat -A PREROUTING -j OTHER-NAT');
      expect(before).toContain('filter :OTHER-FILTER -');
      const start = () => {
        const rec = recorded(netnsExec(spawnExec(), ns));
        const restorer = new IptablesRestorer({ exec: rec.exec, listTableAbove: tc.listTableAbove });
        return { rec, backend: new IptablesBackend({ restorer, clock: realClock, jumpCheckIntervalMs: 0 }) };
      };
      const agent = start();
      const steps: { what: string; ports: DpServicePort[]; changed: ReadonlySet<string> | null }[] = [
        { what: 'first sync', ports: [web(2), db, cache], changed: null },
        { what: 'an endpoint added', ports: [web(3), db, cache], changed: new Set(['ns1/web']) },
        { what: 'a service removed', ports: [web(3), cache], changed: new Set(['ns1/db']) },
      ];
      for (const s of steps) {
        await agent.backend.sync({ state: dpState(s.ports), changedServices: s.changed });
        expect({ step: s.what, foreign: foreignLines(ns) }).toEqual({ step: s.what, foreign: before });
      }
      const restores = agent.rec.calls.filter((c) => c.args.includes('--noflush'));
      expect(restores[0]?.input?.split('\n').includes('-S')).toBe(tc.listed);
      expect(ourChains(ns).filter((c) => c.startsWith('nat :SLICEMESH-SEP-'))).toHaveLength(4);

      // A restarted agent: full sync without the service it no longer has, stale chains deleted.
      const restarted = start();
      await restarted.backend.sync({ state: dpState([web(1)]), changedServices: null });
      expect(foreignLines(ns)).toEqual(before);
      expect(ourChains(ns).filter((c) => c.startsWith('nat :SLICEMESH-SEP-'))).toHaveLength(1);
      // Every jump was found word for word in the listing of its built-in chain: no -C, no insert.
      expect(restarted.rec.calls.filter((c) => c.args.includes('-C') || c.args.includes('-I'))).toEqual([]);
    });
  });
});
