// A keyed work queue with client-go workqueue semantics (Type + DelayingQueue +
// RateLimitingQueue), so that controllers reconcile each key at the level of current state,
// at most once at a time, however many events arrive for it.
import { exponentialBackoff } from './backoff.ts';
import { realClock } from './clock.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

/** Options for `WorkQueue`. Defaults are the EndpointSlice controller's (semantics A.12.4). */
export interface WorkQueueOptions {
  /** Defaults to realClock. */
  readonly clock?: Clock;
  /** First `addRateLimited` delay of a key; doubles per failure. Defaults to 1000 (1s). */
  readonly baseDelayMs?: number;
  /** Ceiling of the per-key delay. Defaults to 1_000_000 (1000s). */
  readonly maxDelayMs?: number;
  /**
   * Overall limit on `addRateLimited`, shared by all keys; the delay used is the larger of
   * the per-key and overall ones. Defaults to 10 qps with a burst of 100; null disables it.
   */
  readonly overallRateLimit?: { readonly qps: number; readonly burst: number } | null;
}

/**
 * Invariants (as in client-go):
 * - a key is in `#queue` at most once, and only if it is dirty and not processing;
 * - a key handed out by `get()` is processing until `done(key)`; adding it meanwhile only
 *   marks it dirty, and `done` puts it back in the queue;
 * - `#waiting` holds at most one timer per key, for its earliest requested time.
 *
 * Keys are compared with SameValueZero (Map/Set), so use strings or other primitives.
 */
export class WorkQueue<K = string> {
  readonly #clock: Clock;
  readonly #itemDelay: (failures: number) => number;
  readonly #overall: TokenBucket | undefined;
  readonly #queue: K[] = [];
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  readonly #waiting = new Map<K, { readonly at: number; readonly handle: TimerHandle }>();
  readonly #failures = new Map<K, number>();
  readonly #getters: Array<(key: K | undefined) => void> = [];
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#itemDelay = exponentialBackoff({ baseMs: options.baseDelayMs ?? 1000, maxMs: options.maxDelayMs ?? 1_000_000 });
    const overall = options.overallRateLimit === undefined ? { qps: 10, burst: 100 } : options.overallRateLimit;
    this.#overall = overall ? new TokenBucket({ everyMs: 1000 / overall.qps, burst: overall.burst, clock: this.#clock }) : undefined;
  }

  /** Queues `key` now, unless it is already queued (then this is a no-op). Ignored after shutDown. */
  add(key: K): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    if (!this.#processing.has(key)) this.#enqueue(key);
  }

  /**
   * Queues `key` after `ms` (now if `ms <= 0`). If the key is already waiting, the earlier
   * time wins, so repeated calls within one window coalesce into one add at the end of the
   * first window: the batching of semantics A.12.2/A.12.6. Ignored after shutDown.
   */
  addAfter(key: K, ms: number): void {
    if (this.#shuttingDown) return;
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const at = this.#clock.now() + ms;
    const existing = this.#waiting.get(key);
    if (existing && existing.at <= at) return;
    if (existing) this.#clock.clearTimer(existing.handle);
    const handle = this.#clock.setTimer(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, ms);
    this.#waiting.set(key, { at, handle });
  }

  /**
   * Queues `key` after its backoff: `baseDelayMs * 2^numRequeues(key)` capped at
   * `maxDelayMs`, or longer if the overall limit is exhausted; then counts one requeue.
   */
  addRateLimited(key: K): void {
    const failures = this.#failures.get(key) ?? 0;
    const delay = Math.max(this.#itemDelay(failures), this.#overall?.reserve() ?? 0);
    this.#failures.set(key, failures + 1);
    this.addAfter(key, delay);
  }

  /** Clears the backoff of `key` (call it when the key succeeded or was given up). */
  forget(key: K): void {
    this.#failures.delete(key);
  }

  /** How many times `addRateLimited(key)` was called since the last `forget(key)`. */
  numRequeues(key: K): number {
    return this.#failures.get(key) ?? 0;
  }

  /**
   * Resolves with the next ready key, which is then processing until `done(key)`: no other
   * `get()` returns it meanwhile. Waiters are served first come, first served. After
   * shutDown, keys already queued are still handed out; then it resolves undefined.
   */
  get(): Promise<K | undefined> {
    if (this.#queue.length > 0) return Promise.resolve(this.#startProcessing(this.#queue.shift() as K));
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /**
   * Like get(), then also takes up to `max - 1` further keys that are ready right now (each then
   * processing until `done`), for a consumer that handles a batch in one write. Resolves []
   * after shutDown once the queue is empty.
   */
  async getBatch(max: number): Promise<K[]> {
    const first = await this.get();
    if (first === undefined) return [];
    const out: K[] = [first];
    while (out.length < max && this.#queue.length > 0) out.push(this.#startProcessing(this.#queue.shift() as K));
    return out;
  }

  /** Ends processing of `key`; if it was added meanwhile, queues it again. */
  done(key: K): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key)) this.#enqueue(key);
  }

  /** Refuses further adds, cancels delayed adds and wakes idle `get()` callers with undefined. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { handle } of this.#waiting.values()) this.#clock.clearTimer(handle);
    this.#waiting.clear();
    for (const resolve of this.#getters.splice(0)) resolve(undefined);
  }

  isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Keys ready to be handed out (not counting processing or waiting ones). */
  len(): number {
    return this.#queue.length;
  }

  #enqueue(key: K): void {
    const getter = this.#getters.shift();
    if (getter) getter(this.#startProcessing(key));
    else this.#queue.push(key);
  }

  #startProcessing(key: K): K {
    this.#dirty.delete(key);
    this.#processing.add(key);
    return key;
  }
}
