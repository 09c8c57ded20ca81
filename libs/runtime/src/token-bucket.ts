// A token bucket measured on an injected clock, shared by the work queue's overall rate
// limit and the bounded-frequency runner's burst allowance.
import type { Clock } from './clock.ts';

/** Options for `TokenBucket`. */
export interface TokenBucketOptions {
  /** One token is added every `everyMs` milliseconds (10 qps = 100). Must be > 0. */
  readonly everyMs: number;
  /** Capacity, and the number of tokens at construction. Must be >= 1. */
  readonly burst: number;
  readonly clock: Clock;
}

// Tolerates float error from fractional refills (e.g. 3 × 1/3 of a token).
const EPSILON = 1e-9;

/** Starts full; refills continuously up to `burst`. */
export class TokenBucket {
  readonly #everyMs: number;
  readonly #burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #last: number;

  constructor(options: TokenBucketOptions) {
    if (!(options.everyMs > 0)) throw new RangeError(`everyMs must be > 0, got ${options.everyMs}`);
    if (!(options.burst >= 1)) throw new RangeError(`burst must be >= 1, got ${options.burst}`);
    this.#everyMs = options.everyMs;
    this.#burst = options.burst;
    this.#clock = options.clock;
    this.#tokens = options.burst;
    this.#last = options.clock.now();
  }

  /** Takes a token if one is available now; otherwise takes nothing and returns false. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens + EPSILON < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * Takes a token unconditionally, going into debt if needed, and returns how long the
   * caller must wait (ms) before using it: 0 while tokens remain.
   */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens + EPSILON >= 0 ? 0 : -this.#tokens * this.#everyMs;
  }

  /** Milliseconds until `tryTake` would succeed; 0 if it would succeed now. */
  msUntilToken(): number {
    this.#refill();
    const missing = 1 - this.#tokens;
    return missing <= EPSILON ? 0 : missing * this.#everyMs;
  }

  #refill(): void {
    const now = this.#clock.now();
    if (now > this.#last) {
      this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#last) / this.#everyMs);
    }
    this.#last = Math.max(this.#last, now);
  }
}
