import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { REASON_HINTS_DISABLED, REASON_HINTS_ENABLED, TopologyCache } from '@slicemesh/topology';
import { hintService } from './hint-service.ts';
import { autoService, ep, threeZoneNodes, threeZoneSlice } from '@slicemesh/testing';

function zonesOf(slices: readonly EndpointSlice[]): (string[] | undefined)[] {
  return slices.flatMap((s) => s.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name)));
}

interface Case {
  readonly name: string;
  readonly service: Service;
  readonly slices: readonly EndpointSlice[];
  readonly nodes?: readonly Node[];
  readonly gate?: boolean;
  readonly want: {
    readonly decisions: readonly { addressType: string; enabled: boolean; mode: string; event: string | null; message?: RegExp; reason?: RegExp }[];
    readonly zones: readonly (string[] | undefined)[];
  };
}

const hinted = makeSlice('web-h', [ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] })]);

const cases: Case[] = [
  {
    name: 'C.3 Auto with three equal zones hints every endpoint for its own zone and records TopologyAwareHintsEnabled',
    service: autoService(),
    slices: [threeZoneSlice()],
    want: {
      decisions: [{ addressType: 'IPv4', enabled: true, mode: 'Auto', event: REASON_HINTS_ENABLED }],
      zones: [['zone-a'], ['zone-b'], ['zone-c']],
    },
  },
  {
    name: 'C.3.1 Auto refuses with "Insufficient Node information" when a node lacks a zone',
    service: autoService(),
    slices: [threeZoneSlice()],
    nodes: [...threeZoneNodes(), makeNode('n-x')],
    want: {
      decisions: [{ addressType: 'IPv4', enabled: false, mode: 'Auto', event: REASON_HINTS_DISABLED, message: /^Insufficient Node information.*addressType: IPv4$/ }],
      zones: [undefined, undefined, undefined],
    },
  },
  {
    name: 'C.3.1 Auto refuses when there are more zones than endpoints',
    service: autoService(),
    slices: [makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b')])],
    want: {
      decisions: [{ addressType: 'IPv4', enabled: false, mode: 'Auto', event: REASON_HINTS_DISABLED, message: /Insufficient number of endpoints \(2 endpoints, 3 zones\)/ }],
      zones: [undefined, undefined],
    },
  },
  {
    name: "C.2.3 without annotation or trafficDistribution the slicer's hints are stripped",
    service: makeService('web'),
    slices: [hinted],
    want: { decisions: [{ addressType: 'IPv4', enabled: false, mode: 'None', event: null, reason: /nothing asked for hints/ }], zones: [undefined, undefined] },
  },
  {
    name: 'C.5.1 PreferClose hints each ready endpoint for its own zone, with no event',
    service: makeService('web', { spec: { trafficDistribution: 'PreferClose' } }),
    slices: [makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b', { ready: false })])],
    want: { decisions: [{ addressType: 'IPv4', enabled: true, mode: 'PreferClose', event: null }], zones: [['zone-a'], undefined] },
  },
  {
    name: 'C.2.2 PreferSameZone with the gate off counts as unset',
    service: makeService('web', { spec: { trafficDistribution: 'PreferSameZone' } }),
    slices: [hinted],
    gate: false,
    want: { decisions: [{ addressType: 'IPv4', enabled: false, mode: 'None', event: null, reason: /feature gate/ }], zones: [undefined, undefined] },
  },
  {
    name: 'mirrored slices are left untouched and the decision says another controller manages them',
    service: autoService(),
    slices: [makeSlice('web-m', hinted.endpoints, { managedBy: MANAGED_BY_MIRRORING })],
    want: { decisions: [{ addressType: 'IPv4', enabled: false, mode: 'Auto', event: null, reason: /managed by another controller/ }], zones: [['zone-a'], ['zone-b']] },
  },
  {
    name: 'A.1.2 a Service without a selector is not synced: its slices keep their hints, the decision says why, no event',
    service: { ...autoService(), spec: { ...autoService().spec, selector: {} } },
    slices: [hinted],
    want: { decisions: [{ addressType: 'IPv4', enabled: false, mode: 'Auto', event: null, reason: /does not sync Service default\/web \(it has no selector\)/ }], zones: [['zone-a'], ['zone-b']] },
  },
  {
    name: 'A.1.2 an ExternalName Service is not synced, even with trafficDistribution: its slices pass through unchanged',
    service: makeService('web', { spec: { type: 'ExternalName', externalName: 'db.example.com', trafficDistribution: 'PreferClose' } }),
    slices: [makeSlice('web-1', [ep('10.0.0.1', 'zone-a', 'n-a')])],
    want: { decisions: [{ addressType: 'IPv4', enabled: false, mode: 'PreferClose', event: null, reason: /ExternalName/ }], zones: [undefined] },
  },
  {
    name: 'C.5 PreferClose stays enabled when no ready endpoint knows its zone: enabled follows the spec, the reason says why none got hints',
    service: makeService('web', { spec: { trafficDistribution: 'PreferClose' } }),
    slices: [makeSlice('web-1', [ep('10.0.0.1', undefined, 'n-a'), ep('10.0.0.2', undefined, 'n-b')])],
    want: { decisions: [{ addressType: 'IPv4', enabled: true, mode: 'PreferClose', event: null, reason: /none of the 2 ready endpoints knows their own zone/ }], zones: [undefined, undefined] },
  },
  {
    name: 'FQDN slices pass through and get no decision',
    service: autoService(),
    slices: [makeSlice('web-f', [{ addresses: ['a.example.com'], conditions: { ready: true } }], { addressType: 'FQDN' })],
    want: { decisions: [], zones: [undefined] },
  },
  {
    name: 'no slices give no decisions',
    service: autoService(),
    slices: [],
    want: { decisions: [], zones: [] },
  },
];

describe('hintService', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = new TopologyCache();
      cache.setNodes(deepFreeze(tc.nodes ?? threeZoneNodes()));
      const out = hintService({ service: deepFreeze(tc.service), slices: deepFreeze(tc.slices), cache, preferSameTrafficDistribution: tc.gate ?? true });
      expect(out.slices.map((s) => s.metadata.name)).toEqual(tc.slices.map((s) => s.metadata.name));
      expect(zonesOf(out.slices)).toEqual(tc.want.zones);
      expect(out.decisions).toHaveLength(tc.want.decisions.length);
      tc.want.decisions.forEach((w, i) => {
        const d = out.decisions[i];
        expect({ addressType: d?.addressType, enabled: d?.enabled, mode: d?.mode, event: d?.event?.reason ?? null }).toEqual({
          addressType: w.addressType,
          enabled: w.enabled,
          mode: w.mode,
          event: w.event,
        });
        if (w.message) expect(d?.event?.message).toMatch(w.message);
        if (w.reason) expect(d?.reason).toMatch(w.reason);
      });
    });
  }

  it('C.3.7 records TopologyAwareHintsEnabled only the first time, and C.2.3 TopologyAwareHintsDisabled when the service leaves Auto', () => {
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    const slices = deepFreeze([threeZoneSlice()]);
    const run = (service: Service) => hintService({ service, slices, cache, preferSameTrafficDistribution: true }).decisions[0]?.event;
    expect(run(autoService())?.reason).toBe(REASON_HINTS_ENABLED);
    expect(run(autoService())).toBeNull();
    expect(run(makeService('web'))).toEqual({ type: 'Warning', reason: REASON_HINTS_DISABLED, message: 'Topology Aware Hints has been disabled, addressType: IPv4' });
    expect(cache.hasPopulatedHints('default/web')).toBe(false);
  });

  it('C.4 an address type whose slices are gone stops taking part in overload re-checks', () => {
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    hintService({ service: autoService(), slices: [threeZoneSlice()], cache, preferSameTrafficDistribution: true });
    expect(cache.hintedCounts('default/web', 'IPv4')).toBeDefined();
    hintService({ service: autoService(), slices: [], cache, preferSameTrafficDistribution: true });
    expect(cache.hintedCounts('default/web', 'IPv4')).toBeUndefined();
    cache.setNodes(threeZoneNodes().slice(0, 2));
    expect(cache.overloadedServices()).toEqual([]);
  });

  it('never mutates its inputs and returns new objects only for rewritten slices', () => {
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    const untouched = deepFreeze(makeSlice('web-m', [ep('10.0.0.9', 'zone-a', 'n-a')], { managedBy: MANAGED_BY_MIRRORING }));
    const rewritten = deepFreeze(threeZoneSlice());
    const out = hintService({ service: deepFreeze(autoService()), slices: [rewritten, untouched], cache, preferSameTrafficDistribution: true });
    expect(out.slices[0]).not.toBe(rewritten);
    expect(out.slices[1]).toBe(untouched);
  });

  it('keeps decisions per address type in IPv4, IPv6 order', () => {
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    const v6 = makeSlice('web-6', [{ addresses: ['fd00::1'], conditions: { ready: true }, zone: 'zone-a', nodeName: 'n-a' }], { addressType: 'IPv6' });
    const svc = makeService('web', { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' }, ipFamilies: ['IPv6', 'IPv4'] });
    const out = hintService({ service: svc, slices: deepFreeze([v6, threeZoneSlice()]), cache, preferSameTrafficDistribution: true });
    expect(out.decisions.map((d) => [d.addressType, d.enabled])).toEqual([['IPv4', true], ['IPv6', false]]);
  });
});
