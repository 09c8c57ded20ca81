// Coalescing deferred work on the injected clock: keys added while a run is pending are
// processed once, in the order first added. Controllers use it so that store callbacks only
// record what changed and the writes happen afterwards, outside the store's dispatch.
import type { Clock, TimerHandle } from '../time/clock.ts';

export class DeferredQueue {
  private readonly clock: Clock;
  private readonly work: (key: string) => void;
  private readonly delayMs: number;
  private readonly onError: (key: string, err: unknown) => void;
  #pending = new Set<string>();
  #timer: TimerHandle | undefined;
  #stopped = false;

  constructor(
    clock: Clock,
    work: (key: string) => void,
    delayMs = 0,
    onError: (key: string, err: unknown) => void = () => {},
  ) {
    this.clock = clock;
    this.work = work;
    this.delayMs = delayMs;
    this.onError = onError;
  }

  add(key: string): void {
    if (this.#stopped) return;
    this.#pending.add(key);
    this.#timer ??= this.clock.setTimer(() => this.#run(), this.delayMs);
  }

  get size(): number {
    return this.#pending.size;
  }

  /** Runs everything pending now (used by bootstrap to settle without waiting). */
  flush(): void {
    if (this.#timer) this.clock.clearTimer(this.#timer);
    this.#run();
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) this.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#pending.clear();
  }

  #run(): void {
    this.#timer = undefined;
    const keys = [...this.#pending];
    this.#pending = new Set();
    for (const key of keys) {
      try {
        this.work(key);
      } catch (err) {
        this.onError(key, err);
      }
    }
  }
}
