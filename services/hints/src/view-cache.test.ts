import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { ep, threeZoneNodes } from './test-fixtures.ts';
import { ServiceViewsCache } from './view-cache.ts';
import { desiredViews } from './view-plan.ts';

const close = makeService('web', { spec: { trafficDistribution: 'PreferClose' } });
const hinted = (ip: string, zone: string) => ep(ip, zone, `n-${zone.slice(-1)}`, { forZones: [zone] });
const a1 = makeSlice('web-a', [hinted('10.0.0.1', 'zone-a'), hinted('10.0.0.2', 'zone-b')]);
const b1 = makeSlice('web-b', [hinted('10.0.1.1', 'zone-c'), hinted('10.0.1.2', 'zone-a')]);
const b2 = makeSlice('web-b', [hinted('10.0.1.1', 'zone-c'), hinted('10.0.1.3', 'zone-b')]);

interface Step {
  readonly what: string;
  readonly service: Service;
  readonly slices: readonly EndpointSlice[];
  readonly nodes: readonly Node[];
}

const nodes = threeZoneNodes();
const moved = [makeNode('n-a', { zone: 'zone-a' }), makeNode('n-b', { zone: 'zone-b' }), makeNode('n-c', { zone: 'zone-a' })];
const steps: Step[] = [
  { what: 'first computation', service: close, slices: [a1, b1], nodes },
  { what: 'one slice changed', service: close, slices: [a1, b2], nodes },
  { what: 'a slice gone', service: close, slices: [b2], nodes },
  { what: 'a node changed zone', service: close, slices: [a1, b2], nodes: moved },
  { what: 'the Service changed', service: makeService('web', { spec: { internalTrafficPolicy: 'Local' } }), slices: [a1, b2], nodes: moved },
];

describe('ServiceViewsCache', () => {
  it('gives what desiredViews gives at every step of a change sequence', () => {
    const cache = new ServiceViewsCache();
    for (const s of steps) {
      const input = { cluster: 'c1', service: s.service, slices: s.slices, nodes: s.nodes, preferSameNodeGate: true };
      const got = cache.desiredViews('default/web', input);
      const want = desiredViews(input);
      expect({ what: s.what, keys: [...got.keys()].sort() }).toEqual({ what: s.what, keys: [...want.keys()].sort() });
      for (const [k, v] of want) expect({ what: s.what, k, text: got.get(k)?.text, digest: got.get(k)?.digest }).toEqual({ what: s.what, k, text: v.text, digest: v.digest });
    }
  });

  it("an unchanged slice's entries keep their value objects (serialised once); the changed slice's are new", () => {
    const cache = new ServiceViewsCache();
    const input = (slices: EndpointSlice[]) => ({ cluster: 'c1', service: close, slices, nodes, preferSameNodeGate: true });
    const before = cache.desiredViews('default/web', input([a1, b1]));
    const after = cache.desiredViews('default/web', input([a1, b2]));
    const same = [...after].filter(([k, v]) => before.get(k) === v).map(([k]) => k.split('.').pop());
    const fresh = [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k.split('.').pop());
    expect(new Set(same)).toEqual(new Set(['web-a']));
    expect(new Set(fresh)).toEqual(new Set(['web-b']));
  });

  it.each([
    { what: 'every endpoint ready', endpoints: [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b')], values: 1 },
    // The zones keep the ready endpoints only, the unfiltered view keeps both: two values.
    { what: 'one endpoint not ready', endpoints: [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b', { ready: false })], values: 2 },
  ])("a service without hints, $what: the zones' views of a slice are one value, serialised once", ({ endpoints, values }) => {
    const plain = makeService('web');
    const slice = makeSlice('web-a', endpoints);
    const input = { cluster: 'c1', service: plain, slices: [slice], nodes, preferSameNodeGate: true };
    const got = new ServiceViewsCache().desiredViews('default/web', input);
    const zoneOf = (k: string) => k.split('.')[1];
    expect([...got.keys()].map(zoneOf).sort()).toEqual(['_', 'zone-a', 'zone-b', 'zone-c']);
    expect(new Set([...got].filter(([k]) => zoneOf(k) !== '_').map(([, v]) => v)).size).toBe(1);
    expect(new Set(got.values()).size).toBe(values);
    const want = desiredViews(input);
    for (const [k, v] of want) expect({ k, text: got.get(k)?.text }).toEqual({ k, text: v.text });
  });

  it('spec values are made once per Service object', () => {
    const cache = new ServiceViewsCache();
    expect(cache.spec(close)).toBe(cache.spec(close));
    expect(cache.spec(close).text).toBe(JSON.stringify(close));
  });
});
