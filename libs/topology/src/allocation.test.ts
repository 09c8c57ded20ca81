import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import type { Allocations, ZoneAllocation } from './allocation.ts';
import { computeAllocations, overloadReason, sliceHintCounts } from './allocation.ts';
import type { ZoneRatios } from './cpu-distribution.ts';
import { ep } from './test-endpoints.ts';

const thirds = { 'zone-a': 1 / 3, 'zone-b': 1 / 3, 'zone-c': 1 / 3 };

describe('computeAllocations (C.3.1, C.3.2)', () => {
  const cases: {
    name: string;
    ratios: ZoneRatios | null | undefined;
    n: number;
    want?: Record<string, ZoneAllocation>;
    message?: string;
    reason: RegExp;
  }[] = [
    {
      name: 'C.3.1 missing ratios -> Insufficient Node information',
      ratios: null,
      n: 5,
      message: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes',
      reason: /node information is insufficient: NODES/,
    },
    {
      name: 'C.3.1 a cache that never saw nodes -> Nodes only ready in one zone (upstream map starts empty)',
      ratios: undefined,
      n: 5,
      message: 'Nodes only ready in one zone',
      reason: /no node information has reached the topology cache yet/,
    },
    { name: 'C.3.1 one zone -> Nodes only ready in one zone', ratios: { 'zone-a': 1 }, n: 5, message: 'Nodes only ready in one zone', reason: /hints are off: NODES/ },
    {
      name: 'C.3.1 more zones than ready endpoints -> Insufficient number of endpoints (2 endpoints, 3 zones)',
      ratios: { 'zone-a': 0.3, 'zone-b': 0.4, 'zone-c': 0.3 },
      n: 2,
      message: 'Insufficient number of endpoints (2 endpoints, 3 zones)',
      reason: /2 ready endpoints cannot cover 3 zones/,
    },
    {
      name: 'C.3.1 no ready endpoints -> Insufficient number of endpoints (0 endpoints, 2 zones)',
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      n: 0,
      message: 'Insufficient number of endpoints (0 endpoints, 2 zones)',
      reason: /0 ready endpoints cannot cover 2 zones/,
    },
    {
      name: 'C.3.1 sum of minimums above N -> Unable to allocate minimum ... (4 endpoints, 3 zones)',
      ratios: thirds,
      n: 4,
      message: 'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 3 zones)',
      reason: /needs at least zone-a 2, zone-b 2, zone-c 2 endpoints \(6 in all\) but only 4 ready endpoints exist/,
    },
    {
      name: 'C.3.2 a 60/40 split with 2 endpoints: ceil(1.2/1.2) = 1 each, target keeps the fraction',
      ratios: { 'zone-a': 0.6, 'zone-b': 0.4 },
      n: 2,
      want: { 'zone-a': { minimum: 1, maximum: 1, target: 1.2 }, 'zone-b': { minimum: 1, maximum: 1, target: 1 } },
      reason: /./,
    },
    {
      name: 'C.3.2 two endpoints over 45/55 zones: one each, no slack',
      ratios: { 'zone-a': 0.45, 'zone-b': 0.55 },
      n: 2,
      want: { 'zone-a': { minimum: 1, maximum: 1, target: 1 }, 'zone-b': { minimum: 1, maximum: 1, target: 1.1 } },
      reason: /./,
    },
    {
      name: 'C.3.2 ten endpoints over 35/35/30: minimums 3/3/3, maximum = minimum + (N - 9)',
      ratios: { 'zone-a': 0.35, 'zone-b': 0.35, 'zone-c': 0.3 },
      n: 10,
      want: {
        'zone-a': { minimum: 3, maximum: 4, target: 3.5 },
        'zone-b': { minimum: 3, maximum: 4, target: 3.5 },
        'zone-c': { minimum: 3, maximum: 4, target: 3 },
      },
      reason: /./,
    },
    {
      name: 'C.3.2 target is raised to the minimum when the share rounds up (0.05 x 40 = 2 -> minimum 2)',
      ratios: { 'zone-a': 0.5, 'zone-b': 0.45, 'zone-c': 0.05 },
      n: 40,
      want: {
        'zone-a': { minimum: 17, maximum: 23, target: 20 },
        'zone-b': { minimum: 15, maximum: 21, target: 18 },
        'zone-c': { minimum: 2, maximum: 8, target: 2 },
      },
      reason: /./,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = computeAllocations(tc.ratios === null || tc.ratios === undefined ? tc.ratios : deepFreeze(tc.ratios), tc.n, 'NODES');
      if (tc.want !== undefined) {
        expect(got.ok).toBe(true);
        if (got.ok) expect(Object.fromEntries(got.allocations)).toEqual(tc.want);
      } else {
        expect(got.ok).toBe(false);
        if (!got.ok) {
          expect(got.message).toBe(tc.message);
          expect(got.reason).toMatch(tc.reason);
        }
      }
    });
  }

  it('C.3.2 allocations iterate in zone-name order whatever the ratio key order', () => {
    const got = computeAllocations({ 'zone-c': 0.2, 'zone-a': 0.4, 'zone-b': 0.4 }, 10, '');
    expect(got.ok && [...got.allocations.keys()]).toEqual(['zone-a', 'zone-b', 'zone-c']);
  });
});

function alloc(max: Record<string, number>): Allocations {
  return new Map(Object.entries(max).map(([z, maximum]) => [z, { minimum: 0, maximum, target: 0 }]));
}

describe('sliceHintCounts (C.3.3, upstream getHintsByZone)', () => {
  const cases: { name: string; slice: EndpointSlice; allocated: Record<string, number>; max: Record<string, number>; want: Record<string, number> | null }[] = [
    { name: 'an empty slice contributes nothing and stays', slice: makeSlice('s', []), allocated: {}, max: {}, want: {} },
    {
      name: 'a single zone hint is counted',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] })]),
      allocated: { 'zone-a': 1 },
      max: { 'zone-a': 3 },
      want: { 'zone-a': 1 },
    },
    {
      name: 'not-ready and unknown-ready endpoints are ignored',
      slice: makeSlice('s', [
        ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] }),
        ep('10.0.0.2', { zone: 'zone-a', hz: ['zone-a'], ready: false }),
        ep('10.0.0.3', { zone: 'zone-a', hz: ['zone-a'], ready: 'unknown' }),
      ]),
      allocated: { 'zone-a': 1 },
      max: { 'zone-a': 3 },
      want: { 'zone-a': 1 },
    },
    {
      name: 'cross-zone hints count for the hinted zone',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.0.2', { zone: 'zone-a', hz: ['zone-b'] }), ep('10.0.0.3', { zone: 'zone-b', hz: ['zone-b'] })]),
      allocated: { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 },
      max: { 'zone-a': 3, 'zone-b': 3, 'zone-c': 3 },
      want: { 'zone-a': 1, 'zone-b': 2 },
    },
    {
      name: 'a hint for a zone without allocation forces a rewrite',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-non-existent'] })]),
      allocated: {},
      max: { 'zone-a': 3 },
      want: null,
    },
    { name: 'a ready endpoint without hints forces a rewrite', slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a' })]), allocated: {}, max: { 'zone-a': 3 }, want: null },
    { name: 'a ready endpoint with an empty forZones forces a rewrite', slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: [] })]), allocated: {}, max: { 'zone-a': 3 }, want: null },
    {
      name: 'a ready endpoint with only node hints forces a rewrite',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hn: ['n1'] })]),
      allocated: {},
      max: { 'zone-a': 3 },
      want: null,
    },
    {
      name: 'counts exceeding the maximum together with already-allocated hints force a rewrite',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] }), ep('10.0.0.2', { zone: 'zone-a', hz: ['zone-a'] })]),
      allocated: { 'zone-a': 1 },
      max: { 'zone-a': 2 },
      want: null,
    },
    {
      name: 'counts exactly at the maximum are kept',
      slice: makeSlice('s', [ep('10.0.0.1', { zone: 'zone-a', hz: ['zone-a'] })]),
      allocated: { 'zone-a': 1 },
      max: { 'zone-a': 2 },
      want: { 'zone-a': 1 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = sliceHintCounts(deepFreeze(tc.slice), new Map(Object.entries(tc.allocated)), alloc(tc.max));
      expect(got === null ? null : Object.fromEntries(got)).toEqual(tc.want);
    });
  }
});

describe('overloadReason (C.4, upstream serviceOverloaded)', () => {
  const cases: { name: string; counts: Record<string, number>; ratios: ZoneRatios | null; want: RegExp | null }[] = [
    { name: 'no cached counts is never overloaded', counts: {}, ratios: null, want: null },
    { name: 'no ratios at all overloads every hinted service', counts: { 'zone-a': 2 }, ratios: null, want: /no longer sufficient/ },
    { name: 'empty ratios overload every hinted service', counts: { 'zone-a': 2 }, ratios: {}, want: /no longer sufficient/ },
    { name: 'a zone with CPU but no hinted endpoints overloads', counts: { 'zone-a': 2, 'zone-b': 2 }, ratios: thirds, want: /zone zone-c now has CPU but no hinted endpoints/ },
    { name: 'balanced thirds are fine', counts: { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 }, ratios: thirds, want: null },
    {
      name: 'fewer than ceil(total x ratio / 1.2) overloads',
      counts: { 'zone-a': 2, 'zone-b': 1 },
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      want: /zone zone-b has 1 hinted of 3 but its CPU share \(50%\) needs at least 2/,
    },
    { name: 'exactly the minimum is fine (7 hinted, 50%: ceil(2.92) = 3)', counts: { 'zone-a': 4, 'zone-b': 3 }, ratios: { 'zone-a': 0.5, 'zone-b': 0.5 }, want: null },
    {
      name: 'a cached zone that lost its CPU only counts toward the total',
      counts: { 'zone-a': 4, 'zone-b': 4, 'zone-x': 1 },
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      want: null,
    },
    {
      name: 'a cached zone that lost its CPU can tip the others into overload',
      counts: { 'zone-a': 2, 'zone-b': 2, 'zone-x': 1 },
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      want: /zone zone-a has 2 hinted of 5 .* needs at least 3/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = overloadReason(new Map(Object.entries(tc.counts)), tc.ratios);
      if (tc.want === null) expect(got).toBeNull();
      else expect(got).toMatch(tc.want);
    });
  }
});
