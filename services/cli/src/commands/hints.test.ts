import { describe, expect, it } from 'vitest';
import type { EndpointSlice, KubeObject } from '@slicemesh/model';
import { deepFreeze, ep, makeService, makeSlice, threeZoneNodes } from '@slicemesh/testing';
import { hintsCommand } from './hints.ts';

interface Out {
  readonly slices: EndpointSlice[];
  readonly decisions: { service: string; enabled: boolean; event: unknown; reason: string }[];
}

const hintedSlice = makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-b'] }), ep('10.0.0.2', 'zone-b', 'n-b')]);
const zones = (o: Out): (string[] | undefined)[] => o.slices.flatMap((s) => s.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name)));

const cases: { name: string; objects: KubeObject[]; enabled: boolean; reason: RegExp; zones: (string[] | undefined)[] }[] = [
  {
    name: 'A.1.2 a Service without a selector keeps its slices as they are, and the decision says the controller does not sync it',
    objects: [...threeZoneNodes(), makeService('web', { selector: null, spec: { trafficDistribution: 'PreferClose' } }), hintedSlice],
    enabled: false,
    reason: /does not sync Service default\/web \(it has no selector\)/,
    zones: [['zone-b'], undefined],
  },
  {
    name: 'A.1.2 the same slices of a Service with a selector get the hints its mode asks for',
    objects: [...threeZoneNodes(), makeService('web', { spec: { trafficDistribution: 'PreferClose' } }), hintedSlice],
    enabled: true,
    reason: /2 ready endpoints hinted for their own zone/,
    zones: [['zone-a'], ['zone-b']],
  },
  {
    name: 'C.5 PreferClose is reported enabled even when no ready endpoint has a zone, with the reason',
    objects: [...threeZoneNodes(), makeService('web', { spec: { trafficDistribution: 'PreferClose' } }), makeSlice('web-1', [ep('10.0.0.1', undefined, 'n-a')])],
    enabled: true,
    reason: /none of the 1 ready endpoint knows their own zone/,
    zones: [undefined],
  },
];

describe('slicemesh hints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const out = hintsCommand(deepFreeze(tc.objects)) as Out;
      expect(out.decisions).toHaveLength(1);
      expect(out.decisions[0]).toMatchObject({ service: 'default/web', enabled: tc.enabled, event: null });
      expect(out.decisions[0]?.reason).toMatch(tc.reason);
      expect(zones(out)).toEqual(tc.zones);
    });
  }
});
