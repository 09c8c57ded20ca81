// The de-duplicating log (A.13.3): remembers, per identity, the Event it was recorded as, so the
// next identical event becomes a patch of that Event (one more in `count`, a new
// `lastTimestamp` and message) instead of a new object.

import { Lru } from './lru.ts';

/** What is remembered of a recorded Event. */
export interface LoggedEvent {
  readonly name: string;
  readonly count: number;
  readonly firstMs: number;
}

export class EventLog {
  readonly #entries: Lru<string, LoggedEvent>;

  constructor(cacheSize: number) {
    this.#entries = new Lru(cacheSize);
  }

  /**
   * Records one more occurrence under `key`: returns the previous record (undefined when this
   * is the first) and the new one. `name()` and `nowMs` name and date a first occurrence.
   */
  observe(key: string, name: () => string, nowMs: number): { readonly previous: LoggedEvent | undefined; readonly current: LoggedEvent } {
    const previous = this.#entries.get(key);
    const current = previous === undefined ? { name: name(), count: 1, firstMs: nowMs } : { name: previous.name, count: previous.count + 1, firstMs: previous.firstMs };
    this.#entries.set(key, current);
    return { previous, current };
  }
}
