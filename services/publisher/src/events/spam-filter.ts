// The spam filter (A.13.1): one token bucket per source and object. It starts full (burst 25)
// and refills at one token per 5 minutes, so an object that is always unhealthy produces a
// burst of events and then one every five minutes instead of a steady flood.

import { Lru } from './lru.ts';

export interface SpamFilterOptions {
  /** Events allowed at once per source and object. client-go: 25. */
  readonly burst: number;
  /** Refill, tokens per second. client-go: 1/300. */
  readonly qps: number;
  /** Buckets kept. client-go: 4096. */
  readonly cacheSize: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

export class SpamFilter {
  readonly #opts: SpamFilterOptions;
  readonly #buckets: Lru<string, Bucket>;

  constructor(opts: SpamFilterOptions) {
    this.#opts = opts;
    this.#buckets = new Lru(opts.cacheSize);
  }

  /** True when the event under `key` may pass at `nowMs` (it takes a token), false when it is spam. */
  allow(key: string, nowMs: number): boolean {
    const b = this.#buckets.get(key) ?? { tokens: this.#opts.burst, atMs: nowMs };
    // A clock that steps back refills nothing rather than draining the bucket.
    const elapsed = Math.max(0, nowMs - b.atMs) / 1000;
    b.tokens = Math.min(this.#opts.burst, b.tokens + elapsed * this.#opts.qps);
    b.atMs = Math.max(b.atMs, nowMs);
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.#buckets.set(key, b);
    return ok;
  }
}
