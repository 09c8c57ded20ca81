import { describe, expect, it } from 'vitest';
import { ManualClock } from './manual-clock.ts';

describe('ManualClock', () => {
  it('fires due timers in due order, ties in the order set, with now() at the due time', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
    clock.advance(25);
    expect([fired, clock.now()]).toEqual([['a@10', 'b@20', 'c@20'], 25]);
  });

  it('runs timers set by callbacks within the same advance, and not later ones', () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(() => {
      fired.push(clock.now());
      clock.setTimer(() => fired.push(clock.now()), 0);
      clock.setTimer(() => fired.push(clock.now()), 100);
    }, 5);
    clock.advance(10);
    expect([fired, clock.pending()]).toEqual([[5, 5], 1]);
  });

  it('cleared timers never fire; negative delays count as zero', () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    const h = clock.setTimer(() => fired.push('x'), 5);
    clock.setTimer(() => fired.push('y'), -5);
    clock.clearTimer(h);
    clock.advance(10);
    expect(fired).toEqual(['y']);
  });
});
