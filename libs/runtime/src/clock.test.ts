import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import { FakeClock, realClock, settle } from './clock.ts';
import type { TimerHandle } from './clock.ts';

interface Plan {
  readonly id: string;
  readonly delay: number;
  /** Timers this one schedules when it fires. */
  readonly then?: readonly Plan[];
  readonly cancel?: boolean;
}

describe('FakeClock.advance', () => {
  const cases: readonly { name: string; plans: readonly Plan[]; advance: readonly number[]; fired: readonly string[]; pending: number; now: number }[] = deepFreeze([
    { name: 'fires nothing before a timer is due', plans: [{ id: 'a', delay: 100 }], advance: [99], fired: [], pending: 1, now: 99 },
    { name: 'fires a timer exactly at its due time, reporting that time', plans: [{ id: 'a', delay: 100 }], advance: [100], fired: ['a@100'], pending: 0, now: 100 },
    { name: 'fires due timers in due-time order, not scheduling order', plans: [{ id: 'late', delay: 300 }, { id: 'early', delay: 100 }], advance: [1000], fired: ['early@100', 'late@300'], pending: 0, now: 1000 },
    { name: 'fires timers due at the same time in scheduling order', plans: [{ id: 'x', delay: 50 }, { id: 'y', delay: 50 }, { id: 'z', delay: 50 }], advance: [50], fired: ['x@50', 'y@50', 'z@50'], pending: 0, now: 50 },
    { name: 'fires timers scheduled by a fired timer within the same advance', plans: [{ id: 'a', delay: 100, then: [{ id: 'b', delay: 100, then: [{ id: 'c', delay: 100 }] }] }], advance: [300], fired: ['a@100', 'b@200', 'c@300'], pending: 0, now: 300 },
    { name: 'leaves a chained timer due after the window pending', plans: [{ id: 'a', delay: 100, then: [{ id: 'b', delay: 500 }] }], advance: [300], fired: ['a@100'], pending: 1, now: 300 },
    { name: 'runs a chained timer before an older one due later', plans: [{ id: 'a', delay: 100, then: [{ id: 'b', delay: 10 }] }, { id: 'c', delay: 200 }], advance: [1000], fired: ['a@100', 'b@110', 'c@200'], pending: 0, now: 1000 },
    { name: 'treats a negative delay as zero', plans: [{ id: 'a', delay: -5 }], advance: [0], fired: ['a@0'], pending: 0, now: 0 },
    { name: 'never fires a cleared timer', plans: [{ id: 'a', delay: 100, cancel: true }, { id: 'b', delay: 100 }], advance: [200], fired: ['b@100'], pending: 0, now: 200 },
    { name: 'accumulates time across advances', plans: [{ id: 'a', delay: 250 }], advance: [100, 100, 100], fired: ['a@250'], pending: 0, now: 300 },
  ]);
  for (const tc of cases) {
    it(tc.name, () => {
      const clock = new FakeClock(0);
      const fired: string[] = [];
      const schedule = (p: Plan): TimerHandle =>
        clock.setTimer(() => {
          fired.push(`${p.id}@${clock.now()}`);
          for (const next of p.then ?? []) schedule(next);
        }, p.delay);
      for (const p of tc.plans) {
        const h = schedule(p);
        if (p.cancel) clock.clearTimer(h);
      }
      for (const ms of tc.advance) clock.advance(ms);
      expect(fired).toEqual(tc.fired);
      expect(clock.pending()).toBe(tc.pending);
      expect(clock.now()).toBe(tc.now);
    });
  }

  it('starts at the given epoch and reports the next due time', () => {
    const clock = new FakeClock(1_700_000_000_000);
    expect(clock.nextTimerAt()).toBeUndefined();
    clock.setTimer(() => {}, 20);
    clock.setTimer(() => {}, 10);
    expect(clock.nextTimerAt()).toBe(1_700_000_000_010);
  });

  it('clearing a fired timer is a no-op', () => {
    const clock = new FakeClock();
    const h = clock.setTimer(() => {}, 1);
    clock.advance(1);
    expect(() => clock.clearTimer(h)).not.toThrow();
    expect(clock.pending()).toBe(0);
  });
});

describe('FakeClock.advanceAsync', () => {
  it('lets promise continuations scheduled by a timer run before the next timer fires', async () => {
    const clock = new FakeClock(0);
    const order: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    void gate.then(() => order.push(`continuation@${clock.now()}`));
    clock.setTimer(() => {
      order.push('a');
      release();
    }, 10);
    clock.setTimer(() => order.push('b'), 20);
    await clock.advanceAsync(30);
    expect(order).toEqual(['a', 'continuation@10', 'b']);
  });

  it('settle() flushes chained microtasks', async () => {
    const seen: number[] = [];
    void Promise.resolve()
      .then(() => seen.push(1))
      .then(() => seen.push(2));
    await settle();
    expect(seen).toEqual([1, 2]);
  });
});

describe('realClock', () => {
  it('reads the wall clock in epoch milliseconds', () => {
    const before = Date.now();
    const now = realClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('fires a zero-delay timer and honours clearTimer', async () => {
    const fired: string[] = [];
    const cancelled = realClock.setTimer(() => fired.push('cancelled'), 0);
    realClock.clearTimer(cancelled);
    await new Promise<void>((resolve) => realClock.setTimer(() => resolve(), 0));
    await settle();
    expect(fired).toEqual([]);
  });
});
