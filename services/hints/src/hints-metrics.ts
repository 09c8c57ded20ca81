// The hints service's Prometheus metrics. Label values are bounded: free-text reasons are
// reduced to a short code of the upstream message they start with.

import type { Metrics } from '@slicemesh/runtime';
import type { HintsDecision } from '@slicemesh/topology';
import {
  MSG_HINTS_DISABLED,
  MSG_HINTS_ENABLED,
  MSG_INSUFFICIENT_ENDPOINTS,
  MSG_INSUFFICIENT_NODE_INFO,
  MSG_MIN_EXCEEDS_THRESHOLD,
  MSG_NO_ALLOCATED_HINTS,
  MSG_NO_ZONE_SPECIFIED,
  MSG_NODES_READY_IN_ONE_ZONE,
} from '@slicemesh/topology';
import type { IngestOutcome } from './ingest.ts';
import type { ServiceReconcileReport } from './service-reconciler.ts';

const MESSAGE_CODES: readonly (readonly [string, string])[] = [
  [MSG_INSUFFICIENT_NODE_INFO, 'insufficient_node_info'],
  [MSG_NODES_READY_IN_ONE_ZONE, 'nodes_in_one_zone'],
  [MSG_INSUFFICIENT_ENDPOINTS, 'insufficient_endpoints'],
  [MSG_MIN_EXCEEDS_THRESHOLD, 'overload_threshold'],
  [MSG_NO_ZONE_SPECIFIED, 'endpoint_without_zone'],
  [MSG_NO_ALLOCATED_HINTS, 'no_hints_allocated'],
  [MSG_HINTS_DISABLED, 'mode_left_auto'],
  [MSG_HINTS_ENABLED, 'enabled'],
];

/**
 * A bounded label for why a decision came out as it did: the code of its upstream event
 * message when it has one, else 'none'.
 */
export function decisionReasonCode(d: Pick<HintsDecision, 'event'>): string {
  const message = d.event?.message;
  if (message === undefined) return 'none';
  for (const [prefix, code] of MESSAGE_CODES) if (message.startsWith(prefix)) return code;
  return 'other';
}

export interface HintsMetrics {
  readonly metrics: Metrics;
  reconciled(report: ServiceReconcileReport, seconds: number): void;
  reconcileFailed(outcome: string, seconds: number): void;
  ingested(outcome: IngestOutcome): void;
}

export function hintsMetrics(metrics: Metrics): HintsMetrics {
  const decisions = metrics.counter({
    name: 'hints_decisions_total',
    help: 'Hint decisions computed, by address type, mode, enabled and reason code (the upstream event message, or none).',
    labelNames: ['address_type', 'mode', 'enabled', 'reason'],
  });
  const events = metrics.counter({ name: 'hints_events_total', help: 'Upstream hint events (e.g. TopologyAwareHintsDisabled) by type and reason.', labelNames: ['type', 'reason'] });
  const kvPuts = metrics.counter({ name: 'hints_kv_puts_total', help: 'KV puts by bucket.', labelNames: ['bucket'] });
  const kvDeletes = metrics.counter({ name: 'hints_kv_deletes_total', help: 'KV deletes by bucket.', labelNames: ['bucket'] });
  const viewBytes = metrics.counter({ name: 'hints_view_bytes_published_total', help: 'JSON bytes of view values put to the views bucket.' });
  const duration = metrics.histogram({
    name: 'hints_reconcile_duration_seconds',
    help: 'Duration of one service reconcile, by outcome.',
    labelNames: ['outcome'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  const messages = metrics.counter({ name: 'hints_messages_total', help: 'Consumed messages by consumer and result.', labelNames: ['consumer', 'result'] });

  return {
    metrics,
    reconciled(r, seconds) {
      duration.observe({ outcome: 'success' }, seconds);
      for (const d of r.decisions) {
        decisions.inc({ address_type: d.addressType, mode: d.mode, enabled: String(d.enabled), reason: decisionReasonCode(d) });
        if (d.event !== null) events.inc({ type: d.event.type, reason: d.event.reason });
      }
      if (r.viewPuts > 0) kvPuts.inc({ bucket: 'views' }, r.viewPuts);
      if (r.viewDeletes > 0) kvDeletes.inc({ bucket: 'views' }, r.viewDeletes);
      if (r.svc === 'put') kvPuts.inc({ bucket: 'svc' });
      if (r.svc === 'delete') kvDeletes.inc({ bucket: 'svc' });
      if (r.viewBytes > 0) viewBytes.inc(r.viewBytes);
    },
    reconcileFailed(outcome, seconds) {
      duration.observe({ outcome }, seconds);
    },
    ingested(o) {
      messages.inc({ consumer: o.role, result: o.result });
    },
  };
}
