// Paces an expensive, idempotent function (a data-plane sync) the way kube-proxy's
// BoundedFrequencyRunner does (semantics D.4.14): callers ask for a run at any rate, the
// runner decides when.
//
// The three guarantees, while started:
//  1. Minimum interval: runs never overlap, and a run starts at least `minIntervalMs` after
//     the previous one completed — except that up to `burst` runs may go back to back.
//     Burst credit comes back at one run per `minIntervalMs` (a token bucket).
//  2. No lost requests: after `run()` the function starts at least once more, as soon as
//     (1) allows. Requests that cannot run yet coalesce into a single deferred run.
//  3. Maximum interval: the function runs at least every `maxIntervalMs` (counted from the
//     end of the previous run) even if nobody calls `run()`; `retryAfter(ms)` brings that
//     next run forward to `ms` from the call (still subject to 1).
//
// Upstream has since (2025) dropped burst and folded retries into the function's error
// result; this keeps the burst-and-RetryAfter form that D.4.14 specifies.
import { realClock } from './clock.ts';
import type { Clock, TimerHandle } from './clock.ts';
import { TokenBucket } from './token-bucket.ts';

/** Options for `BoundedFrequencyRunner`. */
export interface BoundedFrequencyRunnerOptions {
  /** For the caller's logs and metrics. */
  readonly name: string;
  /** The work. Runs are serialized; a throw or rejection goes to `onError`. */
  readonly fn: () => Promise<void> | void;
  /** >= 0; 0 disables rate limiting (and burst). */
  readonly minIntervalMs: number;
  /** Must be >= minIntervalMs. */
  readonly maxIntervalMs: number;
  /** Runs allowed back to back; >= 1. Defaults to 2 (kube-proxy's). */
  readonly burst?: number;
  /** Defaults to realClock. */
  readonly clock?: Clock;
  /** Receives what `fn` threw. The runner does not retry by itself: call `retryAfter`. */
  readonly onError?: (err: unknown) => void;
}

/**
 * ### Examples
 * ```ts
 * const sync = new BoundedFrequencyRunner({ name: 'sync-rules', fn: syncRules, minIntervalMs: 1000, maxIntervalMs: 30_000 });
 * sync.start();
 * tracker.on('change', () => sync.run());
 * ```
 */
export class BoundedFrequencyRunner {
  readonly name: string;
  readonly #fn: () => Promise<void> | void;
  readonly #minIntervalMs: number;
  readonly #maxIntervalMs: number;
  readonly #clock: Clock;
  readonly #limiter: TokenBucket | undefined;
  readonly #onError: (err: unknown) => void;

  #started = false;
  #inFlight = false;
  // Requests that arrived while stopped or during a run; served when that ends.
  #runRequested = false;
  #retryAt = Infinity;
  #lastRunEnd = -Infinity;
  // One timer serves all three reasons to wake: deferred request, retry, and periodic run.
  #timer: TimerHandle | undefined;
  #timerAt = Infinity;

  constructor(options: BoundedFrequencyRunnerOptions) {
    const { name, minIntervalMs, maxIntervalMs, burst = 2 } = options;
    if (!(minIntervalMs >= 0)) throw new RangeError(`${name}: minIntervalMs must be >= 0, got ${minIntervalMs}`);
    if (!(maxIntervalMs >= minIntervalMs)) throw new RangeError(`${name}: maxIntervalMs (${maxIntervalMs}) must be >= minIntervalMs (${minIntervalMs})`);
    if (!(burst >= 1)) throw new RangeError(`${name}: burst must be >= 1, got ${burst}`);
    this.name = name;
    this.#fn = options.fn;
    this.#minIntervalMs = minIntervalMs;
    this.#maxIntervalMs = maxIntervalMs;
    this.#clock = options.clock ?? realClock;
    this.#onError = options.onError ?? (() => {});
    this.#limiter = minIntervalMs > 0 ? new TokenBucket({ everyMs: minIntervalMs, burst, clock: this.#clock }) : undefined;
  }

  /** Starts pacing: the periodic run is due `maxIntervalMs` from now; a `run()` made before start runs now. */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#schedule(this.#maxIntervalMs);
    if (this.#inFlight) return; // restarted during a run: #finish picks up pending work
    this.#applyPendingRetry();
    if (this.#runRequested) {
      this.#runRequested = false;
      this.#tryRun();
    }
  }

  /** Cancels the timer; no run starts until `start()` (a run in progress completes). */
  stop(): void {
    this.#started = false;
    this.#cancelTimer();
  }

  /** Asks for a run as soon as the minimum interval allows (guarantee 2). Never blocks. */
  run(): void {
    if (!this.#started || this.#inFlight) this.#runRequested = true;
    else this.#tryRun();
  }

  /**
   * Ensures a run starts no later than `ms` from now (or as soon after as guarantee 1
   * allows). Has no effect if a run is already due sooner. Callable from inside `fn`.
   */
  retryAfter(ms: number): void {
    this.#retryAt = Math.min(this.#retryAt, this.#clock.now() + Math.max(0, ms));
    if (this.#started && !this.#inFlight) this.#applyPendingRetry();
  }

  #applyPendingRetry(): void {
    if (this.#retryAt < this.#timerAt) this.#schedule(this.#retryAt - this.#clock.now());
    this.#retryAt = Infinity;
  }

  #tryRun(): void {
    if (this.#inFlight) {
      this.#runRequested = true; // runs never overlap; #finish serves this
      return;
    }
    if (this.#limiter && !this.#limiter.tryTake()) {
      // Not allowed yet: wake when it will be, unless the timer is due even sooner.
      const now = this.#clock.now();
      const possibleAt = Math.max(this.#lastRunEnd + this.#minIntervalMs, now + this.#limiter.msUntilToken());
      if (possibleAt < this.#timerAt) this.#schedule(possibleAt - now);
      return;
    }
    this.#execute();
  }

  #execute(): void {
    this.#cancelTimer();
    this.#inFlight = true;
    let result: Promise<void> | void;
    try {
      result = this.#fn();
    } catch (err) {
      this.#onError(err);
      this.#finish();
      return;
    }
    // A synchronous fn finishes synchronously, so requests made after it see the new state.
    if (result instanceof Promise) {
      result.then(
        () => this.#finish(),
        (err: unknown) => {
          this.#onError(err);
          this.#finish();
        },
      );
    } else {
      this.#finish();
    }
  }

  #finish(): void {
    this.#inFlight = false;
    this.#lastRunEnd = this.#clock.now();
    if (!this.#started) return;
    this.#schedule(this.#maxIntervalMs);
    this.#applyPendingRetry();
    if (this.#runRequested) {
      this.#runRequested = false;
      this.#tryRun();
    }
  }

  #schedule(delayMs: number): void {
    this.#cancelTimer();
    const delay = Math.max(0, delayMs);
    this.#timerAt = this.#clock.now() + delay;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.#tryRun();
    }, delay);
  }

  #cancelTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }
}
