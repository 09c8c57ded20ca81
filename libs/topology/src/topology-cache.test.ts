import { describe, expect, it } from 'vitest';
import type { Node } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE as TM } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { reconcileHints } from './reconcile-hints.ts';
import { TopologyCache } from './topology-cache.ts';
import { ep, plan, zoneNodes } from './test-endpoints.ts';

/** Hints `name` with endpoints in the given zones through the real annotation path. */
function hint(cache: TopologyCache, name: string, zones: readonly string[], addressType: 'IPv4' | 'IPv6' = 'IPv4'): boolean {
  const endpoints = zones.map((z, i) => ep(addressType === 'IPv4' ? `10.0.0.${i}` : `fd00::${i + 1}`, { zone: z }));
  const service = deepFreeze(makeService(name, { annotations: { [TM]: 'Auto' } }));
  return reconcileHints({ service, addressType, plan: deepFreeze(plan({ create: [makeSlice('', endpoints, { addressType })] })), cache }).decision.enabled;
}

describe('TopologyCache overload re-check (C.4, A.12.5)', () => {
  const ab = ['zone-a', 'zone-a', 'zone-b', 'zone-b'];
  const cases: { name: string; before: Record<string, number>; services: Record<string, string[]>; after: Node[]; overloaded: string[]; reasons: RegExp[] }[] = [
    {
      name: 'C.4 nothing changed: nothing is overloaded',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab },
      after: zoneNodes({ 'zone-a': 1000, 'zone-b': 1000 }),
      overloaded: [],
      reasons: [],
    },
    {
      name: 'C.4 a new zone with CPU but no hinted endpoints overloads every hinted service',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab, api: ab },
      after: zoneNodes({ 'zone-a': 1000, 'zone-b': 1000, 'zone-c': 1000 }),
      overloaded: ['default/api', 'default/web'],
      reasons: [/zone zone-c now has CPU but no hinted endpoints/, /zone zone-c/],
    },
    {
      name: 'C.4 a CPU shift below ceil(total x ratio / 1.2) overloads (2 of 4 hinted, 90% share needs 3)',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab },
      after: zoneNodes({ 'zone-a': 9000, 'zone-b': 1000 }),
      overloaded: ['default/web'],
      reasons: [/zone zone-a has 2 hinted of 4 but its CPU share \(90%\) needs at least 3/],
    },
    {
      name: 'C.4 a small CPU shift within the threshold overloads nothing',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab },
      after: zoneNodes({ 'zone-a': 1100, 'zone-b': 900 }),
      overloaded: [],
      reasons: [],
    },
    {
      name: 'C.4 losing node information (a zoneless node) overloads every hinted service',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab },
      after: [...zoneNodes({ 'zone-a': 1000, 'zone-b': 1000 }), makeNode('stray')],
      overloaded: ['default/web'],
      reasons: [/no longer sufficient/],
    },
    {
      name: 'C.4 all nodes gone overloads every hinted service',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { web: ab },
      after: [],
      overloaded: ['default/web'],
      reasons: [/no longer sufficient/],
    },
    {
      name: 'C.4 services whose hints were refused are never requeued',
      before: { 'zone-a': 1000, 'zone-b': 1000 },
      services: { lonely: ['zone-a'] },
      after: [],
      overloaded: [],
      reasons: [],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = new TopologyCache();
      cache.setNodes(deepFreeze(zoneNodes(tc.before)));
      for (const [name, zones] of Object.entries(tc.services)) hint(cache, name, zones);
      cache.setNodes(deepFreeze(tc.after));
      expect(cache.overloadedServices()).toEqual(tc.overloaded);
      const reasons = cache.overloadedServicesWithReasons().map((o) => o.reason);
      expect(reasons).toHaveLength(tc.reasons.length);
      tc.reasons.forEach((re, i) => expect(reasons[i]).toMatch(re));
    });
  }

  it('C.4 a dual-stack service is listed once even when both families are overloaded', () => {
    const cache = new TopologyCache();
    cache.setNodes(deepFreeze(zoneNodes({ 'zone-a': 1000, 'zone-b': 1000 })));
    expect(hint(cache, 'web', ab, 'IPv4')).toBe(true);
    expect(hint(cache, 'web', ab, 'IPv6')).toBe(true);
    cache.setNodes([]);
    expect(cache.overloadedServices()).toEqual(['default/web']);
    expect(cache.overloadedServicesWithReasons().map((o) => o.addressType)).toEqual(['IPv4', 'IPv6']);
  });

  it('removeService forgets a deleted service entirely', () => {
    const cache = new TopologyCache();
    cache.setNodes(deepFreeze(zoneNodes({ 'zone-a': 1000, 'zone-b': 1000 })));
    hint(cache, 'web', ab);
    cache.removeService('default/web');
    cache.setNodes([]);
    expect(cache.overloadedServices()).toEqual([]);
    expect(cache.hasPopulatedHints('default/web')).toBe(false);
  });

  it('before any setNodes the distribution explains that no nodes were seen', () => {
    const cache = new TopologyCache();
    expect(cache.distribution).toEqual({ ratios: null, reason: 'no node information has reached the topology cache yet' });
    const got = cache.allocate(5);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.message).toBe('Nodes only ready in one zone');
  });

  it('setNodes returns the distribution it stored', () => {
    const cache = new TopologyCache();
    const d = cache.setNodes(deepFreeze(zoneNodes({ 'zone-a': 500, 'zone-b': 1500 })));
    expect(d.ratios).toEqual({ 'zone-a': 0.25, 'zone-b': 0.75 });
    expect(cache.distribution).toBe(d);
  });

  it('removeHints drops one address type and the populated mark for the service', () => {
    const cache = new TopologyCache();
    cache.setHints('ns/a', 'IPv4', new Map([['zone-a', 1]]));
    cache.setHints('ns/a', 'IPv6', new Map([['zone-a', 1]]));
    cache.removeHints('ns/a', 'IPv4');
    expect(cache.hintedCounts('ns/a', 'IPv4')).toBeUndefined();
    expect(cache.hintedCounts('ns/a', 'IPv6')).toEqual(new Map([['zone-a', 1]]));
    expect(cache.hasPopulatedHints('ns/a')).toBe(false);
  });
});
