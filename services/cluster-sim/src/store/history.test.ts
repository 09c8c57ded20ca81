import { describe, expect, it } from 'vitest';
import { EventHistory } from './history.ts';
import type { StoreEvent } from './types.ts';

const ev = (rv: number): StoreEvent => ({ type: 'ADDED', kind: 'Pod', rv, object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${rv}` } } });

describe('EventHistory', () => {
  const cases: readonly { name: string; capacity: number; rvs: readonly number[]; since: number; want: readonly number[]; floor: number }[] = [
    { name: 'empty history has floor 0 and nothing to replay', capacity: 3, rvs: [], since: 0, want: [], floor: 0 },
    { name: 'replays events strictly after the given version', capacity: 5, rvs: [3, 7, 9], since: 7, want: [9], floor: 0 },
    { name: 'a version between events replays from the next one', capacity: 5, rvs: [3, 7, 9], since: 4, want: [7, 9], floor: 0 },
    { name: 'eviction raises the floor to the newest evicted version', capacity: 2, rvs: [3, 7, 9, 12], since: 7, want: [9, 12], floor: 7 },
    { name: 'a version at or past the newest replays nothing', capacity: 3, rvs: [1, 2], since: 2, want: [], floor: 0 },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const h = new EventHistory(tc.capacity);
      for (const rv of tc.rvs) h.push(ev(rv));
      expect(h.since(tc.since).map((e) => e.rv)).toEqual(tc.want);
      expect(h.floor).toBe(tc.floor);
    });
  }

  it('compact empties the history and moves the floor to the given version', () => {
    const h = new EventHistory(4);
    for (const rv of [1, 2, 3]) h.push(ev(rv));
    h.compact(10);
    expect([h.size, h.floor, h.since(0)]).toEqual([0, 10, []]);
    h.push(ev(11));
    expect(h.since(10).map((e) => e.rv)).toEqual([11]);
  });
});
