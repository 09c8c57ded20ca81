// The aggregator (A.13.2): similar events (same source, object, type and reason) that keep
// coming with different messages are folded into one Event. A group remembers the distinct
// messages it saw; once it holds `maxEvents` of them within `intervalMs` of each other, every
// further similar event is recorded as the group's combined Event instead of its own.

import { Lru } from './lru.ts';

export const COMBINED_PREFIX = '(combined from similar events): ';

export interface AggregatorOptions {
  /** Distinct messages before events are combined. client-go: 10. */
  readonly maxEvents: number;
  /** Idle time after which a group starts afresh, ms. client-go: 600 s. */
  readonly intervalMs: number;
  /** Groups kept. client-go: 4096. */
  readonly cacheSize: number;
}

interface Group {
  messages: Set<string>;
  lastMs: number;
}

/** What the aggregator made of an event. */
export type Aggregated =
  /** Record the event as it is, under its own identity. */
  | { readonly combined: false }
  /** Record the combined Event of the group, identified by the group key, with this message. */
  | { readonly combined: true; readonly message: string };

export class Aggregator {
  readonly #opts: AggregatorOptions;
  readonly #groups: Lru<string, Group>;

  constructor(opts: AggregatorOptions) {
    this.#opts = opts;
    this.#groups = new Lru(opts.cacheSize);
  }

  observe(groupKey: string, message: string, nowMs: number): Aggregated {
    let g = this.#groups.get(groupKey);
    if (g === undefined || nowMs - g.lastMs > this.#opts.intervalMs) g = { messages: new Set(), lastMs: nowMs };
    g.messages.add(message);
    g.lastMs = nowMs;
    this.#groups.set(groupKey, g);
    if (g.messages.size < this.#opts.maxEvents) return { combined: false };
    // Keep the set from growing past the threshold by dropping one message (client-go drops an
    // arbitrary one; we drop the oldest). A message still in the set is then recorded as itself
    // again, a new one (or the dropped one) as the combined Event.
    g.messages.delete(g.messages.values().next().value as string);
    return { combined: true, message: COMBINED_PREFIX + message };
  }
}
