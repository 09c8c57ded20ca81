import { describe, expect, it } from 'vitest';
import type { KubeEvent, Service, SlicePlan } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE as TM } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import type { HintsMode } from './hints-mode.ts';
import { reconcileHints } from './reconcile-hints.ts';
import { TopologyCache } from './topology-cache.ts';
import { needsTrafficHintsUpdate, wantedHints } from './traffic-distribution.ts';
import { ep, hintsOf, plan, zoneNodes } from './test-endpoints.ts';

function svc(td?: string, annotations?: Record<string, string>): Service {
  return makeService('web', { ...(annotations ? { annotations } : {}), ...(td !== undefined ? { spec: { trafficDistribution: td } } : {}) });
}

function view(p: SlicePlan): { create: string[][]; update: string[][]; unchanged: string[][] } {
  return { create: p.create.map(hintsOf), update: p.update.map(hintsOf), unchanged: p.unchanged.map(hintsOf) };
}

function freshCache(): TopologyCache {
  const cache = new TopologyCache();
  cache.setNodes(deepFreeze(zoneNodes({ 'zone-a': 500, 'zone-b': 500, 'zone-c': 500 })));
  return cache;
}

describe('reconcileHints, trafficDistribution and None paths (C.5, C.2.3; upstream trafficdist_test)', () => {
  const cases: {
    name: string;
    service: Service;
    gate?: boolean;
    plan: SlicePlan;
    mode: HintsMode;
    enabled: boolean;
    want: ReturnType<typeof view>;
    reason: RegExp;
  }[] = [
    {
      name: 'C.5.1 PreferClose sets own-zone hints on slices to create and update, no node hints',
      service: svc('PreferClose'),
      plan: plan({
        create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a', node: 'node-1' }), ep('10.0.0.2', { zone: 'zone-b', node: 'node-2' })])],
        update: [makeSlice('u', [ep('10.0.0.5', { zone: 'zone-a', node: 'node-5' }), ep('10.0.0.8', { zone: 'zone-c', node: 'node-8' })])],
      }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [['10.0.0.1:zone-a', '10.0.0.2:zone-b']], update: [['10.0.0.5:zone-a', '10.0.0.8:zone-c']], unchanged: [] },
      reason: /^spec.trafficDistribution=PreferClose asks for same-zone hints; 4 ready endpoints hinted for their own zone$/,
    },
    {
      name: 'C.5.5 PreferClose corrects incorrect hints; unchanged slices with wrong or missing hints move to update',
      service: svc('PreferClose'),
      plan: plan({
        update: [makeSlice('u', [ep('10.0.0.1', { zone: 'zone-a', node: 'node-1', hz: ['zone-b'] })])],
        unchanged: [makeSlice('s2', [ep('10.0.0.2', { zone: 'zone-b', hz: ['zone-c'] })]), makeSlice('s3', [ep('10.0.0.3', { zone: 'zone-c' })])],
      }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a'], ['10.0.0.2:zone-b'], ['10.0.0.3:zone-c']], unchanged: [] },
      reason: /2 unchanged slices rewritten to fix missing or stale hints/,
    },
    {
      name: 'C.5.3 unready endpoints never trigger an update of an unchanged slice; the mode is still on (enabled follows the spec)',
      service: svc('PreferClose'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.2', { zone: 'zone-b', node: 'node-2', ready: false })])] }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [], update: [], unchanged: [['10.0.0.2:-']] },
      reason: /no ready endpoints to hint$/,
    },
    {
      name: 'C.5.3 not-ready endpoints keep whatever hints they had, even stale ones, in slices being written',
      service: svc('PreferSameZone'),
      plan: plan({ update: [makeSlice('u', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b', ready: false, hz: ['zone-x'] }), ep('10.0.0.3', { zone: 'zone-b', ready: 'unknown' })])] }),
      mode: 'PreferSameZone',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a', '10.0.0.2:zone-x', '10.0.0.3:-']], unchanged: [] },
      reason: /1 ready endpoint hinted/,
    },
    {
      name: 'C.5.5 an unchanged slice with correct hints stays unchanged',
      service: svc('PreferSameZone'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'] }), ep('10.0.0.2', { zone: 'zone-b', hz: ['zone-b'] })])] }),
      mode: 'PreferSameZone',
      enabled: true,
      want: { create: [], update: [], unchanged: [['10.0.0.1:zone-a', '10.0.0.2:zone-b']] },
      reason: /2 ready endpoints hinted for their own zone$/,
    },
    {
      name: 'C.5.5 a stale node hint under PreferSameZone rewrites the unchanged slice',
      service: svc('PreferSameZone'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'], hn: ['n1'] })])] }),
      mode: 'PreferSameZone',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a']], unchanged: [] },
      reason: /1 unchanged slice rewritten/,
    },
    {
      name: 'C.5.5 two zone hints where one is wanted rewrites the unchanged slice',
      service: svc('PreferClose'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a', 'zone-b'] })])] }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a']], unchanged: [] },
      reason: /./,
    },
    {
      name: 'C.5.1 a ready endpoint without zone gets no zone hint; the reason warns kube-proxy will ignore zone hints',
      service: svc('PreferClose'),
      plan: plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { node: 'n2', hz: ['zone-a'] })])] }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [['10.0.0.1:zone-a', '10.0.0.2:-']], update: [], unchanged: [] },
      reason: /1 ready endpoint hinted for their own zone; no zone hint on 1 ready endpoint without a zone, so kube-proxy ignores zone hints for this service$/,
    },
    {
      name: 'C.5.5 an unchanged zoneless endpoint with a stale zone hint rewrites the slice; enabled follows the spec, not the luck of the endpoints',
      service: svc('PreferClose'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.2', { hz: ['zone-a'] })])] }),
      mode: 'PreferClose',
      enabled: true,
      want: { create: [], update: [['10.0.0.2:-']], unchanged: [] },
      reason: /none of the 1 ready endpoint knows their own zone, so none is hinted/,
    },
    {
      name: 'C.5.2 PreferSameNode hints zone and node',
      service: svc('PreferSameNode'),
      plan: plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1' }), ep('10.0.0.2', { zone: 'zone-b', node: 'n2' })])] }),
      mode: 'PreferSameNode',
      enabled: true,
      want: { create: [['10.0.0.1:zone-a|n1', '10.0.0.2:zone-b|n2']], update: [], unchanged: [] },
      reason: /asks for same-node and same-zone hints; 2 ready endpoints hinted for their node and zone$/,
    },
    {
      name: 'C.5.2 PreferSameNode without zone gives a node hint only; without nodeName a zone hint only',
      service: svc('PreferSameNode'),
      plan: plan({ create: [makeSlice('', [ep('10.0.0.1', { node: 'n1' }), ep('10.0.0.2', { zone: 'zone-b' }), ep('10.0.0.3')])] }),
      mode: 'PreferSameNode',
      enabled: true,
      want: { create: [['10.0.0.1:|n1', '10.0.0.2:zone-b', '10.0.0.3:-']], update: [], unchanged: [] },
      reason: /2 ready endpoints hinted for their node and zone; no zone hint on 2 ready endpoints without a zone, .*; no node hint on 2 ready endpoints without a nodeName, so kube-proxy ignores node hints/,
    },
    {
      name: 'C.5.5 PreferSameNode rewrites an unchanged slice whose node hint is missing',
      service: svc('PreferSameNode'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'] })])] }),
      mode: 'PreferSameNode',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a|n1']], unchanged: [] },
      reason: /./,
    },
    {
      name: 'C.5.5 PreferSameNode keeps an unchanged slice with correct zone and node hints',
      service: svc('PreferSameNode'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'], hn: ['n1'] }), ep('10.0.0.2', { node: 'n2', hn: ['n2'] })])] }),
      mode: 'PreferSameNode',
      enabled: true,
      want: { create: [], update: [], unchanged: [['10.0.0.1:zone-a|n1', '10.0.0.2:|n2']] },
      reason: /./,
    },
    {
      name: 'C.5.5 PreferSameNode rewrites a wrong node hint',
      service: svc('PreferSameNode'),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'], hn: ['n9'] })])] }),
      mode: 'PreferSameNode',
      enabled: true,
      want: { create: [], update: [['10.0.0.1:zone-a|n1']], unchanged: [] },
      reason: /./,
    },
    {
      name: 'C.2.2 PreferSameNode with the gate off strips hints like unset',
      service: svc('PreferSameNode'),
      gate: false,
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', node: 'n1', hz: ['zone-a'], hn: ['n1'] })])] }),
      mode: 'None',
      enabled: false,
      want: { create: [], update: [['10.0.0.1:-']], unchanged: [] },
      reason: /feature gate, which is off.*; removed hints from 1 endpoint \(1 unchanged slice rewritten\)$/,
    },
    {
      name: 'C.5.6 an unrecognised trafficDistribution removes hints from slices to create and update',
      service: svc('Unknown'),
      plan: plan({
        create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.0.2', { zone: 'zone-b', hz: ['zone-b'] })])],
        update: [makeSlice('u', [ep('10.0.0.5', { zone: 'zone-a', hz: ['zone-a'] })])],
      }),
      mode: 'None',
      enabled: false,
      want: { create: [['10.0.0.1:-', '10.0.0.2:-']], update: [['10.0.0.5:-']], unchanged: [] },
      reason: /"Unknown" is not a known value.*; removed hints from 3 endpoints$/,
    },
    {
      name: 'C.5.6 unset trafficDistribution strips hints, moving hinted unchanged slices to update',
      service: svc(),
      plan: plan({
        update: [makeSlice('u', [ep('10.0.0.5', { zone: 'zone-a', hz: ['zone-a'] })])],
        unchanged: [makeSlice('s', [ep('10.0.0.6', { zone: 'zone-b', hz: ['zone-b'] })])],
      }),
      mode: 'None',
      enabled: false,
      want: { create: [], update: [['10.0.0.5:-'], ['10.0.0.6:-']], unchanged: [] },
      reason: /^nothing asked for hints: .*; removed hints from 2 endpoints \(1 unchanged slice rewritten\)$/,
    },
    {
      name: 'C.2.3 an unchanged slice without hints stays unchanged when nothing asks for hints',
      service: svc(),
      plan: plan({ unchanged: [makeSlice('s', [ep('10.0.0.6', { zone: 'zone-b' })])] }),
      mode: 'None',
      enabled: false,
      want: { create: [], update: [], unchanged: [['10.0.0.6:-']] },
      reason: /^nothing asked for hints: no topology annotation and no spec.trafficDistribution \(set spec.trafficDistribution: PreferSameZone, or annotation service.kubernetes.io\/topology-mode: Auto\)$/,
    },
    {
      name: 'C.2.3 even an empty hints object or a not-ready endpoint hint counts as a hint to strip',
      service: svc(),
      plan: plan({ unchanged: [makeSlice('s', [{ ...ep('10.0.0.6', { zone: 'zone-b' }), hints: {} }]), makeSlice('t', [ep('10.0.0.7', { ready: false, hz: ['zone-a'] })])] }),
      mode: 'None',
      enabled: false,
      want: { create: [], update: [['10.0.0.6:-'], ['10.0.0.7:-']], unchanged: [] },
      reason: /removed hints from 2 endpoints \(2 unchanged slices rewritten\)/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze({ service: tc.service, addressType: 'IPv4' as const, plan: tc.plan });
      const { plan: got, decision } = reconcileHints({ ...input, cache: freshCache(), ...(tc.gate !== undefined ? { preferSameTrafficDistribution: tc.gate } : {}) });
      expect(view(got)).toEqual(tc.want);
      expect(decision.mode).toBe(tc.mode);
      expect(decision.enabled).toBe(tc.enabled);
      expect(decision.event).toBeNull();
      expect(decision.allocations).toBeUndefined();
      expect(decision.reason).toMatch(tc.reason);
      for (const s of got.unchanged) expect(tc.plan.unchanged).toContain(s);
    });
  }
});

describe('leaving the annotation path (C.2.3)', () => {
  const DISABLED: KubeEvent = { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Topology Aware Hints has been disabled, addressType: IPv4' };
  const endpoints = [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' }), ep('10.0.0.3', { zone: 'zone-c' })];

  const cases: { name: string; next: Service; event: KubeEvent | null; want: string[]; reason: RegExp }[] = [
    {
      name: 'C.2.3 Auto -> nothing: Warning "has been disabled", hints stripped, cache forgotten',
      next: svc(),
      event: DISABLED,
      want: ['10.0.0.1:-', '10.0.0.2:-', '10.0.0.3:-'],
      reason: /the CPU-proportional hints the annotation path had populated are withdrawn; removed hints from 3 endpoints/,
    },
    {
      name: 'C.2.3 Auto -> PreferSameZone: Warning "has been disabled", then trafficDistribution hints',
      next: svc('PreferSameZone'),
      event: DISABLED,
      want: ['10.0.0.1:zone-a', '10.0.0.2:zone-b', '10.0.0.3:zone-c'],
      reason: /withdrawn; 3 ready endpoints hinted for their own zone/,
    },
    {
      name: 'C.2.3 Auto -> topology-mode=Disabled: same warning',
      next: svc(undefined, { [TM]: 'Disabled' }),
      event: DISABLED,
      want: ['10.0.0.1:-', '10.0.0.2:-', '10.0.0.3:-'],
      reason: /topology-mode="Disabled" is not/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = freshCache();
      const first = reconcileHints({ service: deepFreeze(svc(undefined, { [TM]: 'Auto' })), addressType: 'IPv4', plan: deepFreeze(plan({ create: [makeSlice('', endpoints)] })), cache });
      expect(first.decision.enabled).toBe(true);
      const hinted = first.plan.create[0];
      if (hinted === undefined) throw new Error('no slice');
      const next = reconcileHints({ service: deepFreeze(tc.next), addressType: 'IPv4', plan: deepFreeze(plan({ unchanged: [hinted] })), cache });
      expect(next.decision.event).toEqual(tc.event);
      expect(next.decision.reason).toMatch(tc.reason);
      expect([...next.plan.update, ...next.plan.unchanged].flatMap(hintsOf)).toEqual(tc.want);
      expect(cache.hasPopulatedHints('default/web')).toBe(false);
      expect(cache.hintedCounts('default/web', 'IPv4')).toBeUndefined();
      // The warning is recorded once; the next reconcile is quiet.
      const again = reconcileHints({ service: deepFreeze(tc.next), addressType: 'IPv4', plan: deepFreeze(plan({ unchanged: [hinted] })), cache });
      expect(again.decision.event).toBeNull();
    });
  }

  it('C.2.3 a service that never had cache-populated hints records no warning', () => {
    const got = reconcileHints({ service: deepFreeze(svc()), addressType: 'IPv4', plan: deepFreeze(plan({ create: [makeSlice('', endpoints)] })), cache: freshCache() });
    expect(got.decision.event).toBeNull();
  });
});

describe('wantedHints / needsTrafficHintsUpdate (C.5)', () => {
  const cases: { name: string; endpoint: ReturnType<typeof ep>; sameNode: boolean; want: ReturnType<typeof wantedHints>; stale: boolean }[] = [
    { name: 'zone only', endpoint: ep('1', { zone: 'a', node: 'n' }), sameNode: false, want: { forZones: [{ name: 'a' }] }, stale: true },
    { name: 'zone and node', endpoint: ep('1', { zone: 'a', node: 'n' }), sameNode: true, want: { forZones: [{ name: 'a' }], forNodes: [{ name: 'n' }] }, stale: true },
    { name: 'node only', endpoint: ep('1', { node: 'n' }), sameNode: true, want: { forNodes: [{ name: 'n' }] }, stale: true },
    { name: 'nothing known: no hints, and none is not stale', endpoint: ep('1'), sameNode: true, want: undefined, stale: false },
    { name: 'empty zone and nodeName count as unknown', endpoint: ep('1', { zone: '', node: '' }), sameNode: true, want: undefined, stale: false },
    { name: 'not ready: never stale', endpoint: ep('1', { zone: 'a', ready: false }), sameNode: false, want: { forZones: [{ name: 'a' }] }, stale: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(wantedHints(deepFreeze(tc.endpoint), tc.sameNode)).toEqual(tc.want);
      expect(needsTrafficHintsUpdate(deepFreeze(makeSlice('s', [tc.endpoint])), tc.sameNode)).toBe(tc.stale);
    });
  }
});
