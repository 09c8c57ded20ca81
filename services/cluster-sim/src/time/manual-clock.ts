// A clock that moves only when told to, for deterministic tests of the driver and the
// watch server. Timers live in a binary heap: scenarios schedule tens of thousands.
import { clampDelay } from './clock.ts';
import type { Clock, TimerHandle } from './clock.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #heap: Timer[] = [];
  readonly #cancelled = new Set<number>();

  /** @param startMs initial `now()`; defaults to 2026-01-01T00:00:00Z. */
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.#now + clampDelay(ms), seq: ++this.#seq, fn };
    this.#push(timer);
    return { seq: timer.seq } as unknown as TimerHandle;
  }

  clearTimer(handle: TimerHandle): void {
    this.#cancelled.add((handle as unknown as { seq: number }).seq);
  }

  /** Timers scheduled and neither fired nor cleared. */
  pending(): number {
    return this.#heap.filter((t) => !this.#cancelled.has(t.seq)).length;
  }

  /**
   * Moves time forward by `ms`, firing every timer due by then in due order (ties in the
   * order they were set), including timers set by callbacks within the window. During a
   * callback `now()` is that timer's due time.
   */
  advance(ms: number): void {
    const target = this.#now + clampDelay(ms);
    for (;;) {
      const top = this.#heap[0];
      if (!top || top.at > target) break;
      this.#pop();
      if (this.#cancelled.delete(top.seq)) continue;
      this.#now = Math.max(this.#now, top.at);
      top.fn();
    }
    this.#now = target;
  }

  #less(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  #push(t: Timer): void {
    const h = this.#heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  #pop(): void {
    const h = this.#heap;
    const last = h.pop();
    if (!last || h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.#less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.#less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
