// Retry delays that grow geometrically up to a ceiling.

/** Options for `exponentialBackoff`. */
export interface BackoffOptions {
  /** Delay for attempt 0, in ms. Must be >= 0. */
  readonly baseMs: number;
  /** Ceiling for any delay, in ms. Must be >= baseMs. */
  readonly maxMs: number;
  /** Growth per attempt. Must be >= 1. Defaults to 2. */
  readonly factor?: number;
  /**
   * Fraction in [0, 1] of each delay that is randomly taken off, so that many clients
   * restarting together spread out (also at the ceiling). Defaults to 0 (deterministic).
   */
  readonly jitter?: number;
  /** Source of randomness in [0, 1). Defaults to Math.random; inject for tests. */
  readonly random?: () => number;
}

/**
 * Returns `attempt => ms` with `ms = min(maxMs, baseMs * factor^attempt)`, reduced by up to
 * `jitter` of itself. Attempt 0 (and negative or NaN attempts) gives `baseMs`.
 * Never returns more than `maxMs` or less than `(1 - jitter) * baseMs`.
 *
 * ### Examples
 * ```ts
 * const delay = exponentialBackoff({ baseMs: 1000, maxMs: 1_000_000 });
 * delay(0); // 1000
 * delay(3); // 8000
 * delay(20); // 1_000_000
 * ```
 */
export function exponentialBackoff(options: BackoffOptions): (attempt: number) => number {
  const { baseMs, maxMs, factor = 2, jitter = 0, random = Math.random } = options;
  if (!(baseMs >= 0)) throw new RangeError(`baseMs must be >= 0, got ${baseMs}`);
  if (!(maxMs >= baseMs)) throw new RangeError(`maxMs must be >= baseMs, got ${maxMs} < ${baseMs}`);
  if (!(factor >= 1)) throw new RangeError(`factor must be >= 1, got ${factor}`);
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`jitter must be in [0, 1], got ${jitter}`);
  return (attempt) => {
    const n = attempt > 0 ? Math.floor(attempt) : 0; // NaN counts as 0
    // factor ** n overflows to Infinity for large n, which min() turns into maxMs; NaN only
    // arises from 0 * Infinity or 1 ** Infinity, where the delay never grows.
    const raw = baseMs * factor ** n;
    const delay = Number.isNaN(raw) ? baseMs : Math.min(maxMs, raw);
    return jitter === 0 ? delay : delay * (1 - jitter * random());
  };
}
