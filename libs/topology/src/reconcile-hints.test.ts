import { describe, expect, it } from 'vitest';
import type { EndpointSlice, KubeEvent, Service, SlicePlan } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_AWARE_HINTS as TAH, ANNOTATION_TOPOLOGY_MODE as TM } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { reconcileHints } from './reconcile-hints.ts';
import { TopologyCache } from './topology-cache.ts';
import { ep, hintsOf, plan, zoneHintStats, zoneNodes } from './test-endpoints.ts';

const auto = (): Service => makeService('web', { namespace: 'ns', annotations: { [TM]: 'Auto' } });
const warn = (message: string): KubeEvent => ({ type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: `${message}, addressType: IPv4` });
const ENABLED: KubeEvent = { type: 'Normal', reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled, addressType: IPv4' };

function cacheFor(millis: Record<string, number> | null): TopologyCache {
  const cache = new TopologyCache();
  cache.setNodes(deepFreeze(millis === null ? [] : zoneNodes(millis)));
  return cache;
}

function view(p: SlicePlan): { create: string[][]; update: string[][]; unchanged: string[][] } {
  return { create: p.create.map(hintsOf), update: p.update.map(hintsOf), unchanged: p.unchanged.map(hintsOf) };
}

describe('reconcileHints, annotation path (C.3; upstream TestAddHints)', () => {
  const cases: {
    name: string;
    millis: Record<string, number> | null;
    plan: SlicePlan;
    want: ReturnType<typeof view>;
    event: KubeEvent | null;
    enabled: boolean;
    cached: Record<string, number> | undefined;
    reason: RegExp;
  }[] = [
    {
      name: 'C.3.1 empty plan without node information -> Insufficient Node information warning',
      millis: null,
      plan: plan({}),
      want: { create: [], update: [], unchanged: [] },
      event: warn('Insufficient Node information: allocatable CPU or zone not specified on one or more nodes'),
      enabled: false,
      cached: undefined,
      reason: /topology-mode="Auto" asks .*; hints are off because the node information is insufficient: no nodes are known/,
    },
    {
      name: 'C.3.1 slice to create without zone ratios gets no hints',
      millis: null,
      plan: plan({ create: [makeSlice('', [ep('10.1.2.3', { zone: 'zone-a' })])] }),
      want: { create: [['10.1.2.3:-']], update: [], unchanged: [] },
      event: warn('Insufficient Node information: allocatable CPU or zone not specified on one or more nodes'),
      enabled: false,
      cached: undefined,
      reason: /insufficient/,
    },
    {
      name: 'C.3.1 two endpoints for three zones -> Insufficient number of endpoints (2 endpoints, 3 zones)',
      millis: { 'zone-a': 300, 'zone-b': 400, 'zone-c': 300 },
      plan: plan({ create: [makeSlice('', [ep('10.1.2.3', { zone: 'zone-a' }), ep('10.1.2.4', { zone: 'zone-b' })])] }),
      want: { create: [['10.1.2.3:-', '10.1.2.4:-']], update: [], unchanged: [] },
      event: warn('Insufficient number of endpoints (2 endpoints, 3 zones)'),
      enabled: false,
      cached: undefined,
      reason: /2 ready endpoints cannot cover 3 zones/,
    },
    {
      name: 'C.3.1 minimums above N -> Unable to allocate minimum required endpoints (4 endpoints, 3 zones)',
      millis: { 'zone-a': 100, 'zone-b': 100, 'zone-c': 100 },
      plan: plan({ create: [makeSlice('', ['a', 'a', 'c', 'c'].map((z, i) => ep(`10.0.0.${i}`, { zone: `zone-${z}`, hz: [`zone-${z}`] })))] }),
      want: { create: [['10.0.0.0:-', '10.0.0.1:-', '10.0.0.2:-', '10.0.0.3:-']], update: [], unchanged: [] },
      event: warn('Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 3 zones)'),
      enabled: false,
      cached: undefined,
      reason: /needs at least zone-a 2, zone-b 2, zone-c 2 endpoints \(6 in all\).*; removed hints from 4 endpoints$/,
    },
    {
      name: 'C.3.4 two endpoints over 45/55 zones are hinted for their own zone, first time -> Normal enabled',
      millis: { 'zone-a': 450, 'zone-b': 550 },
      plan: plan({ create: [makeSlice('', [ep('10.1.2.3', { zone: 'zone-a' }), ep('10.1.2.4', { zone: 'zone-b' })])] }),
      want: { create: [['10.1.2.3:zone-a', '10.1.2.4:zone-b']], update: [], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /CPU-proportional zone hints for 2 ready endpoints across 2 zones .*zone-a 1 hinted \(target 1, min 1, max 1\), zone-b 1 hinted \(target 1.1, min 1, max 1\)$/,
    },
    {
      name: 'C.3 unready and unknown-ready endpoints are not counted and get no hints',
      millis: { 'zone-a': 450, 'zone-b': 550 },
      plan: plan({
        create: [
          makeSlice('', [
            ep('10.1.2.3', { zone: 'zone-a' }),
            ep('10.1.2.4', { zone: 'zone-b' }),
            ep('10.1.2.5', { zone: 'zone-b', ready: false }),
            ep('10.1.2.6', { zone: 'zone-b', ready: 'unknown' }),
          ]),
        ],
      }),
      want: { create: [['10.1.2.3:zone-a', '10.1.2.4:zone-b', '10.1.2.5:-', '10.1.2.6:-']], update: [], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /for 2 ready endpoints/,
    },
    {
      name: 'C.3.4 not-ready endpoints in slices being written lose stale hints',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        update: [makeSlice('s1', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' }), ep('10.0.0.3', { zone: 'zone-b', ready: false, hz: ['zone-b'], hn: ['n'] })])],
      }),
      want: { create: [], update: [['10.0.0.1:zone-a', '10.0.0.2:zone-b', '10.0.0.3:-']], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /./,
    },
    {
      name: 'C.3.5/C.3.6 slices to create and update within a 3-zone threshold: one zone-a endpoint re-hinted to zone-b',
      millis: { 'zone-a': 350, 'zone-b': 350, 'zone-c': 300 },
      plan: plan({
        create: [
          makeSlice('', [ep('10.1.2.3', { zone: 'zone-a' }), ep('10.1.2.4', { zone: 'zone-b' })]),
          makeSlice('', [ep('10.1.3.3', { zone: 'zone-c' }), ep('10.1.3.4', { zone: 'zone-c' }), ep('10.1.3.5', { zone: 'zone-a' })]),
        ],
        update: [
          makeSlice('u1', [ep('10.2.2.3', { zone: 'zone-a' }), ep('10.2.2.4', { zone: 'zone-a' })]),
          makeSlice('u2', [ep('10.2.3.3', { zone: 'zone-b' }), ep('10.2.3.4', { zone: 'zone-c' }), ep('10.2.3.5', { zone: 'zone-a' })]),
        ],
      }),
      want: {
        create: [
          ['10.1.2.3:zone-b', '10.1.2.4:zone-b'],
          ['10.1.3.3:zone-c', '10.1.3.4:zone-c', '10.1.3.5:zone-a'],
        ],
        update: [
          ['10.2.2.3:zone-a', '10.2.2.4:zone-a'],
          ['10.2.3.3:zone-b', '10.2.3.4:zone-c', '10.2.3.5:zone-a'],
        ],
        unchanged: [],
      },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 4, 'zone-b': 3, 'zone-c': 3 },
      reason: /1 endpoint hinted to another zone to balance load \(zone-a->zone-b x1\)/,
    },
    {
      name: 'C.3.4 a ready endpoint without zone disables hints: warning, every hint stripped, hinted unchanged slices rewritten',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2')])],
        unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-b', hz: ['zone-b'] })])],
      }),
      want: { create: [['10.0.0.1:-', '10.0.0.2:-']], update: [['10.0.1.1:-', '10.0.1.2:-']], unchanged: [] },
      event: warn('One or more endpoints do not have a zone specified'),
      enabled: false,
      cached: undefined,
      reason: /1 ready endpoint without a zone \(10.0.0.2\); one endpoint without a zone disables hints.*removed hints from 2 endpoints, rewriting 1 unchanged slice/,
    },
    {
      name: 'C.3.1 a refusal leaves unchanged slices without hints unchanged',
      millis: null,
      plan: plan({ unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a' }), ep('10.0.1.2', { zone: 'zone-b', ready: false })])] }),
      want: { create: [], update: [], unchanged: [['10.0.1.1:-', '10.0.1.2:-']] },
      event: warn('Insufficient Node information: allocatable CPU or zone not specified on one or more nodes'),
      enabled: false,
      cached: undefined,
      reason: /insufficient: no nodes are known$/,
    },
    {
      name: 'C.3.3/C.3.4 an unchanged slice moved by the allocation check stays an update when step 1 then refuses (as upstream)',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        create: [makeSlice('', [ep('10.0.0.1'), ep('10.0.0.2', { zone: 'zone-a' })])],
        unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a' }), ep('10.0.1.2', { zone: 'zone-b' })])],
      }),
      want: { create: [['10.0.0.1:-', '10.0.0.2:-']], update: [['10.0.1.1:-', '10.0.1.2:-']], unchanged: [] },
      event: warn('One or more endpoints do not have a zone specified'),
      enabled: false,
      cached: undefined,
      reason: /without a zone \(10.0.0.1\)/,
    },
    {
      name: 'C.3.4 a not-ready endpoint without zone does not disable hints',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' }), ep('10.0.0.3', { ready: false })])] }),
      want: { create: [['10.0.0.1:zone-a', '10.0.0.2:zone-b', '10.0.0.3:-']], update: [], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /./,
    },
    {
      name: 'C.3.3 an unchanged slice whose hints fit the allocation stays unchanged and is counted',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-b' }), ep('10.0.0.2', { zone: 'zone-a' })])],
        unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-a', hz: ['zone-b'] })])],
      }),
      // N=4 over 50/50: minimum 2, maximum 2 per zone; u1 contributes one hint to each zone.
      want: { create: [['10.0.0.1:zone-b', '10.0.0.2:zone-a']], update: [], unchanged: [['10.0.1.1:zone-a', '10.0.1.2:zone-b']] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 2, 'zone-b': 2 },
      reason: /1 unchanged slice kept its hints, 0 rewritten/,
    },
    {
      name: 'C.3.3 an unchanged slice with a ready endpoint lacking hints is rewritten',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({ unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-b' })])] }),
      want: { create: [], update: [['10.0.1.1:zone-a', '10.0.1.2:zone-b']], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /0 unchanged slices kept their hints, 1 rewritten/,
    },
    {
      name: 'C.3.3 an unchanged slice hinting a zone without allocation is rewritten',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({ unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-gone'] }), ep('10.0.1.2', { zone: 'zone-b', hz: ['zone-b'] })])] }),
      want: { create: [], update: [['10.0.1.1:zone-a', '10.0.1.2:zone-b']], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /./,
    },
    {
      name: 'C.3.3 the second unchanged slice that would push a zone past its maximum is rewritten, the first kept',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        unchanged: [
          makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-b', hz: ['zone-a'] })]),
          makeSlice('u2', [ep('10.0.2.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.2.2', { zone: 'zone-b', hz: ['zone-b'] })]),
        ],
      }),
      // N=4: minimum 2 per zone, maximum 2. u1 puts 2 in zone-a; u2 would make 3, so it is
      // rewritten, and its zone-a endpoint then goes to zone-b to rebalance.
      want: { create: [], update: [['10.0.2.1:zone-b', '10.0.2.2:zone-b']], unchanged: [['10.0.1.1:zone-a', '10.0.1.2:zone-a']] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 2, 'zone-b': 2 },
      reason: /1 unchanged slice kept its hints, 1 rewritten/,
    },
    {
      name: 'C.3.3 an unchanged slice with stale hints only on not-ready endpoints stays unchanged',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({
        unchanged: [makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-b', hz: ['zone-b'] }), ep('10.0.1.3', { ready: false, hz: ['x'] })])],
      }),
      want: { create: [], update: [], unchanged: [['10.0.1.1:zone-a', '10.0.1.2:zone-b', '10.0.1.3:x']] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /./,
    },
    {
      name: 'C.3.8 exactly one forZones entry: node hints and extra zones on written slices are replaced',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({ update: [makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a', 'zone-b'], hn: ['n1'] }), ep('10.0.0.2', { zone: 'zone-b', hn: ['n2'] })])] }),
      want: { create: [], update: [['10.0.0.1:zone-a', '10.0.0.2:zone-b']], unchanged: [] },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 1, 'zone-b': 1 },
      reason: /./,
    },
    {
      name: 'C.3 endpoints in a zone without counted CPU keep an own-zone hint and are explained',
      millis: { 'zone-a': 500, 'zone-b': 500 },
      plan: plan({ create: [makeSlice('', ['a', 'a', 'a', 'b', 'b', 'b', 'd'].map((z, i) => ep(`10.0.0.${i}`, { zone: `zone-${z}` })))] }),
      want: {
        create: [['10.0.0.0:zone-a', '10.0.0.1:zone-a', '10.0.0.2:zone-a', '10.0.0.3:zone-b', '10.0.0.4:zone-b', '10.0.0.5:zone-b', '10.0.0.6:zone-d']],
        update: [],
        unchanged: [],
      },
      event: ENABLED,
      enabled: true,
      cached: { 'zone-a': 3, 'zone-b': 3, 'zone-d': 1 },
      reason: /endpoints in zone-d \(no counted node CPU there\) are hinted for their own zone/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = cacheFor(tc.millis);
      const input = deepFreeze({ service: auto(), addressType: 'IPv4' as const, plan: tc.plan });
      const { plan: got, decision } = reconcileHints({ ...input, cache });
      expect(view(got)).toEqual(tc.want);
      expect(got.delete).toBe(tc.plan.delete);
      expect(decision.event).toEqual(tc.event);
      expect(decision.enabled).toBe(tc.enabled);
      expect(decision.mode).toBe('Auto');
      expect(decision.service).toBe('ns/web');
      expect(decision.reason).toMatch(tc.reason);
      const cached = cache.hintedCounts('ns/web', 'IPv4');
      expect(cached === undefined ? undefined : Object.fromEntries(cached)).toEqual(tc.cached);
      expect(decision.allocations !== undefined).toBe(tc.enabled);
    });
  }

  it('C.3.7 TopologyAwareHintsEnabled is recorded only the first time, again after a refusal', () => {
    const cache = cacheFor({ 'zone-a': 500, 'zone-b': 500 });
    const good = deepFreeze(plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })])] }));
    const tooFew = deepFreeze(plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' })])] }));
    const svc = deepFreeze(auto());
    const events = [good, good, tooFew, good].map((p) => reconcileHints({ service: svc, addressType: 'IPv4', plan: p, cache }).decision.event);
    expect(events).toEqual([ENABLED, null, warn('Insufficient number of endpoints (1 endpoints, 2 zones)'), ENABLED]);
  });

  it('C.3.7 the populated mark is per service: IPv6 after IPv4 records no second enabled event', () => {
    const cache = cacheFor({ 'zone-a': 500, 'zone-b': 500 });
    const svc = deepFreeze(auto());
    const v4 = deepFreeze(plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })])] }));
    const v6 = deepFreeze(plan({ create: [makeSlice('', [ep('fd00::1', { zone: 'zone-a' }), ep('fd00::2', { zone: 'zone-b' })], { addressType: 'IPv6' })] }));
    expect(reconcileHints({ service: svc, addressType: 'IPv4', plan: v4, cache }).decision.event).toEqual(ENABLED);
    const d6 = reconcileHints({ service: svc, addressType: 'IPv6', plan: v6, cache }).decision;
    expect(d6.event).toBeNull();
    expect(d6.enabled).toBe(true);
  });

  it('C.3.7 a refusal for one address type clears the populated mark for the service (upstream quirk)', () => {
    const cache = cacheFor({ 'zone-a': 500, 'zone-b': 500 });
    const svc = deepFreeze(auto());
    const v4 = deepFreeze(plan({ create: [makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })])] }));
    const v6 = deepFreeze(plan({ create: [makeSlice('', [ep('fd00::1', { zone: 'zone-a' })], { addressType: 'IPv6' })] }));
    reconcileHints({ service: svc, addressType: 'IPv4', plan: v4, cache });
    const d6 = reconcileHints({ service: svc, addressType: 'IPv6', plan: v6, cache }).decision;
    expect(d6.event?.message).toBe('Insufficient number of endpoints (1 endpoints, 2 zones), addressType: IPv6');
    expect(cache.hintedCounts('ns/web', 'IPv4')).toBeDefined();
    expect(reconcileHints({ service: svc, addressType: 'IPv4', plan: v4, cache }).decision.event).toEqual(ENABLED);
  });

  it('C.3 allocation is deterministic: same plan, same cache state, same hints', () => {
    const p = deepFreeze(plan({ create: [makeSlice('', ['a', 'a', 'a', 'a', 'b', 'c'].map((z, i) => ep(`10.0.0.${i}`, { zone: `zone-${z}` })))] }));
    const run = (): string[][] => reconcileHints({ service: auto(), addressType: 'IPv4', plan: p, cache: cacheFor({ 'zone-a': 100, 'zone-b': 100, 'zone-c': 100 }) }).plan.create.map(hintsOf);
    expect(run()).toEqual(run());
    expect(run()).toEqual([['10.0.0.0:zone-b', '10.0.0.1:zone-c', '10.0.0.2:zone-a', '10.0.0.3:zone-a', '10.0.0.4:zone-b', '10.0.0.5:zone-c']]);
  });
});

describe('reconcileHints, upstream TestReconcileTopology scenarios (30 nodes of 100m, 3 zones)', () => {
  const nodes = ['zone-a', 'zone-b', 'zone-c'].flatMap((zone) => Array.from({ length: 10 }, (_, j) => makeNode(`node-${zone}-${j}`, { zone, cpu: '100m' })));
  const e = (i: number, zone: string): ReturnType<typeof ep> => ep(`10.0.0.${i}`, { zone, node: `node-${zone}-${i % 10}` });
  const zoneAB = makeSlice('zone-a-b', [e(7, 'zone-a'), e(8, 'zone-a'), e(16, 'zone-b'), e(17, 'zone-b'), e(18, 'zone-b')]);
  const zoneAC = makeSlice('zone-a-c', [e(5, 'zone-a'), e(6, 'zone-a'), e(25, 'zone-c'), e(26, 'zone-c')]);
  const zoneC = makeSlice('zone-c', [e(27, 'zone-c'), e(28, 'zone-c'), e(29, 'zone-c')]);

  const cases: { name: string; annotation: string; unchanged: EndpointSlice[]; updates: number; byZone: Record<string, number>; crossZone: number }[] = [
    { name: 'enabling with annotation auto: one update, one endpoint per zone, 2 cross-zone', annotation: 'auto', unchanged: [zoneC], updates: 1, byZone: { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 }, crossZone: 2 },
    { name: 'ratio beyond threshold: no hints and no update', annotation: 'auto', unchanged: [zoneAC], updates: 0, byZone: {}, crossZone: 0 },
    { name: 'Auto with more slices and endpoints: two updates, 3/3/3, 1 cross-zone', annotation: 'Auto', unchanged: [zoneAC, zoneAB], updates: 2, byZone: { 'zone-a': 3, 'zone-b': 3, 'zone-c': 3 }, crossZone: 1 },
    { name: 'annotation disabled: no hints and no update', annotation: 'disabled', unchanged: [zoneAC, zoneAB], updates: 0, byZone: {}, crossZone: 0 },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const cache = new TopologyCache();
      cache.setNodes(deepFreeze(nodes));
      const service = deepFreeze(makeService('foo', { annotations: { [TAH]: tc.annotation } }));
      const { plan: got } = reconcileHints({ service, addressType: 'IPv4', plan: deepFreeze(plan({ unchanged: tc.unchanged })), cache });
      expect(got.update).toHaveLength(tc.updates);
      expect(got.unchanged).toHaveLength(tc.unchanged.length - tc.updates);
      const all = [...got.update, ...got.unchanged];
      expect(zoneHintStats(all)).toEqual({ byZone: tc.byZone, crossZone: tc.crossZone });
      for (const s of got.unchanged) expect(tc.unchanged).toContain(s);
    });
  }
});

describe('reconcileHints plumbing', () => {
  it('never mutates its input and returns unchanged slices as the very same objects', () => {
    const cache = cacheFor({ 'zone-a': 500, 'zone-b': 500 });
    const kept = makeSlice('u1', [ep('10.0.1.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.1.2', { zone: 'zone-b', hz: ['zone-b'] })]);
    const creating = makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })]);
    const p = deepFreeze(plan({ create: [creating], unchanged: [kept], delete: [makeSlice('gone', [])] }));
    const before = JSON.stringify(p);
    const { plan: got } = reconcileHints({ service: deepFreeze(auto()), addressType: 'IPv4', plan: p, cache });
    expect(JSON.stringify(p)).toBe(before);
    expect(got.unchanged[0]).toBe(kept);
    expect(got.create[0]).not.toBe(creating);
    expect(got.delete).toBe(p.delete);
  });

  it('slices of another address type pass through untouched and are not counted', () => {
    const cache = cacheFor({ 'zone-a': 500, 'zone-b': 500 });
    const v6create = makeSlice('', [ep('fd00::1', { zone: 'zone-a', hz: ['zone-z'] })], { addressType: 'IPv6' });
    const v6unchanged = makeSlice('v6', [ep('fd00::2', { zone: 'zone-b' })], { addressType: 'IPv6' });
    const v4 = makeSlice('', [ep('10.0.0.1', { zone: 'zone-a' }), ep('10.0.0.2', { zone: 'zone-b' })]);
    const p = deepFreeze(plan({ create: [v6create, v4], unchanged: [v6unchanged] }));
    const { plan: got, decision } = reconcileHints({ service: auto(), addressType: 'IPv4', plan: p, cache });
    expect(got.create[0]).toBe(v6create);
    expect(got.unchanged).toEqual([v6unchanged]);
    expect(got.create.map(hintsOf)[1]).toEqual(['10.0.0.1:zone-a', '10.0.0.2:zone-b']);
    expect(decision.reason).toMatch(/for 2 ready endpoints/);
  });

  it('the decision carries the allocation used, keyed by zone', () => {
    const cache = cacheFor({ 'zone-a': 450, 'zone-b': 550 });
    const p = deepFreeze(plan({ create: [makeSlice('', [ep('10.1.2.3', { zone: 'zone-a' }), ep('10.1.2.4', { zone: 'zone-b' })])] }));
    const { decision } = reconcileHints({ service: auto(), addressType: 'IPv4', plan: p, cache });
    expect(decision.allocations).toEqual({ 'zone-a': { minimum: 1, maximum: 1, target: 1 }, 'zone-b': { minimum: 1, maximum: 1, target: 1.1 } });
  });
});
