// THE PROPERTY of incremental zone views: along random sequences of slice changes, node zone
// changes and service changes, updateZoneViews (fed its previous state) gives exactly
// zoneViews() of the same input, and reuses the entry objects of what did not change.

import type { Endpoint, EndpointSlice, IPFamily, Node, Service, ServicePort } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice, prng } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { deepEqual } from './deep-equal.ts';
import type { ZoneViews, ZoneViewsState } from './zone-views.ts';
import { updateZoneViews, zoneViews } from './zone-views.ts';

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

type HintMode = 'zone' | 'node' | 'partial' | 'none' | 'garbage';

interface SvcPlan {
  readonly name: string;
  readonly families: readonly IPFamily[];
  readonly ports: readonly ServicePort[];
  hints: HintMode;
  service: Service;
  /** IP pool size: small pools make copies of one address across slices. */
  readonly pool: number;
}

interface World {
  zones: string[];
  nodes: Node[];
  services: SvcPlan[];
  slices: Map<string, EndpointSlice>;
  gate: boolean;
}

const ZONES = ['zone-a', 'zone-b', 'zone-c', 'zone-d'];

function nodeZone(w: World, name: string | undefined): string | undefined {
  const n = w.nodes.find((x) => x.metadata.name === name);
  return n?.metadata.labels?.['topology.kubernetes.io/zone'] || undefined;
}

function serviceOf(g: Gen, name: string, families: readonly IPFamily[], ports: readonly ServicePort[]): Service {
  const type = g.pick(['ClusterIP', 'ClusterIP', 'ClusterIP', 'NodePort', 'Headless'] as const);
  const itp = g.pick([undefined, 'Cluster', 'Local'] as const);
  const etp = g.pick([undefined, 'Local'] as const);
  return deepFreeze(makeService(name, {
    ipFamilies: families,
    ports: ports.map((p) => ({ ...p, ...(type === 'NodePort' ? { nodePort: 30000 + p.port } : {}) })),
    spec: {
      type: type === 'Headless' ? 'ClusterIP' : type,
      clusterIP: type === 'Headless' ? 'None' : families[0] === 'IPv4' ? '10.96.0.1' : 'fd00:96::1',
      clusterIPs: type === 'Headless' ? ['None'] : families.map((f) => (f === 'IPv4' ? '10.96.0.1' : 'fd00:96::1')),
      ...(itp ? { internalTrafficPolicy: itp } : {}),
      ...(etp && type === 'NodePort' ? { externalTrafficPolicy: etp } : {}),
    },
  }));
}

function endpoint(g: Gen, w: World, p: SvcPlan, family: IPFamily): Endpoint {
  const k = g.int(1, p.pool);
  const ip = family === 'IPv4' ? `10.1.${p.name.length}.${k}` : `fd00:1::${k.toString(16)}`;
  const nodeName = g.chance(0.9) ? g.pick(w.nodes).metadata.name : g.chance(0.5) ? 'ghost' : undefined;
  const zone = nodeZone(w, nodeName);
  const terminating = g.chance(0.15);
  const ready = terminating ? false : g.chance(0.85);
  const own = zone ?? g.pick(w.zones);
  const hints = ((): Endpoint['hints'] => {
    switch (p.hints) {
      case 'zone':
        return { forZones: [{ name: own }] };
      case 'node':
        return { forZones: [{ name: own }], ...(nodeName ? { forNodes: [{ name: nodeName }] } : {}) };
      case 'partial':
        return g.chance(0.9) ? { forZones: [{ name: own }] } : undefined;
      case 'none':
        return undefined;
      case 'garbage':
        return g.chance(0.5) ? { forZones: [{ name: 'zone-nowhere' }] } : undefined;
    }
  })();
  return {
    addresses: [ip],
    conditions: { ready, serving: ready || g.chance(0.5), terminating },
    ...(nodeName ? { nodeName } : {}),
    ...(zone ? { zone } : {}),
    ...(hints ? { hints } : {}),
  };
}

function newSlice(g: Gen, w: World, p: SvcPlan, family: IPFamily, name: string): EndpointSlice {
  const ports = p.ports.filter(() => g.chance(0.95)).map((sp) => ({ name: sp.name ?? '', protocol: sp.protocol ?? 'TCP', port: 8000 + sp.port }));
  const endpoints = Array.from({ length: g.int(0, 7) }, () => endpoint(g, w, p, family));
  return deepFreeze(makeSlice(name, endpoints, { service: p.name, addressType: family, ports }));
}

function genWorld(g: Gen): World {
  const zones = ZONES.slice(0, g.int(2, 4));
  const nodes = Array.from({ length: g.int(3, 8) }, (_, i) => makeNode(`node-${i}`, g.chance(0.1) ? {} : { zone: g.pick(zones) }));
  const w: World = { zones, nodes: deepFreeze(nodes), services: [], slices: new Map(), gate: g.chance(0.8) };
  for (let s = 0; s < g.int(1, 3); s++) {
    const families = g.pick([['IPv4'], ['IPv6'], ['IPv4', 'IPv6']] as IPFamily[][]);
    const ports: ServicePort[] = [{ name: 'http', port: 80, protocol: 'TCP' }, ...(g.chance(0.3) ? [{ name: 'dns', port: 53, protocol: 'UDP' as const }] : [])];
    const name = `svc${s}`;
    const plan: SvcPlan = { name, families, ports, hints: g.pick(['zone', 'zone', 'node', 'partial', 'none', 'garbage'] as HintMode[]), service: serviceOf(g, name, families, ports), pool: g.chance(0.2) ? 6 : 200 };
    w.services.push(plan);
    for (const f of families) for (let i = 0; i < g.int(1, 5); i++) w.slices.set(`${name}-${f}-${i}`, newSlice(g, w, plan, f, `${name}-${f}-${i}`));
  }
  return w;
}

type Step = 'endpoint' | 'add-endpoint' | 'drop-endpoint' | 'copy' | 'add-slice' | 'delete-slice' | 'node-zone' | 'service' | 'hint-mode' | 'gate';

/** Applies one random change; returns what it was. */
function mutate(g: Gen, w: World): Step {
  const step = g.pick<Step>(['endpoint', 'endpoint', 'endpoint', 'endpoint', 'endpoint', 'add-endpoint', 'drop-endpoint', 'copy', 'add-slice', 'delete-slice', 'node-zone', 'service', 'hint-mode', 'gate']);
  const names = [...w.slices.keys()];
  const name = names.length > 0 ? g.pick(names) : undefined;
  const slice = name === undefined ? undefined : w.slices.get(name);
  const plan = (s: EndpointSlice) => w.services.find((p) => p.name === s.metadata.labels?.['kubernetes.io/service-name']) as SvcPlan;
  const put = (s: EndpointSlice) => w.slices.set(s.metadata.name, deepFreeze(s));
  switch (step) {
    case 'endpoint':
    case 'add-endpoint':
    case 'drop-endpoint': {
      if (!slice) return step;
      const eps = [...slice.endpoints];
      const fresh = endpoint(g, w, plan(slice), slice.addressType as IPFamily);
      if (step === 'add-endpoint' || eps.length === 0) eps.push(fresh);
      else if (step === 'drop-endpoint') eps.splice(g.int(0, eps.length - 1), 1);
      else {
        const i = g.int(0, eps.length - 1);
        const old = eps[i] as Endpoint;
        // Mostly a condition flip on the same address, sometimes a new endpoint in its place.
        eps[i] = g.chance(0.7) ? { ...old, conditions: { ...old.conditions, ready: !old.conditions.ready } } : fresh;
      }
      put({ ...slice, endpoints: eps });
      return step;
    }
    case 'copy':
      if (slice) put(structuredClone(slice));
      return step;
    case 'add-slice': {
      const p = g.pick(w.services);
      const f = g.pick(p.families);
      const n = `${p.name}-${f}-${g.int(5, 9)}`;
      w.slices.set(n, newSlice(g, w, p, f, n));
      return step;
    }
    case 'delete-slice':
      if (name !== undefined) w.slices.delete(name);
      return step;
    case 'node-zone': {
      const i = g.int(0, w.nodes.length - 1);
      const nodes = [...w.nodes];
      nodes[i] = makeNode(`node-${i}`, g.chance(0.15) ? {} : { zone: g.pick(w.zones) });
      w.nodes = deepFreeze(nodes);
      return step;
    }
    case 'service': {
      const p = g.pick(w.services);
      // Half the time an equal copy: a new object with nothing changed.
      p.service = g.chance(0.5) ? deepFreeze(structuredClone(p.service)) : serviceOf(g, p.name, p.families, p.ports);
      return step;
    }
    case 'hint-mode':
      g.pick(w.services).hints = g.pick(['zone', 'node', 'partial', 'none', 'garbage'] as HintMode[]);
      return step;
    case 'gate':
      w.gate = !w.gate;
      return step;
  }
}

function differences(got: ZoneViews, want: ZoneViews): string | null {
  if (!deepEqual(got.zones, want.zones)) return `zones ${JSON.stringify(got.zones)} != ${JSON.stringify(want.zones)}`;
  const gk = [...got.entries.keys()];
  const wk = [...want.entries.keys()];
  if (!deepEqual(gk, wk)) return `entry keys differ: got ${gk.filter((k) => !want.entries.has(k)).join(' ')} missing ${wk.filter((k) => !got.entries.has(k)).join(' ')}`;
  for (const k of wk) if (!deepEqual(got.entries.get(k), want.entries.get(k))) return `entry ${k} differs`;
  for (const z of want.zones) {
    if (!deepEqual(got.byZone.get(z)?.map((e) => e.sliceName), want.byZone.get(z)?.map((e) => e.sliceName))) return `byZone ${z} differs`;
  }
  return null;
}

describe('updateZoneViews equals zoneViews along change sequences', () => {
  const cases = [
    { name: 'mixed hint modes, policies, copies across slices, node and service changes', seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] },
    { name: 'the same on more seeds', seeds: [101, 102, 103, 104, 105, 106, 107, 108] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      let incremental = 0;
      let reused = 0;
      for (const seed of tc.seeds) {
        const g = gen(seed);
        const w = genWorld(g);
        let state: ZoneViewsState | undefined;
        let before: ZoneViews | undefined;
        for (let step = 0; step < 120; step++) {
          const what = step === 0 ? 'start' : mutate(g, w);
          const input = { services: w.services.map((p) => p.service), slices: [...w.slices.values()], nodes: w.nodes, preferSameNodeGate: w.gate };
          const got = updateZoneViews(state, input);
          const diff = differences(got.views, zoneViews(input));
          expect(got.entries.length, `seed ${seed} step ${step}`).toBe(got.views.entries.size);
          expect(new Set(got.entries), `seed ${seed} step ${step}`).toEqual(new Set(got.views.entries.values()));
          if (diff !== null) expect({ seed, step, what, diff }).toEqual({ seed, step, what, diff: null });
          if (got.fullSelections === 0 && got.recomputedSlices < w.slices.size) incremental++;
          if (before) for (const [k, e] of got.views.entries) if (before.entries.get(k) === e) reused++;
          state = got.state;
          before = got.views;
        }
      }
      // Not vacuous: most steps took the incremental path and kept most entry objects.
      expect(incremental).toBeGreaterThan(tc.seeds.length * 40);
      expect(reused).toBeGreaterThan(tc.seeds.length * 200);
    });
  }

  it('a state is used up by the call it is passed to', () => {
    const input = { services: [makeService('web')], slices: [makeSlice('web-1', [])], nodes: [makeNode('n1', { zone: 'zone-a' })] };
    const first = updateZoneViews(undefined, input);
    updateZoneViews(first.state, input);
    expect(() => updateZoneViews(first.state, input)).toThrow(/already passed/);
  });
});
