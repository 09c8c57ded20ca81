// The watcher's Prometheus series (all prefixed `slicemesh_watcher_`).

import type { Metrics } from '@slicemesh/runtime';

export interface WatcherMetrics {
  /** Changes stored in KUBE, by kind and op (upsert | delete). */
  readonly published: ReturnType<Metrics['counter']>;
  /** Publishes the stream already held (same msgID): another watcher, or a retry, got there first. */
  readonly duplicates: ReturnType<Metrics['counter']>;
  /** Objects rejected to the DLQ, by kind (not by field: hostile keys would flood the label). */
  readonly deadLetters: ReturnType<Metrics['counter']>;
  /** Events dropped because KUBE already records that state, by kind and reason. */
  readonly skipped: ReturnType<Metrics['counter']>;
  /** Informer restarts after an error, by kind. */
  readonly restarts: ReturnType<Metrics['counter']>;
  /** Re-lists (after 410 Gone), by kind. */
  readonly relists: ReturnType<Metrics['counter']>;
  /** Publish attempts that failed transiently and were retried. */
  readonly retries: ReturnType<Metrics['counter']>;
  /** Publishes refused because the subject had a message this replica did not know (another replica appended first). */
  readonly conflicts: ReturnType<Metrics['counter']>;
  /** Time from observing a change to its ack, seconds, by kind. */
  readonly latency: ReturnType<Metrics['histogram']>;
  /** Changes waiting for their turn to publish. */
  readonly queued: ReturnType<Metrics['gauge']>;
}

export function watcherMetrics(m: Metrics): WatcherMetrics {
  return {
    published: m.counter({ name: 'watcher_events_published_total', help: 'Changes stored in KUBE.', labelNames: ['kind', 'op'] }),
    duplicates: m.counter({ name: 'watcher_duplicates_total', help: 'Publishes de-duplicated by the stream (msgID already stored).', labelNames: ['kind'] }),
    deadLetters: m.counter({ name: 'watcher_dead_letters_total', help: 'Objects rejected to the dead-letter stream.', labelNames: ['kind'] }),
    skipped: m.counter({ name: 'watcher_skipped_total', help: 'Events dropped because KUBE already records that state.', labelNames: ['kind', 'reason'] }),
    restarts: m.counter({ name: 'watcher_informer_restarts_total', help: 'Informer restarts after an error.', labelNames: ['kind'] }),
    relists: m.counter({ name: 'watcher_relists_total', help: 'Re-lists after the watch history expired (410).', labelNames: ['kind'] }),
    retries: m.counter({ name: 'watcher_publish_retries_total', help: 'Publish attempts retried after a transient failure.' }),
    conflicts: m.counter({ name: 'watcher_publish_conflicts_total', help: 'Publishes refused because another writer appended to the subject first (its last message then decides).' }),
    latency: m.histogram({
      name: 'watcher_publish_latency_seconds',
      help: 'From observing a change to the stream ack.',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    }),
    queued: m.gauge({ name: 'watcher_queued_changes', help: 'Changes waiting to be published.' }),
  };
}
