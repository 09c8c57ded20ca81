// The recorder's correlator (A.13), pure: given an event and the time, it says whether to
// create a new Event, patch an existing one, or drop the event — the decisions client-go's
// recorder takes before it writes. The steps run in client-go's order: aggregate (A.13.2),
// de-duplicate (A.13.3), then filter spam (A.13.1). Because the filter runs last, an event it
// drops has still been counted, so the next write carries the full count.
//
// Time is passed in (habit 13); names are `<object name>.<hex nanoseconds>`, made unique even
// for events in the same millisecond, since two Events with one name would be one create
// refused with AlreadyExists.

import { Aggregator } from './aggregator.ts';
import { EventLog } from './event-log.ts';
import type { EventObject, ObservedEvent } from './event-keys.ts';
import { aggregateKey, eventKey, spamKey } from './event-keys.ts';
import { SpamFilter } from './spam-filter.ts';

export type { EventObject, ObservedEvent } from './event-keys.ts';

export interface RecorderOptions {
  readonly cacheSize: number;
  readonly spamBurst: number;
  /** Tokens per second. */
  readonly spamQps: number;
  readonly aggregateMaxEvents: number;
  readonly aggregateIntervalMs: number;
}

/** client-go's numbers (tools/record/events_cache.go). */
export const RECORDER_DEFAULTS: RecorderOptions = Object.freeze({
  cacheSize: 4096,
  spamBurst: 25,
  spamQps: 1 / 300,
  aggregateMaxEvents: 10,
  aggregateIntervalMs: 600_000,
});

/** A core/v1 Event as the correlator wants it stored. Times are ms since the epoch. */
export interface RecordedEvent {
  readonly namespace: string;
  readonly name: string;
  readonly involvedObject: EventObject;
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly component: string;
  readonly count: number;
  readonly firstMs: number;
  readonly lastMs: number;
}

export type Correlation =
  /** Spam: write nothing. */
  | { readonly action: 'drop' }
  /** A new Event. */
  | { readonly action: 'create'; readonly event: RecordedEvent; readonly combined: boolean }
  /** An existing Event (by name) gets count, lastTimestamp and message from `event`. */
  | { readonly action: 'patch'; readonly event: RecordedEvent; readonly combined: boolean };

/** The namespace an Event about `o` lives in: the object's, `default` for cluster-scoped ones. */
export function eventNamespace(o: EventObject): string {
  return o.namespace === '' ? 'default' : o.namespace;
}

export class EventCorrelator {
  readonly #spam: SpamFilter;
  readonly #aggregator: Aggregator;
  readonly #log: EventLog;
  #lastNanos = 0n;

  constructor(opts: Partial<RecorderOptions> = {}) {
    const o = { ...RECORDER_DEFAULTS, ...opts };
    this.#spam = new SpamFilter({ burst: o.spamBurst, qps: o.spamQps, cacheSize: o.cacheSize });
    this.#aggregator = new Aggregator({ maxEvents: o.aggregateMaxEvents, intervalMs: o.aggregateIntervalMs, cacheSize: o.cacheSize });
    this.#log = new EventLog(o.cacheSize);
  }

  /** `<object name>.<hex nanoseconds of nowMs>`, one nanosecond later than the last name when needed. */
  #name(object: EventObject, nowMs: number): string {
    let nanos = BigInt(Math.floor(nowMs)) * 1_000_000n;
    if (nanos <= this.#lastNanos) nanos = this.#lastNanos + 1n;
    this.#lastNanos = nanos;
    return `${object.name}.${nanos.toString(16)}`;
  }

  correlate(e: ObservedEvent, nowMs: number): Correlation {
    const group = aggregateKey(e);
    const agg = this.#aggregator.observe(group, e.message, nowMs);
    // A combined Event is identified by its group, so later similar events count on it.
    const key = agg.combined ? `combined\u0000${group}` : eventKey(e);
    const message = agg.combined ? agg.message : e.message;
    const { previous, current } = this.#log.observe(key, () => this.#name(e.object, nowMs), nowMs);
    if (!this.#spam.allow(spamKey(e), nowMs)) return { action: 'drop' };
    const event: RecordedEvent = {
      namespace: eventNamespace(e.object),
      name: current.name,
      involvedObject: e.object,
      type: e.type,
      reason: e.reason,
      message,
      component: e.component,
      count: current.count,
      firstMs: current.firstMs,
      lastMs: nowMs,
    };
    return { action: previous === undefined ? 'create' : 'patch', event, combined: agg.combined };
  }
}
