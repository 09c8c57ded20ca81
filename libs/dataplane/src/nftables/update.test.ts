// D.6.8/D.6.9: full scripts are idempotent, and an update transaction touches only what
// changed — checked on a simulated kernel: full(before) + update == full(after).

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpEndpoint, DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { applyNft, dumpNft } from '../testing/nft-sim.ts';
import { traceNftables } from '../testing/trace-nftables.ts';
import { nftEndpointNames, nftServiceNames } from './names.ts';
import { renderNftablesChainCleanup, renderNftablesFull, renderNftablesUpdate } from './render.ts';

const T = 'ip slicemesh';
const a = svc('ns1/a:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2')] });
const b = svc('ns1/b:http', { clusterIP: '172.30.0.42', nodePort: 3001, externalPolicyLocal: true, endpoints: [ep('10.180.1.1', { isLocal: true })] });
const c = svc('ns2/c:http', { clusterIP: '172.30.0.43' });
const d = svc('ns2/d:http', { clusterIP: '172.30.0.44', sessionAffinityTimeoutSeconds: 60, endpoints: [ep('10.180.3.1'), ep('10.180.3.2')] });
const before = deepFreeze(dpState([a, b, c, d]));
const after = (ports: DpServicePort[], o: Partial<DpState> = {}): DpState => deepFreeze({ ...before, ...o, servicePorts: ports });

const A = nftServiceNames(a);
const B = nftServiceNames(b);
const C = nftServiceNames(c);
const D = nftServiceNames(d);
const epA = (e: DpEndpoint) => nftEndpointNames(a, e);
const epD = (e: DpEndpoint) => nftEndpointNames(d, e);

interface Case {
  readonly name: string;
  readonly next: DpState;
  /** Every one of these lines must be in the transaction. */
  readonly lines: readonly string[];
  /** No line may mention these names. */
  readonly untouched: readonly string[];
}

const cases: Case[] = [
  {
    name: 'an added endpoint adds its chain and rewrites only its service chain',
    next: after([{ ...a, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.2'), ep('10.180.0.3')] }, b, c, d]),
    lines: [`add chain ${T} ${epA(ep('10.180.0.3')).chain}`, `flush chain ${T} ${A.service}`, `add rule ${T} ${A.service} numgen random mod 3 == 0 goto ${epA(ep('10.180.0.1')).chain}`],
    untouched: [epA(ep('10.180.0.1')).chain.replace('endpoint-', 'add chain ip slicemesh endpoint-'), B.service, D.service, 'element'],
  },
  {
    name: 'a removed endpoint flushes and deletes its chain after its service chain is rewritten',
    next: after([{ ...a, clusterEndpoints: [ep('10.180.0.1')] }, b, c, d]),
    lines: [`flush chain ${T} ${A.service}`, `flush chain ${T} ${epA(ep('10.180.0.2')).chain}`, `delete chain ${T} ${epA(ep('10.180.0.2')).chain}`],
    untouched: [B.service, D.service, 'element'],
  },
  {
    name: 'a deleted service loses its elements and chains, nothing else moves',
    next: after([b, c, d]),
    lines: [
      `delete element ${T} cluster-ips { 172.30.0.41 }`,
      `delete element ${T} service-ips { 172.30.0.41 . tcp . 80 }`,
      `delete chain ${T} ${A.service}`,
      `delete chain ${T} ${epA(ep('10.180.0.1')).chain}`,
    ],
    untouched: [B.service, D.service, C.service, '172.30.0.42'],
  },
  {
    name: 'a service gaining endpoints moves from no-endpoint-services to service-ips',
    next: after([a, b, { ...c, clusterEndpoints: [ep('10.180.2.1')], hasAnyEndpoints: true }, d]),
    lines: [
      `delete element ${T} no-endpoint-services { 172.30.0.43 . tcp . 80 }`,
      `add chain ${T} ${C.service}`,
      `add element ${T} service-ips { 172.30.0.43 . tcp . 80 : goto ${C.service} }`,
    ],
    untouched: [A.service, B.service, D.service, 'cluster-ips'],
  },
  {
    name: 'a changed map value is deleted and added again',
    next: after([a, b, c, { ...d, internalPolicyLocal: true, localEndpoints: [] }]),
    lines: [`delete element ${T} service-ips { 172.30.0.44 . tcp . 80 }`, `add element ${T} no-endpoint-services { 172.30.0.44 . tcp . 80 : drop }`],
    untouched: [A.service, B.service],
  },
  {
    name: 'a new affinity timeout recreates the sets after their users are flushed',
    next: after([a, b, c, { ...d, sessionAffinityTimeoutSeconds: 120 }]),
    lines: [
      `flush chain ${T} ${D.service}`,
      `flush chain ${T} ${epD(ep('10.180.3.1')).chain}`,
      `delete set ${T} ${epD(ep('10.180.3.1')).affinitySet}`,
      `add set ${T} ${epD(ep('10.180.3.1')).affinitySet} { type ipv4_addr ; flags dynamic,timeout ; timeout 120s ; }`,
    ],
    untouched: [A.service, B.service, 'element'],
  },
  {
    name: 'dropping affinity deletes the sets',
    next: after([a, b, c, { ...d, sessionAffinityTimeoutSeconds: null }]),
    lines: [`delete set ${T} ${epD(ep('10.180.3.2')).affinitySet}`],
    untouched: [A.service, 'add set'],
  },
];

function dump(rs: ReturnType<typeof applyNft>): string[] {
  return dumpNft(rs, T);
}

describe('D.6.9 nftables update transactions', () => {
  const kernel = applyNft(new Map(), renderNftablesFull(before));
  for (const tc of cases) {
    it(tc.name, () => {
      const u = renderNftablesUpdate(before, tc.next);
      expect(u.fullSync).toBe(false);
      const lines = u.script.split('\n');
      for (const l of tc.lines) expect(lines).toContain(l);
      for (const name of tc.untouched) expect(lines.filter((l) => l.includes(name))).toEqual([]);
      expect(u.script).not.toContain('add table');
      expect(dump(applyNft(kernel, u.script))).toEqual(dump(applyNft(new Map(), renderNftablesFull(tc.next))));
    });
  }

  /** `ns/name` of every service whose ports differ between the states (what the agent's trackers report). */
  const changedBetween = (x: DpState, y: DpState): Set<string> => {
    const byName = (s: DpState) => new Map(s.servicePorts.map((sp) => [sp.servicePortName.split(':')[0] ?? '', JSON.stringify(sp)]));
    const [bx, by] = [byName(x), byName(y)];
    return new Set([...new Set([...bx.keys(), ...by.keys()])].filter((k) => bx.get(k) !== by.get(k)));
  };
  for (const tc of cases) {
    it(`given the changed services, renders the same transaction: ${tc.name}`, () => {
      const changed = changedBetween(before, tc.next);
      expect(changed.size).toBeGreaterThan(0);
      expect(renderNftablesUpdate(before, tc.next, { changedServicePorts: changed })).toEqual(renderNftablesUpdate(before, tc.next));
    });
  }

  it('given the changed services, looks at nothing else', () => {
    // c differs too but is not reported: a partial update leaves it as it was.
    const next = after([{ ...a, clusterEndpoints: [ep('10.180.0.1')] }, b, { ...c, clusterIP: '172.30.0.99' }, d]);
    const u = renderNftablesUpdate(before, next, { changedServicePorts: new Set(['ns1/a']) });
    expect(u.script).toContain(`flush chain ${T} ${A.service}`);
    for (const ip of ['172.30.0.43', '172.30.0.99']) expect(u.script).not.toContain(ip);
    expect(renderNftablesUpdate(before, next).script).toContain('172.30.0.99');
  });

  it('given the changed services, a change of the fixed part still renders the whole table', () => {
    const next = after([a, b, c, d], { nodeIPs: ['192.168.0.2'] });
    expect(renderNftablesUpdate(before, next, { changedServicePorts: new Set(['ns1/a']) })).toEqual(renderNftablesUpdate(before, next));
  });

  it('identical states need no transaction', () => {
    const u = renderNftablesUpdate(before, deepFreeze(dpState([d, c, b, a])));
    expect(u.script).toBe('');
    expect(u.counts).toEqual({ chainsAdded: 0, chainsRewritten: 0, chainsDeleted: 0, elementsAdded: 0, elementsDeleted: 0, setsAdded: 0, setsDeleted: 0 });
  });

  it('a change of the fixed part (node IPs) falls back to a full script', () => {
    const u = renderNftablesUpdate(before, after([a, b, c, d], { nodeIPs: ['192.168.0.2'] }));
    expect(u.fullSync).toBe(true);
    expect(u.script.startsWith(`add table ${T}\ndelete table ${T}\n`)).toBe(true);
    expect(u.script).toContain(`add element ${T} nodeport-ips { 192.168.0.2 }`);
  });

  it('deferred deletion only flushes stale chains; a later cleanup deletes them', () => {
    const next = after([{ ...a, clusterEndpoints: [ep('10.180.0.1')] }, b, c, d]);
    const u = renderNftablesUpdate(before, next, { deferChainDeletion: true });
    const stale = epA(ep('10.180.0.2')).chain;
    expect(u.staleChains).toEqual([stale]);
    expect(u.script).not.toContain('delete chain');
    const mid = applyNft(kernel, u.script);
    expect(dump(mid)).toContain(`chain ${stale}`);
    const done = applyNft(mid, renderNftablesChainCleanup(next, u.staleChains));
    expect(dump(done)).toEqual(dump(applyNft(new Map(), renderNftablesFull(next))));
  });

  it('reports what it touched', () => {
    const u = renderNftablesUpdate(before, after([{ ...a, clusterEndpoints: [ep('10.180.0.1'), ep('10.180.0.3')] }, b, c, d]));
    expect(u.counts).toEqual({ chainsAdded: 1, chainsRewritten: 1, chainsDeleted: 1, elementsAdded: 0, elementsDeleted: 0, setsAdded: 0, setsDeleted: 0 });
  });
});

describe('D.6 full scripts', () => {
  it('applying the full script twice leaves the same ruleset', () => {
    const once = applyNft(new Map(), renderNftablesFull(before));
    expect(dump(applyNft(once, renderNftablesFull(before)))).toEqual(dump(once));
  });
  it('a full script over an older table replaces it entirely', () => {
    const next = after([c]);
    const old = applyNft(new Map(), renderNftablesFull(before));
    expect(dump(applyNft(old, renderNftablesFull(next)))).toEqual(dump(applyNft(new Map(), renderNftablesFull(next))));
  });
  it('IPv6 uses its own table, ip6 matches and ipv6_addr keys', () => {
    const v6 = deepFreeze(dpState([svc('ns1/a:http', { clusterIP: 'fd00::41', endpoints: [ep('fd00:10::1')] })], { family: 'IPv6', podCIDR: 'fd00:10::/64' }));
    const script = renderNftablesFull(v6);
    expect(script).toContain('add table ip6 slicemesh');
    expect(script).toContain('type ipv6_addr . inet_proto . inet_service : verdict');
    expect(script).toContain('ip6 daddr fd00::41 tcp dport 80 ip6 saddr != fd00:10::/64 jump mark-for-masquerade');
    expect(script).toContain('endpoint-');
    expect(script).toContain('__fd00.10..1/80 meta l4proto tcp dnat to [fd00:10::1]:80');
    expect(script).toContain('add element ip6 slicemesh service-ips { fd00::41 . tcp . 80 : goto service-');
  });
});

describe('D.6.5 endpoint choice with per-endpoint numgen rules', () => {
  for (const n of [1, 2, 3, 4, 5]) {
    it(`n=${n}: rule i matches numgen random mod (n-i) == 0, the last is plain, every endpoint is reachable`, () => {
      const endpoints = Array.from({ length: n }, (_, i) => ep(`10.180.0.${i + 1}`));
      const state = deepFreeze(dpState([svc('ns1/a:http', { endpoints })]));
      const script = renderNftablesFull(state);
      const rules = script.split('\n').filter((l) => l.startsWith(`add rule ${T} ${A.service} `) && l.includes('goto endpoint-'));
      expect(rules.map((l) => /numgen random mod (\d+) == 0/.exec(l)?.[1] ?? 'plain')).toEqual([
        ...Array.from({ length: n - 1 }, (_, i) => String(n - i)),
        'plain',
      ]);
      expect(script).not.toContain('vmap {');
      const r = traceNftables(script, { sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80 }, { nodeIPs: [] });
      expect(r.endpoints).toEqual(endpoints.map((e) => `${e.ip}:80`));
    });
  }
});

describe('D.6.6 session affinity', () => {
  const state = deepFreeze(dpState([d]));
  const sets = [ep('10.180.3.1'), ep('10.180.3.2')].map((e) => epD(e).affinitySet);
  const pkt = { sourceIP: '10.0.0.2', destIP: '172.30.0.44', destPort: 80 };
  it('declares one timed dynamic set per endpoint', () => {
    expect(renderNftablesFull(state)).toContain(`add set ${T} ${sets[0]} { type ipv4_addr ; flags dynamic,timeout ; timeout 60s ; }`);
  });
  it('a new client is recorded in the set of the endpoint it lands on', () => {
    const r = traceNftables(renderNftablesFull(state), pkt, { nodeIPs: [] });
    expect(r.paths.map((p) => [p.endpoint, p.affinity])).toEqual([
      ['10.180.3.2:80', [sets[1]]],
      ['10.180.3.1:80', [sets[0]]],
    ]);
  });
  it('a known client goes straight to its endpoint', () => {
    const r = traceNftables(renderNftablesFull(state), pkt, { nodeIPs: [], affinityHits: [sets[1] ?? ''] });
    expect(r.endpoints).toEqual(['10.180.3.2:80']);
  });
});
