// The slicer's Prometheus series (all prefixed slicemesh_ by createMetrics).

import type { Metrics } from '@slicemesh/runtime';

// prom-client's types, reached through Metrics (the slicer does not depend on prom-client).
type Counter = ReturnType<Metrics['counter']>;
type Gauge = ReturnType<Metrics['gauge']>;
type Histogram = ReturnType<Metrics['histogram']>;

export interface SlicerMetrics {
  readonly registry: Metrics['registry'];
  /** KUBE messages by kind and result (applied, stale, duplicate, dead-lettered, ignored: another controller's EndpointSlice, echo: one of ours, error). */
  readonly eventsIngested: Counter;
  /** Messages published to the dead-letter subject. */
  readonly deadLetters: Counter;
  /** Reconciles by result: changed, unchanged, clean, partial, error, dropped, terminal. */
  readonly reconciles: Counter;
  readonly reconcileDuration: Histogram;
  /** Slice rows written, by op: create, update, delete. */
  readonly sliceWrites: Counter;
  /** SLICES messages published by the relay (duplicate=true: the stream had it already). */
  readonly outboxPublished: Counter;
  /** Outbox rows not yet published (read at scrape time). */
  readonly outboxLag: Gauge;
  /** 1 once the initial backlog was consumed. */
  readonly ready: Gauge;
  /** Services marked dirty or being reconciled (read at scrape time). */
  readonly dirty: Gauge;
  /** Kubernetes Event requests of the mirroring controller, by outcome: published, failed, dropped. */
  readonly eventRequests: Counter;
  /** Partition snapshots, by result: written, failed. */
  readonly snapshots: Counter;
  /** KUBE compaction: messages carried forward and purged, by scope kind (partition, nodes). */
  readonly logCarried: Counter;
  readonly logPurged: Counter;
  /** Consume loops restarted because a KUBE delivery was lost in flight, by consumer. */
  readonly deliveryGaps: Counter;
}

/** Registers the series on `metrics`; `backlog` answers the outbox lag at scrape time. */
export function createSlicerMetrics(metrics: Metrics, backlog: () => Promise<number>, dirty: () => number = () => 0): SlicerMetrics {
  return {
    registry: metrics.registry,
    eventsIngested: metrics.counter({ name: 'slicer_events_ingested_total', help: 'KUBE messages handled, by kind and result.', labelNames: ['kind', 'result'] }),
    deliveryGaps: metrics.counter({ name: 'slicer_delivery_gaps_total', help: "Consume loops restarted at the committed offset because a KUBE delivery was lost in flight (the consumer's delivery sequence skipped), by consumer.", labelNames: ['consumer'] }),
    deadLetters: metrics.counter({ name: 'slicer_dead_letters_total', help: 'KUBE messages rejected and published to the dead-letter subject.' }),
    reconciles: metrics.counter({ name: 'slicer_reconciles_total', help: 'Service reconciles, by result.', labelNames: ['result'] }),
    reconcileDuration: metrics.histogram({
      name: 'slicer_reconcile_duration_seconds',
      help: 'Time to reconcile one Service (read, plan, write).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    }),
    sliceWrites: metrics.counter({ name: 'slicer_slice_writes_total', help: 'EndpointSlice rows written, by operation.', labelNames: ['op'] }),
    outboxPublished: metrics.counter({ name: 'slicer_outbox_published_total', help: 'Outbox rows published to SLICES.', labelNames: ['duplicate'] }),
    outboxLag: metrics.gauge({
      name: 'slicer_outbox_lag_rows',
      help: 'Outbox rows not yet published to SLICES.',
      async collect() {
        try {
          this.set(await backlog());
        } catch {
          // The database is unreachable: leave the last value; /readyz and logs say why.
        }
      },
    }),
    eventRequests: metrics.counter({
      name: 'slicer_event_requests_total',
      help: 'Mirroring Event requests sent to EVENTS after their reconcile committed, by outcome (published; failed or dropped: the Event is lost, best effort).',
      labelNames: ['outcome'],
    }),
    snapshots: metrics.counter({ name: 'slicer_snapshots_total', help: 'Partition snapshots taken (Postgres), by result.', labelNames: ['result'] }),
    logCarried: metrics.counter({ name: 'slicer_log_carried_total', help: 'KUBE messages republished by compaction so that each live object keeps its last version.', labelNames: ['scope'] }),
    logPurged: metrics.counter({ name: 'slicer_log_purged_total', help: 'KUBE messages purged by compaction.', labelNames: ['scope'] }),
    ready: metrics.gauge({ name: 'slicer_ready', help: '1 once the consumers caught up with the initial backlog.' }),
    dirty: metrics.gauge({
      name: 'slicer_dirty_services',
      help: 'Services waiting for a reconcile or being reconciled.',
      collect() {
        this.set(dirty());
      },
    }),
  };
}
