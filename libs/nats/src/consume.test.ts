import { describe, expect, it } from 'vitest';
import { errorNakDelayMs } from './consume.ts';

describe('errorNakDelayMs (redelivery backoff after a thrown handler error)', () => {
  const cases = [
    { name: 'first delivery waits 500 ms', n: 1, want: 500 },
    { name: 'doubles per delivery', n: 2, want: 1000 },
    { name: 'fifth delivery waits 8 s', n: 5, want: 8000 },
    { name: 'is capped at 30 s', n: 7, want: 30_000 },
    { name: 'stays capped for huge counts', n: 10_000, want: 30_000 },
    { name: 'treats 0 and negative counts as the first delivery', n: 0, want: 500 },
    { name: 'treats NaN as the first delivery', n: Number.NaN, want: 500 },
  ];
  for (const tc of cases) it(tc.name, () => expect(errorNakDelayMs(tc.n)).toBe(tc.want));
});
