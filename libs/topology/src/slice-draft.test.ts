import { describe, expect, it } from 'vitest';
import type { Endpoint } from '@slicemesh/model';
import { deepFreeze, ep, makeSlice } from '@slicemesh/testing';
import { sliceHasHints } from './slice-draft.ts';

describe('sliceHasHints', () => {
  const bare = ep('10.0.0.1', 'a', 'n1');
  const hinted = ep('10.0.0.2', 'a', 'n1', { forZones: ['a'] });
  const emptyHints: Endpoint = { ...bare, hints: {} };
  it.each([
    { name: 'no endpoints', endpoints: [], want: false },
    { name: 'no endpoint has hints', endpoints: [bare, bare], want: false },
    { name: 'one endpoint with zone hints', endpoints: [bare, hinted], want: true },
    { name: 'an empty hints object counts, as a non-nil pointer upstream', endpoints: [emptyHints], want: true },
  ])('$name', ({ endpoints, want }) => {
    const slice = deepFreeze(makeSlice('web-x', endpoints));
    expect(sliceHasHints(slice)).toBe(want);
    expect(sliceHasHints(slice), 'asked again of the same object').toBe(want);
  });

  it('answers for each slice object, not for a name', () => {
    const before = deepFreeze(makeSlice('web-x', [hinted]));
    const after = deepFreeze(makeSlice('web-x', [bare]));
    expect([sliceHasHints(before), sliceHasHints(after)]).toEqual([true, false]);
  });
});
