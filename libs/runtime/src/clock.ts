// The one place services read time and schedule callbacks, so that anything paced by time
// (queues, runners, shutdown deadlines) can be driven by a FakeClock in tests.

declare const timerBrand: unique symbol;

/** Opaque handle returned by `Clock.setTimer`; only meaningful to the clock that made it. */
export type TimerHandle = { readonly [timerBrand]: true };

/** Time source plus one-shot timers. Inject it; never call Date.now or setTimeout directly. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds (negative or NaN counts as 0). */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; a no-op for a timer that already fired or was cleared. */
  clearTimer(handle: TimerHandle): void;
}

function clampDelay(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/** The wall clock and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, clampDelay(ms)) as unknown as TimerHandle,
  clearTimer: (handle) => clearTimeout(handle as unknown as ReturnType<typeof setTimeout>),
};

/**
 * Resolves after every microtask queued so far (and those they queue) has run. Uses one
 * macrotask turn, not a delay: handy after `FakeClock.advance` when timers resolve promises.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface FakeTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * A manual clock for tests. Time moves only through `advance` and `advanceAsync`.
 *
 * ### Examples
 * ```ts
 * const clock = new FakeClock(0);
 * clock.setTimer(() => fired.push(clock.now()), 100);
 * clock.advance(250); // fired = [100], clock.now() = 250
 * ```
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  // Keyed by sequence number so clearTimer is O(1); ordering is resolved when firing.
  readonly #timers = new Map<number, FakeTimer>();

  /** @param startMs initial `now()`; defaults to 0. */
  constructor(startMs = 0) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + clampDelay(ms), seq, fn });
    return { seq } as unknown as TimerHandle;
  }

  clearTimer(handle: TimerHandle): void {
    this.#timers.delete((handle as unknown as { seq: number }).seq);
  }

  /** Number of timers scheduled and not yet fired or cleared. */
  pending(): number {
    return this.#timers.size;
  }

  /** When the earliest pending timer is due, or undefined when none is pending. */
  nextTimerAt(): number | undefined {
    return this.#nextDue(Infinity)?.at;
  }

  /**
   * Moves time forward by `ms`, firing every timer due by then in due-time order (ties in
   * scheduling order), including timers that fired timers schedule within the window.
   * During each callback `now()` equals that timer's due time. Synchronous: promises the
   * callbacks resolve have not run yet when it returns (see `advanceAsync`).
   */
  advance(ms: number): void {
    const target = this.#now + clampDelay(ms);
    for (let t = this.#nextDue(target); t; t = this.#nextDue(target)) this.#fire(t);
    this.#now = target;
  }

  /** Like `advance`, but lets pending microtasks run before and after every timer. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + clampDelay(ms);
    await settle();
    for (let t = this.#nextDue(target); t; t = this.#nextDue(target)) {
      this.#fire(t);
      await settle();
    }
    this.#now = target;
  }

  #fire(t: FakeTimer): void {
    this.#timers.delete(t.seq);
    this.#now = Math.max(this.#now, t.at);
    t.fn();
  }

  #nextDue(limit: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
