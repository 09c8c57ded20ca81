// THE PROPERTY of zone views, on generated clusters: for every node, the proxy plan computed
// from its zone's view equals the plan computed from all slices (full entries, plus
// hasAnyEndpoints from the richer model).

import type { Endpoint, EndpointSlice, IPFamily, Node, Service, ServicePort } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice, prng } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { deepEqual } from './deep-equal.ts';
import { proxyModel } from './proxy-plan.ts';
import { viewSlicesForNode, zoneViews } from './zone-views.ts';


interface Gen {
  readonly rnd: () => number;
  int(lo: number, hi: number): number;
  pick<T>(xs: readonly T[]): T;
  chance(p: number): boolean;
}

function gen(seed: number): Gen {
  const rnd = prng(seed);
  return {
    rnd,
    int: (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(rnd() * xs.length)] as (typeof xs)[number],
    chance: (p) => rnd() < p,
  };
}

type HintMode = 'none' | 'zone' | 'zone-partial' | 'zone-multi' | 'node' | 'node-partial' | 'garbage';

interface Cluster {
  readonly nodes: Node[];
  readonly services: Service[];
  readonly slices: EndpointSlice[];
}

function genCluster(g: Gen, servicesCount: number): Cluster {
  const zones = ['zone-a', 'zone-b', 'zone-c', 'zone-d'].slice(0, g.int(1, 4));
  const nodes: Node[] = [];
  const nodeCount = g.int(2, 9);
  for (let i = 0; i < nodeCount; i++) {
    const zoneless = g.chance(0.15);
    nodes.push(makeNode(`node-${i}`, zoneless ? (g.chance(0.5) ? {} : { zone: '' }) : { zone: g.pick(zones) }));
  }
  const nodeNames = nodes.map((n) => n.metadata.name);
  const nodeZone = new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone'] ?? '']));
  const services: Service[] = [];
  const slices: EndpointSlice[] = [];

  for (let si = 0; si < servicesCount; si++) {
    const name = `svc-${si}`;
    const namespace = g.pick(['default', 'team-x']);
    const families: IPFamily[] = g.pick([['IPv4'], ['IPv6'], ['IPv4', 'IPv6'], ['IPv6', 'IPv4']] as IPFamily[][]);
    const type = g.pick(['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer', 'LoadBalancer', 'Headless', 'ExternalName'] as const);
    const clusterIPs = families.map((f) => (f === 'IPv4' ? `10.96.${si >> 8}.${si & 255}` : `fd00:96::${si.toString(16)}`));
    const portDefs: ServicePort[] = [];
    const portCount = g.int(1, 3);
    const portNames = portCount === 1 && g.chance(0.3) ? [''] : ['http', 'https', 'dns'].slice(0, portCount);
    for (const pn of portNames) {
      const withNodePort = type === 'NodePort' || (type === 'LoadBalancer' && g.chance(0.8));
      portDefs.push({
        name: pn,
        port: pn === 'https' ? 443 : pn === 'dns' ? 53 : 80,
        protocol: pn === 'dns' ? 'UDP' : 'TCP',
        ...(withNodePort ? { nodePort: g.int(30000, 32767) } : {}),
      });
    }
    const itp = g.pick([undefined, 'Cluster', 'Local', 'Local'] as const);
    const etp = g.pick([undefined, 'Cluster', 'Local', 'Local'] as const);
    const externalIPs = type === 'ClusterIP' && g.chance(0.2) ? [g.pick(['192.0.2.10', '2001:db8::10'])] : undefined;
    const ingress =
      type === 'LoadBalancer' && g.chance(0.6)
        ? [{ ip: g.pick(['198.51.100.7', '2001:db8::7']), ...(g.chance(0.3) ? { ipMode: g.pick(['VIP', 'Proxy'] as const) } : {}) }]
        : [];
    const base = makeService(name, {
      namespace,
      ipFamilies: families,
      ports: portDefs,
      spec: {
        type: type === 'Headless' ? 'ClusterIP' : type,
        clusterIP: type === 'Headless' ? 'None' : clusterIPs[0],
        clusterIPs: type === 'Headless' ? ['None'] : clusterIPs,
        ...(itp ? { internalTrafficPolicy: itp } : {}),
        ...(etp ? { externalTrafficPolicy: etp } : {}),
        ...(externalIPs ? { externalIPs } : {}),
        ...(type === 'ExternalName' ? { externalName: 'example.com' } : {}),
      },
    });
    const known = !g.chance(0.05); // a few slices whose Service is unknown
    if (known) services.push({ ...base, status: { loadBalancer: { ingress } } });

    const hintMode = g.pick(['none', 'zone', 'zone', 'zone-partial', 'zone-multi', 'node', 'node-partial', 'garbage'] as HintMode[]);
    for (const family of g.chance(0.1) ? (['IPv4', 'IPv6'] as IPFamily[]) : families) {
      const pool = g.int(1, 12);
      const ipOf = (k: number): string => (family === 'IPv4' ? `10.${si >> 8}.${si & 255}.${k}` : `fd00:${si.toString(16)}::${k.toString(16)}`);
      const sliceCount = g.int(1, 3);
      for (let s = 0; s < sliceCount; s++) {
        const ports = portDefs
          .filter(() => g.chance(0.9))
          .map((p) => ({ name: p.name ?? '', protocol: p.protocol ?? 'TCP', port: g.chance(0.85) ? 8000 + p.port : 9000 + p.port }));
        if (g.chance(0.1)) ports.push({ name: 'extra', protocol: 'TCP', port: 7777 });
        const endpoints: Endpoint[] = [];
        const epCount = g.int(0, 8);
        for (let e = 0; e < epCount; e++) {
          const nodeName = g.chance(0.85) ? g.pick(nodeNames) : g.chance(0.5) ? 'ghost-node' : undefined;
          const zone = nodeName ? nodeZone.get(nodeName) || undefined : undefined;
          const terminating = g.pick([undefined, false, true, true]);
          const ready = terminating ? g.pick([false, false, undefined]) : g.pick([true, true, false, undefined]);
          const conditions = {
            ...(ready !== undefined ? { ready } : {}),
            ...(g.chance(0.8) ? { serving: g.chance(0.7) } : {}),
            ...(terminating !== undefined ? { terminating } : {}),
          };
          const hint = (): Endpoint['hints'] => {
            const z = zone ?? g.pick(zones);
            switch (hintMode) {
              case 'none':
                return undefined;
              case 'zone':
                return { forZones: [{ name: z }] };
              case 'zone-partial':
                return g.chance(0.8) ? { forZones: [{ name: z }] } : undefined;
              case 'zone-multi':
                return { forZones: [{ name: z }, { name: g.pick(zones) }] };
              case 'node':
                return { forZones: [{ name: z }], ...(nodeName ? { forNodes: [{ name: nodeName }] } : {}) };
              case 'node-partial':
                return { forZones: [{ name: z }], ...(nodeName && g.chance(0.8) ? { forNodes: [{ name: nodeName }] } : {}) };
              case 'garbage':
                return g.chance(0.5) ? { forZones: [{ name: 'zone-nowhere' }], forNodes: [{ name: g.pick(nodeNames) }] } : undefined;
            }
          };
          const hints = hint();
          endpoints.push({
            addresses: [ipOf(g.int(1, pool))],
            conditions,
            ...(nodeName ? { nodeName } : {}),
            ...(zone ? { zone } : {}),
            ...(hints ? { hints } : {}),
          });
        }
        slices.push(makeSlice(`${name}-${family.toLowerCase()}-${s}`, endpoints, { namespace, service: name, addressType: family, ports }));
      }
    }
  }
  return deepFreeze({ nodes, services, slices });
}

describe('zone views preserve every node proxy plan', () => {
  const cases = [
    { name: 'F.11 gate on (node hints honoured): view plan equals full plan on every node', seeds: [1, 2, 3, 4, 5, 6, 7], gate: true },
    { name: 'C.6 gate off (node hints ignored): view plan equals full plan on every node', seeds: [11, 12, 13], gate: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      let services = 0;
      let compared = 0;
      for (const seed of tc.seeds) {
        const g = gen(seed);
        const cluster = genCluster(g, 400);
        services += cluster.services.length;
        const views = zoneViews({ ...cluster, preferSameNodeGate: tc.gate });
        for (const node of cluster.nodes) {
          const input = { services: cluster.services, nodes: cluster.nodes, nodeName: node.metadata.name, preferSameNodeGate: tc.gate };
          const full = proxyModel({ ...input, slices: cluster.slices });
          const viewed = proxyModel({ ...input, slices: viewSlicesForNode(views, node) });
          const strip = (m: typeof full) =>
            m.map((e) => ({
              key: e.key,
              family: e.servicePort.family,
              cluster: e.clusterEndpoints,
              local: e.localEndpoints,
              all: e.allReachableEndpoints,
              any: e.hasAnyEndpoints,
            }));
          const a = strip(full);
          const b = strip(viewed);
          if (!deepEqual(a, b)) {
            const i = a.findIndex((x, k) => !deepEqual(x, b[k]));
            expect({ seed, node: node.metadata.name, entry: b[i] }).toEqual({ seed, node: node.metadata.name, entry: a[i] });
          }
          compared += full.length;
        }
      }
      expect(services).toBeGreaterThan(350 * tc.seeds.length);
      expect(compared).toBeGreaterThan(0);
    });
  }
});
