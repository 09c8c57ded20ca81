import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import type { Allocations } from './allocation.ts';
import { givingAndReceivingZones, redistributeHints } from './redistribute.ts';
import { SliceDraft } from './slice-draft.ts';
import { ep, hintsOf } from './test-endpoints.ts';

function targets(t: Record<string, number>): Allocations {
  return new Map(Object.entries(t).map(([z, target]) => [z, { minimum: 0, maximum: 0, target }]));
}

describe('givingAndReceivingZones (C.3.5)', () => {
  const cases: { name: string; targets: Record<string, number>; hinted: Record<string, number>; giving: Record<string, number>; receiving: Record<string, number> }[] = [
    { name: 'empty', targets: {}, hinted: {}, giving: {}, receiving: {} },
    { name: 'no rebalancing when every zone is within one endpoint', targets: { 'zone-a': 1.2, 'zone-b': 1.1, 'zone-c': 1.0 }, hinted: { 'zone-a': 1, 'zone-b': 1, 'zone-c': 1 }, giving: {}, receiving: {} },
    {
      name: 'prefers keeping same-zone hints even when one more move would balance slightly better',
      targets: { 'zone-a': 5.1, 'zone-b': 5.1, 'zone-c': 5.8 },
      hinted: { 'zone-a': 16 },
      giving: { 'zone-a': 10 },
      receiving: { 'zone-b': 5, 'zone-c': 5 },
    },
    {
      name: 'when two zones each need < 1, the one needing most receives (stop only when both < 1 or either < 0.5)',
      targets: { 'zone-a': 5.0, 'zone-b': 5.6, 'zone-c': 5.4 },
      hinted: { 'zone-a': 16 },
      giving: { 'zone-a': 11 },
      receiving: { 'zone-b': 6, 'zone-c': 5 },
    },
    {
      name: 'when two zones have extra, the one with most extra gives',
      targets: { 'zone-a': 5.0, 'zone-b': 5.6, 'zone-c': 5.4 },
      hinted: { 'zone-b': 8, 'zone-c': 8 },
      giving: { 'zone-b': 2, 'zone-c': 3 },
      receiving: { 'zone-a': 5 },
    },
    { name: 'more hinted than allocated everywhere: nobody receives', targets: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 }, hinted: { 'zone-a': 6, 'zone-b': 6, 'zone-c': 6 }, giving: {}, receiving: {} },
    { name: 'negative targets: nobody receives', targets: { 'zone-a': -5, 'zone-b': -5, 'zone-c': -5 }, hinted: { 'zone-a': 6, 'zone-b': 6, 'zone-c': 6 }, giving: {}, receiving: {} },
    { name: 'negative hinted counts: nobody gives', targets: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 }, hinted: { 'zone-a': -4, 'zone-b': -3, 'zone-c': -2 }, giving: {}, receiving: {} },
    {
      name: 'negative count in one zone: ties between givers alternate starting with the first name',
      targets: { 'zone-a': 5, 'zone-b': 5, 'zone-c': 5 },
      hinted: { 'zone-a': -40, 'zone-b': 20, 'zone-c': 20 },
      giving: { 'zone-b': 15, 'zone-c': 15 },
      receiving: { 'zone-a': 30 },
    },
    {
      name: 'stops when the largest excess drops below 0.5 (no move for 0.4)',
      targets: { 'zone-a': 2.6, 'zone-b': 1.4 },
      hinted: { 'zone-a': 3, 'zone-b': 1 },
      giving: {},
      receiving: {},
    },
    {
      name: 'does not move 0.6 -> 0.6 (both below 1)',
      targets: { 'zone-a': 2.4, 'zone-b': 1.6 },
      hinted: { 'zone-a': 3, 'zone-b': 1 },
      giving: {},
      receiving: {},
    },
    {
      name: 'moves when one side is >= 1 and the other >= 0.5 (excess 1.2, deficits 0.6/0.6; tie -> first name)',
      targets: { 'zone-a': 1.8, 'zone-b': 1.6, 'zone-c': 1.6 },
      hinted: { 'zone-a': 3, 'zone-b': 1, 'zone-c': 1 },
      giving: { 'zone-a': 1 },
      receiving: { 'zone-b': 1 },
    },
    {
      name: 'moves for excess 1.5 / deficit 1.5, then stops at 0.5 / 0.5 (both < 1)',
      targets: { 'zone-a': 3.5, 'zone-b': 3.5, 'zone-c': 3 },
      hinted: { 'zone-a': 5, 'zone-b': 2, 'zone-c': 3 },
      giving: { 'zone-a': 1 },
      receiving: { 'zone-b': 1 },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = givingAndReceivingZones(targets(tc.targets), new Map(Object.entries(tc.hinted)));
      expect(Object.fromEntries(got.giving)).toEqual(tc.giving);
      expect(Object.fromEntries(got.receiving)).toEqual(tc.receiving);
    });
  }
});

describe('redistributeHints (C.3.6)', () => {
  const a = (ip: string, ready: boolean | 'unknown' = true): ReturnType<typeof ep> => ep(ip, { zone: 'zone-a', hz: ['zone-a'], ready });
  const cases: {
    name: string;
    slices: EndpointSlice[];
    giving: Record<string, number>;
    receiving: Record<string, number>;
    moves: string[];
    hints: string[][];
  }[] = [
    { name: 'nothing to move', slices: [], giving: {}, receiving: {}, moves: [], hints: [] },
    {
      name: 'a single endpoint moves',
      slices: [makeSlice('s', [a('10.0.0.1')])],
      giving: { 'zone-a': 1 },
      receiving: { 'zone-b': 1 },
      moves: ['zone-a->zone-b'],
      hints: [['10.0.0.1:zone-b']],
    },
    {
      name: 'endpoints from one zone go to two others, receivers in name order',
      slices: [makeSlice('s', [a('10.0.0.1'), a('10.0.0.2'), a('10.0.0.3')])],
      giving: { 'zone-a': 2 },
      receiving: { 'zone-c': 1, 'zone-b': 1 },
      moves: ['zone-a->zone-b', 'zone-a->zone-c'],
      hints: [['10.0.0.1:zone-b', '10.0.0.2:zone-c', '10.0.0.3:zone-a']],
    },
    {
      name: 'walks slices in order and skips not-ready endpoints and zones with nothing to give',
      slices: [
        makeSlice('s1', [a('10.0.0.1', false), ep('10.0.1.1', { zone: 'zone-b', hz: ['zone-b'] })]),
        makeSlice('s2', [a('10.0.0.2', 'unknown'), a('10.0.0.3')]),
      ],
      giving: { 'zone-a': 1 },
      receiving: { 'zone-c': 1 },
      moves: ['zone-a->zone-c'],
      hints: [['10.0.0.1:zone-a', '10.0.1.1:zone-b'], ['10.0.0.2:zone-a', '10.0.0.3:zone-c']],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const drafts = deepFreeze(tc.slices).map((s) => new SliceDraft(s, 'create'));
      const moves = redistributeHints(drafts, { giving: new Map(Object.entries(tc.giving)), receiving: new Map(Object.entries(tc.receiving)) });
      expect(moves.map((m) => `${m.from}->${m.to}`)).toEqual(tc.moves);
      expect(drafts.map((d) => hintsOf(d.result()))).toEqual(tc.hints);
    });
  }
});
