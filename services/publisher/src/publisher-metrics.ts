// The publisher's Prometheus metrics. Labels are bounded: verbs, outcomes and status codes.

import type { Metrics } from '@slicemesh/runtime';
import type { ActionResult, ApplyEvent } from './apply.ts';

export interface PublisherMetrics {
  readonly metrics: Metrics;
  result(r: ActionResult): void;
  event(e: ApplyEvent): void;
  rateLimitWait(ms: number): void;
  applied(seq: number): void;
  message(result: 'applied' | 'redelivered' | 'rejected'): void;
  batch(seconds: number, actions: number): void;
}

const VERB: Readonly<Record<string, string>> = { create: 'create', update: 'update', delete: 'delete' };

export function publisherMetrics(metrics: Metrics): PublisherMetrics {
  const writes = metrics.counter({
    name: 'publisher_writes_total',
    help: 'API writes by verb (create, update, delete) and outcome (ok, invalid, rejected).',
    labelNames: ['verb', 'outcome'],
  });
  const wouldWrite = metrics.counter({ name: 'publisher_would_writes_total', help: 'shadow mode: writes that write mode would have made, by verb.', labelNames: ['verb'] });
  const skipped = metrics.counter({
    name: 'publisher_skipped_total',
    help: 'Slices left alone, by reason: unchanged, foreign (another manager or none), gone, not-owned (the wanted slice names a manager we do not own).',
    labelNames: ['reason'],
  });
  const foreign = metrics.counter({ name: 'publisher_foreign_skipped_total', help: 'Actions on a slice that exists under another manager (or none), left untouched.' });
  const conflicts = metrics.counter({ name: 'publisher_conflicts_retried_total', help: 'Re-reads after 409 Conflict/AlreadyExists, 404 on update or a terminating slice, by decision.', labelNames: ['decision'] });
  const retries = metrics.counter({ name: 'publisher_api_retries_total', help: 'Requests repeated after no answer, 429, 5xx, 401 or 403, by verb and status code (0: no answer).', labelNames: ['verb', 'code'] });
  const waited = metrics.counter({ name: 'publisher_rate_limit_wait_seconds_total', help: 'Time requests waited for the client-side QPS/burst limit.' });
  const lastSeq = metrics.gauge({ name: 'publisher_last_applied_seq', help: 'Last SLICES sequence applied and recorded.' });
  const messages = metrics.counter({ name: 'publisher_messages_total', help: 'Source messages (SLICES messages or hinted entries) by result: applied, redelivered (at or below the recorded offset), rejected (unparsable).', labelNames: ['result'] });
  const batchSeconds = metrics.histogram({
    name: 'publisher_batch_duration_seconds',
    help: 'Time to apply one batch of coalesced slice actions.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  });
  const actions = metrics.counter({ name: 'publisher_actions_total', help: 'Slice actions after coalescing.' });

  return {
    metrics,
    result(r) {
      switch (r.outcome) {
        case 'created':
        case 'updated':
        case 'deleted':
          writes.inc({ verb: VERB[r.decision] ?? r.decision, outcome: 'ok' });
          return;
        case 'invalid':
        case 'rejected':
          writes.inc({ verb: VERB[r.decision] ?? 'get', outcome: r.outcome });
          return;
        case 'would-create':
        case 'would-update':
        case 'would-delete':
          wouldWrite.inc({ verb: r.outcome.slice('would-'.length) });
          return;
        case 'foreign':
          foreign.inc();
          skipped.inc({ reason: r.outcome });
          return;
        case 'unchanged':
        case 'gone':
        case 'not-owned':
          skipped.inc({ reason: r.outcome });
          return;
        default: {
          const unknown: never = r.outcome;
          throw new Error(`unknown outcome ${String(unknown)}`);
        }
      }
    },
    event(e) {
      if (e.type === 'conflict') conflicts.inc({ decision: e.decision });
      else retries.inc({ verb: e.verb, code: String(e.statusCode) });
    },
    rateLimitWait(ms) {
      waited.inc(ms / 1000);
    },
    applied(seq) {
      lastSeq.set(seq);
    },
    message(result) {
      messages.inc({ result });
    },
    batch(seconds, n) {
      batchSeconds.observe(seconds);
      actions.inc(n);
    },
  };
}
