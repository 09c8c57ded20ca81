// Writes to the API keyed by object, newest wish first: each key is written once per content
// (digest), a write in progress picks up a newer wish when it is done, and a failed write is
// retried with backoff until it succeeds or a newer wish replaces it. The ServiceExport status
// writer and the ServiceImport writer share it; what a write does is theirs.

import { realClock } from '@slicemesh/runtime';
import { sleepOn } from './apply.ts';

export interface KeyedWish {
  /** The content's digest: a wish equal to the one last written is not written again. */
  readonly digest: string;
}

export interface KeyedWritesOptions<W extends KeyedWish> {
  readonly signal: AbortSignal;
  /** Writes one wish; throwing is a failed attempt. */
  readonly write: (wish: W) => Promise<void>;
  /** Told of each failed attempt (1-based) before the backoff. */
  readonly failed: (wish: W, err: unknown, attempt: number) => void;
  /** Backoff before attempt `attempt + 1`, ms. */
  readonly retryDelayMs: (attempt: number) => number;
}

export interface KeyedWrites<W extends KeyedWish> {
  /** The newest wish for `key`; written unless equal to the last one written. */
  want(key: string, wish: W): void;
  latest(key: string): W | undefined;
  /** Each key's newest wish. */
  entries(): IterableIterator<[string, W]>;
  /** Resolves once no write is running (after the signal aborted: once they all stopped). */
  idle(): Promise<void>;
}

export function keyedWrites<W extends KeyedWish>(o: KeyedWritesOptions<W>): KeyedWrites<W> {
  const latest = new Map<string, W>();
  const applied = new Map<string, string>();
  const busy = new Set<string>();

  async function run(key: string): Promise<void> {
    busy.add(key);
    try {
      for (let attempt = 1; !o.signal.aborted; ) {
        const wish = latest.get(key);
        if (wish === undefined || applied.get(key) === wish.digest) return;
        try {
          await o.write(wish);
          applied.set(key, wish.digest);
          attempt = 1;
        } catch (err) {
          o.failed(wish, err, attempt);
          await sleepOn(realClock, o.retryDelayMs(attempt), o.signal).catch(() => {});
          attempt++;
        }
      }
    } finally {
      busy.delete(key);
    }
  }

  return {
    want: (key, wish) => {
      latest.set(key, wish);
      if (!busy.has(key)) void run(key);
    },
    latest: (key) => latest.get(key),
    entries: () => latest.entries(),
    idle: async () => {
      while (busy.size > 0) await new Promise((r) => setTimeout(r, 10));
    },
  };
}

/** The backoff both writers default to: 250 ms doubling to 10 s. */
export const defaultRetryDelayMs = (attempt: number): number => Math.min(10_000, 250 * 2 ** Math.min(attempt - 1, 6));
