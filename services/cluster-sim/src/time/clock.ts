// Time for the simulator: every timestamp and every delay goes through a Clock, so the
// whole cluster can run on a ManualClock in tests. The shape matches @slicemesh/runtime's
// Clock (now/setTimer/clearTimer), so either implementation can be injected.

declare const timerBrand: unique symbol;

/** Opaque handle returned by `Clock.setTimer`. */
export type TimerHandle = { readonly [timerBrand]: true };

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds (negative or NaN counts as 0). */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer; a no-op for one that already fired or was cleared. */
  clearTimer(handle: TimerHandle): void;
}

export function clampDelay(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

/**
 * The wall clock with Node's timers. `speed` > 1 shortens every delay (a scenario runs
 * `speed` times faster) while `now()` stays the wall clock.
 */
export function realClock(speed = 1): Clock {
  const factor = speed > 0 && Number.isFinite(speed) ? speed : 1;
  return {
    now: () => Date.now(),
    setTimer: (fn, ms) => setTimeout(fn, clampDelay(ms) / factor) as unknown as TimerHandle,
    clearTimer: (handle) => clearTimeout(handle as unknown as ReturnType<typeof setTimeout>),
  };
}
