// D.4.12 partial sync and stale-chain removal, checked by applying scripts to a simulated
// kernel: full(before) then partial(after) must leave exactly what full(after) leaves.

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import type { IptablesTables } from '../testing/iptables-restore-sim.ts';
import { applyIptablesRestore, dumpIptablesTable, emptyIptables } from '../testing/iptables-restore-sim.ts';
import { KUBE_PROXY_CHAINS, endpointChainName, serviceChainNames } from './chain-names.ts';
import { renderIptables } from './render.ts';

const a = svc('ns1/a:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] });
const b = svc('ns1/b:http', { clusterIP: '172.30.0.42', nodePort: 3001, endpoints: [ep('10.180.1.1')] });
const c = svc('ns2/c:dns', { clusterIP: '172.30.0.43', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] });
const base = dpState([a, b, c]);

const with_ = (ports: DpServicePort[], o: Partial<DpState> = {}): DpState => deepFreeze({ ...base, ...o, servicePorts: ports });

interface Case {
  readonly name: string;
  readonly after: DpState;
  readonly changed: readonly string[];
  /** Chains the partial script must declare (flush and refill), nat table. */
  readonly rewritesNat: readonly string[];
  /** Filter chains the partial script must declare. */
  readonly rewritesFilter: readonly string[];
  readonly deletes: readonly string[];
}

const A = serviceChainNames(a);
const B = serviceChainNames(b);
const FIXED_NAT = ['SLICEMESH-MARK-MASQ', 'SLICEMESH-POSTROUTING'];

const cases: Case[] = [
  {
    name: 'an endpoint change rewrites only that service and leaves the dispatch chains alone',
    after: with_([{ ...a, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.3')] }, b, c]),
    changed: ['ns1/a:http/TCP'],
    rewritesNat: [...FIXED_NAT, A.svc, endpointChainName(a, ep('10.180.0.1')), endpointChainName(a, ep('10.180.0.3'))],
    rewritesFilter: ['SLICEMESH-FORWARD'],
    deletes: [endpointChainName(a, ep('10.180.0.2'))],
  },
  {
    name: 'a new service rewrites the nat dispatch chain and adds its chains',
    after: with_([a, b, c, svc('ns3/d:http', { clusterIP: '172.30.0.44', endpoints: [ep('10.180.3.1')] })]),
    changed: ['ns3/d'],
    rewritesNat: ['SLICEMESH-SERVICES', ...FIXED_NAT, 'SLICEMESH-SVC-', 'SLICEMESH-SEP-'],
    rewritesFilter: ['SLICEMESH-FORWARD'],
    deletes: [],
  },
  {
    name: 'a deleted service rewrites dispatch and deletes all its chains',
    after: with_([a, c]),
    changed: ['ns1/b'],
    rewritesNat: ['SLICEMESH-NODEPORTS', 'SLICEMESH-SERVICES', ...FIXED_NAT],
    rewritesFilter: ['SLICEMESH-FORWARD'],
    deletes: [B.svc, B.ext, endpointChainName(b, ep('10.180.1.1'))],
  },
  {
    name: 'losing every endpoint moves the service to a filter REJECT and deletes its nat chains',
    after: with_([a, { ...b, clusterEndpoints: [], hasAnyEndpoints: false }, c]),
    changed: ['ns1/b:http'],
    rewritesNat: ['SLICEMESH-NODEPORTS', 'SLICEMESH-SERVICES', ...FIXED_NAT],
    rewritesFilter: ['SLICEMESH-SERVICES', 'SLICEMESH-EXTERNAL-SERVICES', 'SLICEMESH-FORWARD'],
    deletes: [B.svc, B.ext, endpointChainName(b, ep('10.180.1.1'))],
  },
  {
    name: 'changing a service port name in ns/name form covers all its ports',
    after: with_([a, { ...b, sessionAffinityTimeoutSeconds: 60 }, c]),
    changed: ['ns1/b'],
    rewritesNat: [...FIXED_NAT, B.svc, B.ext, endpointChainName(b, ep('10.180.1.1'))],
    rewritesFilter: ['SLICEMESH-FORWARD'],
    deletes: [],
  },
];

function declared(script: string, table: 'filter' | 'nat'): string[] {
  const block = script.split(`*${table}\n`)[1]?.split('COMMIT')[0] ?? '';
  return block.split('\n').filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0] ?? '');
}

function dumpAll(t: IptablesTables): string[] {
  return [...dumpIptablesTable(t, 'filter'), ...dumpIptablesTable(t, 'nat')];
}

describe('D.4.12 partial sync', () => {
  const before = deepFreeze(base);
  const first = renderIptables(before);
  const kernel = applyIptablesRestore(emptyIptables(), first.script);

  for (const tc of cases) {
    it(tc.name, () => {
      const partial = renderIptables(tc.after, { changedServicePorts: new Set(tc.changed), previous: first });
      expect(partial.fullSync).toBe(false);
      const nat = declared(partial.script, 'nat').filter((ch) => !tc.deletes.includes(ch));
      for (const want of tc.rewritesNat) expect(nat.some((ch) => ch.startsWith(want))).toBe(true);
      expect(nat.length).toBe(new Set(nat).size);
      // Nothing outside the expected rewrites (prefix entries stand for new hashed chains).
      for (const ch of nat) expect(tc.rewritesNat.some((w) => ch.startsWith(w))).toBe(true);
      expect(declared(partial.script, 'filter')).toEqual(tc.rewritesFilter);
      expect([...partial.deletedChains].sort()).toEqual([...tc.deletes].sort());

      const applied = applyIptablesRestore(kernel, partial.script);
      const fresh = applyIptablesRestore(emptyIptables(), renderIptables(tc.after).script);
      expect(dumpAll(applied)).toEqual(dumpAll(fresh));
      expect(partial.ruleCounts).toEqual(renderIptables(tc.after).ruleCounts);
      expect([...partial.chains.nat].sort()).toEqual([...renderIptables(tc.after).chains.nat].sort());
    });
  }

  it('unchanged services keep their records and are not rendered', () => {
    const after = with_([{ ...a, clusterEndpoints: [ep('10.180.0.9')] }, b, c]);
    const partial = renderIptables(after, { changedServicePorts: new Set(['ns1/a:http/TCP']), previous: first });
    expect(partial.services.get('ns1/b:http/TCP')).toBe(first.services.get('ns1/b:http/TCP'));
    expect(partial.script).not.toContain(B.svc);
  });

  it('a change of node-wide settings forces a full sync', () => {
    const after = with_([a, b, c], { podCIDR: '10.1.0.0/16' });
    const r = renderIptables(after, { changedServicePorts: new Set(), previous: first });
    expect(r.fullSync).toBe(true);
    expect(declared(r.script, 'nat')).toContain(A.svc);
    expect(r.script).toContain('! -s 10.1.0.0/16');
  });

  it('without a previous render the sync is full', () => {
    const r = renderIptables(before, { changedServicePorts: new Set(['ns1/a']) });
    expect(r.fullSync).toBe(true);
    expect(declared(r.script, 'nat')).toContain(B.svc);
  });

  it('a sync with nothing changed writes only the fixed chains', () => {
    const r = renderIptables(before, { changedServicePorts: new Set(), previous: first });
    expect(declared(r.script, 'nat')).toEqual(FIXED_NAT);
    expect(declared(r.script, 'filter')).toEqual(['SLICEMESH-FORWARD']);
    expect(r.deletedChains).toEqual([]);
  });
});

describe('D.4.12 stale chains', () => {
  it('a full sync deletes previously owned service chains that are gone, and only ours', () => {
    const previous = { chains: { filter: [], nat: ['SLICEMESH-SERVICES', 'SLICEMESH-SVC-GONEGONEGONEGO', 'SLICEMESH-SEP-GONEGONEGONEGO', 'SOMEONE-ELSES', 'KUBE-SVC-GONEGONEGONEGONE'] } };
    const r = renderIptables(deepFreeze(dpState([])), { previous });
    expect(r.deletedChains).toEqual(['SLICEMESH-SVC-GONEGONEGONEGO', 'SLICEMESH-SEP-GONEGONEGONEGO']);
    const lines = r.script.split('\n');
    // Declared (flushed) first, deleted after every rule is written.
    expect(lines).toContain(':SLICEMESH-SVC-GONEGONEGONEGO - [0:0]');
    expect(lines.indexOf('-X SLICEMESH-SVC-GONEGONEGONEGO')).toBeGreaterThan(lines.findLastIndex((l) => l.startsWith('-A ')));
    expect(r.script).not.toContain('SOMEONE-ELSES');
    expect(r.script).not.toContain('KUBE-'); // D.4.15: kube-proxy's chains are not ours
  });

  it('D.4.15 in kube-proxy mode the KUBE- service chains are the ones deleted', () => {
    const previous = { chains: { filter: [], nat: ['KUBE-SERVICES', 'KUBE-SVC-GONEGONEGONEGONE', 'KUBE-SEP-GONEGONEGONEGONE', 'SLICEMESH-SVC-GONEGONEGONEGO'] } };
    const r = renderIptables(deepFreeze(dpState([])), { previous, chains: KUBE_PROXY_CHAINS });
    expect(r.deletedChains).toEqual(['KUBE-SVC-GONEGONEGONEGONE', 'KUBE-SEP-GONEGONEGONEGONE']);
    expect(r.script).not.toContain('SLICEMESH-');
  });

  it('the simulated kernel refuses deleting a chain that is still referenced', () => {
    const t = applyIptablesRestore(emptyIptables(), '*nat\n:KUBE-SVC-X - [0:0]\n:KUBE-SEP-Y - [0:0]\n-A KUBE-SVC-X -j KUBE-SEP-Y\nCOMMIT\n');
    expect(() => applyIptablesRestore(t, '*nat\n-X KUBE-SEP-Y\nCOMMIT\n')).toThrow(/not empty|referenced/);
    expect(() => applyIptablesRestore(t, '*nat\n:KUBE-SEP-Y - [0:0]\n-X KUBE-SEP-Y\nCOMMIT\n')).toThrow(/referenced from KUBE-SVC-X/);
  });
});
