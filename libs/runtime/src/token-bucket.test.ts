import { describe, expect, it } from 'vitest';
import { FakeClock } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

type Step = { readonly at: number; readonly op: 'tryTake' | 'reserve' | 'msUntilToken' };

describe('TokenBucket', () => {
  const cases: readonly { name: string; everyMs: number; burst: number; steps: readonly Step[]; want: readonly (boolean | number)[] }[] = [
    {
      name: 'starts full and refuses once the burst is spent',
      everyMs: 1000, burst: 2,
      steps: [{ at: 0, op: 'tryTake' }, { at: 0, op: 'tryTake' }, { at: 0, op: 'tryTake' }, { at: 0, op: 'msUntilToken' }],
      want: [true, true, false, 1000],
    },
    {
      name: 'refills one token per interval, continuously',
      everyMs: 1000, burst: 1,
      steps: [{ at: 0, op: 'tryTake' }, { at: 400, op: 'msUntilToken' }, { at: 999, op: 'tryTake' }, { at: 1000, op: 'tryTake' }],
      want: [true, 600, false, true],
    },
    {
      name: 'never holds more than the burst',
      everyMs: 100, burst: 2,
      steps: [{ at: 10_000, op: 'tryTake' }, { at: 10_000, op: 'tryTake' }, { at: 10_000, op: 'tryTake' }],
      want: [true, true, false],
    },
    {
      name: 'A.12.4 overall limit: reserve is free for 100 then waits 100ms per extra item at 10 qps',
      everyMs: 100, burst: 100,
      steps: [...Array.from({ length: 100 }, () => ({ at: 0, op: 'reserve' as const })), { at: 0, op: 'reserve' }, { at: 0, op: 'reserve' }, { at: 100, op: 'reserve' }],
      want: [...Array.from({ length: 100 }, () => 0), 100, 200, 200],
    },
    {
      name: 'sums fractional refills without float drift',
      everyMs: 3, burst: 1,
      steps: [{ at: 0, op: 'tryTake' }, { at: 1, op: 'tryTake' }, { at: 2, op: 'tryTake' }, { at: 3, op: 'tryTake' }],
      want: [true, false, false, true],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const clock = new FakeClock(0);
      const bucket = new TokenBucket({ everyMs: tc.everyMs, burst: tc.burst, clock });
      const got = tc.steps.map((s) => {
        clock.advance(s.at - clock.now());
        return bucket[s.op]();
      });
      expect(got).toEqual(tc.want);
    });
  }

  it('rejects a non-positive interval or a burst below 1', () => {
    const clock = new FakeClock();
    expect(() => new TokenBucket({ everyMs: 0, burst: 1, clock })).toThrow(/everyMs/);
    expect(() => new TokenBucket({ everyMs: 1, burst: 0, clock })).toThrow(/burst/);
  });
});
