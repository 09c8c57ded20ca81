import { describe, expect, it } from 'vitest';
import { exponentialBackoff } from './backoff.ts';
import type { BackoffOptions } from './backoff.ts';

describe('exponentialBackoff', () => {
  const cases: readonly { name: string; options: BackoffOptions; attempts: readonly number[]; want: readonly number[] }[] = [
    { name: 'A.12.4 per-item backoff: 1s doubling to 1000s', options: { baseMs: 1000, maxMs: 1_000_000 }, attempts: [0, 1, 2, 9, 10, 11], want: [1000, 2000, 4000, 512_000, 1_000_000, 1_000_000] },
    { name: 'uses the given factor', options: { baseMs: 800, maxMs: 30_000, factor: 3 }, attempts: [0, 1, 2, 3, 4], want: [800, 2400, 7200, 21_600, 30_000] },
    { name: 'factor 1 is constant, even for an infinite attempt', options: { baseMs: 500, maxMs: 900, factor: 1 }, attempts: [0, 7, Number.POSITIVE_INFINITY], want: [500, 500, 500] },
    { name: 'treats negative and NaN attempts as 0 and rounds fractions down', options: { baseMs: 10, maxMs: 1000 }, attempts: [-3, Number.NaN, 1.9], want: [10, 10, 20] },
    { name: 'caps without overflow for huge attempts', options: { baseMs: 1, maxMs: 60_000 }, attempts: [5000, Number.POSITIVE_INFINITY], want: [60_000, 60_000] },
    { name: 'jitter takes off up to its fraction (random 0.5 → half of jitter)', options: { baseMs: 1000, maxMs: 8000, jitter: 0.5, random: () => 0.5 }, attempts: [0, 3, 10], want: [750, 6000, 6000] },
    { name: 'jitter with random 0 takes nothing off', options: { baseMs: 1000, maxMs: 8000, jitter: 1, random: () => 0 }, attempts: [2], want: [4000] },
    { name: 'a zero base stays zero', options: { baseMs: 0, maxMs: 100 }, attempts: [0, 5, Number.POSITIVE_INFINITY], want: [0, 0, 0] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const delay = exponentialBackoff(tc.options);
      expect(tc.attempts.map(delay)).toEqual(tc.want);
    });
  }

  const invalid: readonly { name: string; options: BackoffOptions; message: RegExp }[] = [
    { name: 'rejects a negative base', options: { baseMs: -1, maxMs: 10 }, message: /baseMs/ },
    { name: 'rejects a max below the base', options: { baseMs: 10, maxMs: 5 }, message: /maxMs/ },
    { name: 'rejects a shrinking factor', options: { baseMs: 1, maxMs: 5, factor: 0.5 }, message: /factor/ },
    { name: 'rejects jitter above 1', options: { baseMs: 1, maxMs: 5, jitter: 1.5 }, message: /jitter/ },
  ];
  for (const tc of invalid) it(tc.name, () => expect(() => exponentialBackoff(tc.options)).toThrow(tc.message));
});
