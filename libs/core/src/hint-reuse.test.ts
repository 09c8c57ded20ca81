import { describe, expect, it } from 'vitest';
import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepEqual } from '@slicemesh/proxy-state';
import { deepFreeze, makeNode, makeService, makeSlice, prng } from '@slicemesh/testing';
import { TopologyCache } from '@slicemesh/topology';
import { hintService } from './hint-service.ts';
import { HintReuse } from './hint-reuse.ts';
import { autoService, ep, threeZoneNodes } from '@slicemesh/testing';

interface Gen {
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
}

function gen(seed: number): Gen {
  const rnd = prng(seed);
  return {
    int: (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(rnd() * xs.length)] as (typeof xs)[number],
    chance: (p) => rnd() < p,
  };
}

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const MODES = ['auto', 'auto', 'auto', 'PreferClose', 'PreferSameZone', 'PreferSameNode', 'none'] as const;

function serviceIn(mode: (typeof MODES)[number]): Service {
  if (mode === 'auto') return autoService();
  return makeService('web', mode === 'none' ? {} : { spec: { trafficDistribution: mode } });
}

function nodesOf(g: Gen): Node[] {
  // Unequal CPU per zone, so Auto moves endpoints between zones; now and then a node without a zone.
  return Array.from({ length: g.int(2, 6) }, (_, i) => makeNode(`n${i}`, { cpu: String(g.int(1, 8)), ...(g.chance(0.05) ? {} : { zone: g.pick(ZONES) }) }));
}

/** How often an endpoint lacks a zone or arrives with a zone hint (both send Auto down the plain path). */
let quirks = 0;

function endpoint(g: Gen, i: number, nodes: readonly Node[]): Endpoint {
  const node = g.pick(nodes).metadata.name;
  const zone = g.chance(quirks) ? undefined : g.pick(ZONES);
  const e = ep(`10.0.${i >> 8}.${i & 255}`, zone, node, { ready: g.chance(0.85), ...(g.chance(quirks) ? { forZones: [g.pick(ZONES)] } : {}) });
  return g.chance(0.05) ? ({ ...e, nodeName: undefined } as Endpoint) : e;
}

function slice(g: Gen, name: string, nodes: readonly Node[]): EndpointSlice {
  const eps = Array.from({ length: g.int(0, 12) }, () => endpoint(g, g.int(0, 4000), nodes));
  const managedBy = g.chance(0.05) ? MANAGED_BY_MIRRORING : undefined;
  return deepFreeze(makeSlice(name, eps, { addressType: g.chance(0.1) ? 'IPv6' : 'IPv4', ...(managedBy ? { managedBy } : {}) }));
}

describe('HintReuse', () => {
  it('gives what hintService gives (slices byte for byte, decisions, cache state) along random change sequences, reusing unchanged slices', () => {
    let reused = 0;
    let calls = 0;
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]) {
      const g = gen(seed);
      quirks = seed % 3 === 0 ? 0.03 : 0;
      let nodes = nodesOf(g);
      const plainCache = new TopologyCache();
      const reuseCache = new TopologyCache();
      plainCache.setNodes(nodes);
      reuseCache.setNodes(nodes);
      const reuse = new HintReuse();
      let mode = g.pick(MODES);
      let service = serviceIn(mode);
      const slices = new Map<string, EndpointSlice>();
      for (let i = 0; i < g.int(1, 8); i++) slices.set(`web-${i}`, slice(g, `web-${i}`, nodes));
      let previous: readonly EndpointSlice[] = [];
      for (let step = 0; step < 80; step++) {
        const r = g.int(0, 99);
        const names = [...slices.keys()];
        if (r < 60 && names.length > 0) {
          const name = g.pick(names);
          const s = slices.get(name) as EndpointSlice;
          const eps = [...s.endpoints];
          if (eps.length === 0 || g.chance(0.3)) eps.push(endpoint(g, g.int(0, 4000), nodes));
          else eps[g.int(0, eps.length - 1)] = endpoint(g, g.int(0, 4000), nodes);
          slices.set(name, deepFreeze({ ...s, endpoints: eps }));
        } else if (r < 70) {
          const name = `web-${g.int(0, 9)}`;
          slices.set(name, slice(g, name, nodes));
        } else if (r < 75 && names.length > 0) {
          slices.delete(g.pick(names));
        } else if (r < 85) {
          nodes = nodesOf(g);
          plainCache.setNodes(nodes);
          reuseCache.setNodes(nodes);
        } else if (r < 92) {
          mode = g.pick(MODES);
          service = serviceIn(mode);
        } else if (r < 96 && names.length > 0) {
          // A slice switches family: the other family may be left without slices.
          const s = slices.get(g.pick(names)) as EndpointSlice;
          slices.set(s.metadata.name, deepFreeze({ ...s, addressType: s.addressType === 'IPv4' ? 'IPv6' : 'IPv4' }));
        } else if (quirks > 0 && previous.length > 0) {
          // A slice arrives carrying the hints of an earlier result (whether Auto keeps it depends on the slices before it).
          const s = g.pick(previous);
          slices.set(s.metadata.name, s);
        }
        const input = [...slices.keys()].sort().map((n) => slices.get(n) as EndpointSlice);
        const gate = seed % 4 !== 0;
        const want = hintService({ service, slices: input, cache: plainCache, preferSameTrafficDistribution: gate });
        const got = reuse.hint({ service, slices: input, cache: reuseCache, preferSameTrafficDistribution: gate });
        const where = { seed, step, mode };
        expect({ ...where, slices: JSON.stringify(got.slices) }).toEqual({ ...where, slices: JSON.stringify(want.slices) });
        expect({ ...where, decisions: got.decisions }).toEqual({ ...where, decisions: want.decisions });
        for (const t of ['IPv4', 'IPv6'] as const) expect(deepEqual(reuseCache.hintedCounts('default/web', t), plainCache.hintedCounts('default/web', t))).toBe(true);
        expect(reuseCache.hasPopulatedHints('default/web')).toBe(plainCache.hasPopulatedHints('default/web'));
        for (const s of got.slices) if (previous.includes(s)) reused++;
        calls += got.slices.length;
        previous = got.slices;
      }
    }
    expect(reused).toBeGreaterThan(calls / 3);
  });

  const identity: { name: string; service: Service }[] = [
    { name: 'Auto', service: autoService() },
    { name: 'PreferClose', service: makeService('web', { spec: { trafficDistribution: 'PreferClose' } }) },
    { name: 'PreferSameNode', service: makeService('web', { spec: { trafficDistribution: 'PreferSameNode' } }) },
  ];
  for (const tc of identity) {
    it(`${tc.name}: a slice whose bare object did not change comes back as the same hinted object`, () => {
      const cache = new TopologyCache();
      cache.setNodes(threeZoneNodes());
      const reuse = new HintReuse();
      const a = makeSlice('web-a', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.3', 'zone-c', 'n-c')]);
      const b1 = makeSlice('web-b', [ep('10.0.1.1', 'zone-a', 'n-a'), ep('10.0.1.2', 'zone-b', 'n-b'), ep('10.0.1.3', 'zone-c', 'n-c')]);
      const b2 = makeSlice('web-b', [ep('10.0.1.1', 'zone-a', 'n-a'), ep('10.0.1.2', 'zone-b', 'n-b'), ep('10.0.1.4', 'zone-c', 'n-c')]);
      const first = reuse.hint({ service: tc.service, slices: [a, b1], cache, preferSameTrafficDistribution: true });
      const second = reuse.hint({ service: tc.service, slices: [a, b2], cache, preferSameTrafficDistribution: true });
      expect(second.slices[0]).toBe(first.slices[0]);
      expect(second.slices[1]).not.toBe(first.slices[1]);
      expect(second.slices[0]?.endpoints.every((e) => e.hints?.forZones?.length === 1)).toBe(true);
    });
  }

  it('on the plain path (slices that arrive with zone hints), an unchanged slice also comes back as the same object', () => {
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    const reuse = new HintReuse();
    const hinted = (ip: string, zone: string) => ep(ip, zone, `n-${zone.slice(-1)}`, { forZones: [zone === 'zone-a' ? 'zone-b' : zone] });
    const a = makeSlice('web-a', [hinted('10.0.0.1', 'zone-a'), hinted('10.0.0.2', 'zone-b'), hinted('10.0.0.3', 'zone-c')]);
    const b1 = makeSlice('web-b', [hinted('10.0.1.1', 'zone-a'), hinted('10.0.1.2', 'zone-b')]);
    const b2 = makeSlice('web-b', [hinted('10.0.1.1', 'zone-a'), hinted('10.0.1.3', 'zone-b')]);
    const first = reuse.hint({ service: autoService(), slices: [a, b1], cache, preferSameTrafficDistribution: true });
    const second = reuse.hint({ service: autoService(), slices: [a, b2], cache, preferSameTrafficDistribution: true });
    expect(first.slices[0]).not.toBe(a); // rewritten: a wrong zone hint
    expect(second.slices[0]).toBe(first.slices[0]);
  });
});
