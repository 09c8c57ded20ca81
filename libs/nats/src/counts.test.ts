import { describe, expect, it } from 'vitest';
import type { JetStreamManager } from '@nats-io/jetstream';
import { checkedCount, describeImpossibleCount, onceEach, sumCounts, trustedCount } from './counts.ts';
import type { ImpossibleCount } from './counts.ts';
import { pendingCount } from './consume.ts';

// 2^64 − 1 as JSON.parse reads it from the server's reply.
const UNDERFLOW = JSON.parse('18446744073709551615') as number;

describe('trustedCount', () => {
  it.each([
    [0, 0],
    [412, 412],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    [UNDERFLOW, null],
    [Number.MAX_SAFE_INTEGER + 2, null],
    [-1, null],
    [1.5, null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
    [undefined, null],
    [null, null],
  ])('%s → %s', (value, want) => {
    expect(trustedCount(value)).toBe(want);
  });
});

describe('checkedCount / onceEach', () => {
  it('reports an impossible value, not a missing one, and onceEach passes each count on once', () => {
    const seen: ImpossibleCount[] = [];
    const sink = onceEach((c) => seen.push(c));
    expect(checkedCount(UNDERFLOW, 'consumer KUBE/s-0 num_pending', sink)).toBeNull();
    expect(checkedCount(UNDERFLOW, 'consumer KUBE/s-0 num_pending', sink)).toBeNull();
    expect(checkedCount(-3, 'consumer KUBE/s-1 num_pending', sink)).toBeNull();
    expect(checkedCount(undefined, 'stream X messages', sink)).toBeNull();
    expect(checkedCount(7, 'stream X messages', sink)).toBe(7);
    expect(seen).toEqual([
      { what: 'consumer KUBE/s-0 num_pending', value: UNDERFLOW },
      { what: 'consumer KUBE/s-1 num_pending', value: -3 },
    ]);
    expect(describeImpossibleCount(seen[0]!)).toMatch(/^NATS reported consumer KUBE\/s-0 num_pending = 18446744073709552000, which cannot be true .* shown as unknown \("\?"\)/);
  });

  it('sumCounts is unknown when any part is', () => {
    expect(sumCounts([1, 2, 3])).toBe(6);
    expect(sumCounts([])).toBe(0);
    expect(sumCounts([1, null, 3])).toBeNull();
  });
});

describe('pendingCount', () => {
  const jsmWith = (num_pending: number, num_ack_pending: number): JetStreamManager =>
    ({ consumers: { info: () => Promise.resolve({ num_pending, num_ack_pending }) } }) as unknown as JetStreamManager;

  it('adds pending and ack-pending', async () => {
    expect(await pendingCount(jsmWith(5, 2), 'KUBE', 'slicer-0')).toBe(7);
  });

  it('is null (unknown) for a pending count of 2^64 − 1, and says which consumer', async () => {
    const seen: ImpossibleCount[] = [];
    expect(await pendingCount(jsmWith(UNDERFLOW, 0), 'KUBE', 'slicer-0', (c) => seen.push(c))).toBeNull();
    expect(seen).toEqual([{ what: 'consumer KUBE/slicer-0 num_pending', value: UNDERFLOW }]);
  });
});
