// A full render narrowed to what the node lacks (`narrowToKernel`, the node's rules as
// iptables-save prints them) writes only the chains that differ, deletes the stale ones, and
// leaves the node as a full rewrite would — checked on the restore simulator, the node's
// rules saved through `savedForm`.

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import type { IptablesTables } from '../testing/iptables-restore-sim.ts';
import { applyIptablesRestore, dumpIptablesTable, emptyIptables } from '../testing/iptables-restore-sim.ts';
import { OWN_CHAINS, serviceChainNames } from './chain-names.ts';
import { renderIptables } from './render.ts';
import type { IptablesKernelChains } from './saved-form.ts';
import { narrowToKernel, savedForm } from './saved-form.ts';

const a = svc('ns1/a:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] });
const b = svc('ns1/b:http', { clusterIP: '172.30.0.42', nodePort: 3001, endpoints: [ep('10.180.1.1')] });
const c = svc('ns2/c:dns', { clusterIP: '172.30.0.43', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] });
const before = deepFreeze(dpState([a, b, c]));
const with_ = (ports: DpServicePort[]): DpState => deepFreeze({ ...before, servicePorts: ports });

/** The simulated node as iptables-save would print it: every user chain's rules in saved form. */
function saved(tables: IptablesTables): IptablesKernelChains {
  const quoted = (words: readonly string[]) => words.map((w) => (/\s/.test(w) ? `"${w}"` : w)).join(' ');
  const table = (t: string) => new Map([...(tables.get(t) ?? [])].filter(([c]) => c.startsWith('SLICEMESH-')).map(([c, rules]) => [c, rules.map((r) => quoted(savedForm(quoted(r.words), 'IPv4')))]));
  return { filter: table('filter'), nat: table('nat') };
}

const declared = (script: string): string[] => script.split('\n').filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0] ?? '');

describe('D.4.12 a full sync against the node', () => {
  const node = applyIptablesRestore(emptyIptables(), renderIptables(before).script);
  const onNode = [...(node.get('nat')?.keys() ?? [])];
  const cases: { name: string; after: DpState; writes: string[] }[] = [
    { name: 'the same services: nothing is written', after: before, writes: [] },
    {
      name: 'an endpoint gone: that service\'s chains and its stale endpoint chain, nothing else',
      after: with_([{ ...a, clusterEndpoints: [ep('10.180.0.1')] }, b, c]),
      // The SVC chain and the gone endpoint's chain; the kept endpoint's chain is unchanged.
      writes: [serviceChainNames(a).svc, ...renderIptables(with_([a])).chains.nat.filter((ch) => ch.startsWith('SLICEMESH-SEP-')).filter((ch) => !renderIptables(with_([{ ...a, clusterEndpoints: [ep('10.180.0.1')] }])).chains.nat.includes(ch))],
    },
    {
      name: 'a service gone: the dispatch chains and its stale chains',
      after: with_([a, b]),
      writes: ['SLICEMESH-SERVICES', ...renderIptables(with_([c])).chains.nat.filter((ch) => OWN_CHAINS.isServiceChain(ch))],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const full = renderIptables(tc.after);
      const stale = onNode.filter((ch) => OWN_CHAINS.isServiceChain(ch) && !full.chains.nat.includes(ch));
      const r = narrowToKernel(full.script, saved(node), 'IPv4', stale);
      expect(declared(r.script).sort()).toEqual([...tc.writes].sort());
      const fresh = applyIptablesRestore(emptyIptables(), renderIptables(tc.after).script);
      const synced = applyIptablesRestore(node, r.script);
      for (const t of ['filter', 'nat']) expect(dumpIptablesTable(synced, t)).toEqual(dumpIptablesTable(fresh, t));
    });
  }
});
