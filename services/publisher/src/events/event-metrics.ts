// The event writer's Prometheus series, beside the publisher's. Labels are bounded: results,
// outcomes, verbs and status codes.

import type { Metrics } from '@slicemesh/runtime';
import type { RecordOutcome } from './record-event.ts';

/** What became of one request: written, counted in shadow mode, or dropped on the way. */
export type EventOutcome = RecordOutcome | 'spam-dropped' | 'would-create' | 'would-patch';

export interface EventWriterMetrics {
  /** A request read from EVENTS: received, rejected (unparsable), stale (older than EVENT_MAX_AGE). */
  request(result: 'received' | 'rejected' | 'stale'): void;
  outcome(o: EventOutcome): void;
  /** A request recorded as (part of) a combined Event. */
  aggregated(): void;
  retry(verb: string, statusCode: number): void;
  rateLimitWait(ms: number): void;
}

export function eventWriterMetrics(metrics: Metrics): EventWriterMetrics {
  const requests = metrics.counter({ name: 'publisher_event_requests_total', help: 'Event requests read from EVENTS, by result: received, rejected (unparsable), stale (older than EVENT_MAX_AGE, skipped).', labelNames: ['result'] });
  const outcomes = metrics.counter({
    name: 'publisher_events_total',
    help: 'Event requests by outcome: created, patched (count+1 of an existing Event), recreated (patched Event was gone), spam-dropped (per-object budget spent), refused and gave-up (API errors; dropped), would-create and would-patch (shadow mode).',
    labelNames: ['outcome'],
  });
  const aggregated = metrics.counter({ name: 'publisher_events_aggregated_total', help: 'Event requests recorded as a "(combined from similar events)" Event.' });
  const retries = metrics.counter({ name: 'publisher_event_api_retries_total', help: 'Event writes repeated after no answer, 429, 5xx, 401 or 403, by verb and status code (0: no answer).', labelNames: ['verb', 'code'] });
  const waited = metrics.counter({ name: 'publisher_event_rate_limit_wait_seconds_total', help: 'Time Event writes waited for the client-side QPS/burst limit.' });
  return {
    request: (result) => requests.inc({ result }),
    outcome: (o) => outcomes.inc({ outcome: o }),
    aggregated: () => aggregated.inc(),
    retry: (verb, code) => retries.inc({ verb, code: String(code) }),
    rateLimitWait: (ms) => waited.inc(ms / 1000),
  };
}
