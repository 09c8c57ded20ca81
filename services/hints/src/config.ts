// Every setting of the hints service, with its default, in one place (habit 14).

import { NATS_CONNECTION_SETTINGS, NATS_REPLICAS_SETTING, NATS_URL_SETTING, parseNatsName, parseSubjectPrefix, ENSURE_STREAMS_SETTING } from '@slicemesh/nats';
import { defineConfig, leaseSettings, ownedPartitionsOf as ownedPartitionsOfSetting, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';

export const hintsConfig = defineConfig({
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  natsReplicas: NATS_REPLICAS_SETTING,
  ensureStreams: ENSURE_STREAMS_SETTING,
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', default: 'postgres://postgres@127.0.0.1:5432/postgres', doc: 'Postgres server.', parse: 'url' },
  dbSchema: {
    env: 'DB_SCHEMA',
    flag: '--db-schema',
    default: 'slicemesh',
    doc: "Postgres schema; the hints tables live beside the slicer's (both run the same serialized migrations).",
    parse: 'string',
  },
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', doc: 'Source cluster name: selects subjects, KV keys and rows.', parse: 'string' },
  partitions: {
    env: 'PARTITIONS',
    flag: '--partitions',
    default: 1,
    min: 1,
    max: 10_000,
    doc: "Number of KUBE partitions the watcher publishes (a deployment-wide constant; the watcher's and the slicer's value).",
    parse: 'int',
  },
  ...leaseSettings('hints replicas'),
  kubeStream: { env: 'KUBE_STREAM', flag: '--kube-stream', default: 'KUBE', doc: 'Stream of Kubernetes objects (nodes and services are read from it).', parse: parseNatsName },
  slicesStream: { env: 'SLICES_STREAM', flag: '--slices-stream', default: 'SLICES', doc: 'Stream of SliceChanged events from the slicer.', parse: parseNatsName },
  dlqStream: { env: 'DLQ_STREAM', flag: '--dlq-stream', default: 'DLQ', doc: 'Stream of dead letters (malformed input goes to dlq.<cluster>.hints).', parse: parseNatsName },
  eventsStream: { env: 'EVENTS_STREAM', flag: '--events-stream', default: 'EVENTS', doc: "Stream the decisions' Kubernetes Event requests go to (the publisher writes them).", parse: parseNatsName },
  subjectPrefix: { env: 'SUBJECT_PREFIX', flag: '--subject-prefix', default: '', doc: 'Prefix of every stream subject ("" in production; tests isolate with it).', parse: parseSubjectPrefix },
  svcBucket: { env: 'SVC_BUCKET', flag: '--svc-bucket', default: 'svc', doc: 'KV bucket of service specs, keys <cluster>.<ns>.<name>.', parse: parseNatsName },
  viewsBucket: { env: 'VIEWS_BUCKET', flag: '--views-bucket', default: 'views', doc: 'KV bucket of per-zone views, keys <cluster>.<zone>.<ns>.<service>.<slice>.', parse: parseNatsName },
  hintedBucket: {
    env: 'HINTED_BUCKET',
    flag: '--hinted-bucket',
    default: 'hinted',
    doc: "KV bucket of the slicer's slices with their hints, keys <cluster>.<ns>.<service>.<slice>; the publisher writes them to the API.",
    parse: parseNatsName,
  },
  durablePrefix: {
    env: 'DURABLE_PREFIX',
    flag: '--durable-prefix',
    default: 'hints',
    doc: 'Prefix of the durable consumer names (<prefix>-<cluster>-p<partition>-slices|nodes|services|endpointslices).',
    parse: parseNatsName,
  },
  batchPeriod: {
    env: 'BATCH_PERIOD',
    flag: '--batch-period',
    // 0: a change is reconciled at once. Changes that arrive while a service is being
    // reconciled still coalesce into its next reconcile (the work queue marks it dirty once).
    default: '0ms',
    min: 0,
    max: 60_000,
    doc: 'Debounce per service: slice changes within this window cause one reconcile (0 = none beyond the work queue coalescing).',
    parse: 'duration',
  },
  workers: {
    env: 'WORKERS',
    flag: '--workers',
    // Reconciles are short and mostly wait on Postgres and KV; more of them in flight means
    // bigger shared transactions (batched-records.ts), not more CPU.
    default: 16,
    min: 1,
    max: 64,
    doc: 'Concurrent service reconciles (their Postgres writes are grouped into shared transactions).',
    parse: 'int',
  },
  ingestBatch: {
    env: 'INGEST_BATCH',
    flag: '--ingest-batch',
    default: 256,
    min: 1,
    max: 10_000,
    doc: 'Most messages a consumer stores in one transaction (also its max ack pending).',
    parse: 'int',
  },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 9093, min: 0, max: 65_535, doc: 'Port of /metrics, /healthz and /readyz (0 picks a free one).', parse: 'int' },
  logLevel: LOG_LEVEL_SETTING,
  preferSameTrafficDistribution: {
    env: 'PREFER_SAME_TRAFFIC_DISTRIBUTION',
    flag: '--prefer-same-traffic-distribution',
    default: true,
    doc: 'The PreferSameTrafficDistribution feature gate (GA in 1.35): honour PreferSameZone/PreferSameNode and node hints in views.',
    parse: 'bool',
  },
  drainPollInterval: {
    env: 'DRAIN_POLL_INTERVAL',
    flag: '--drain-poll-interval',
    default: '100ms',
    min: 10,
    doc: 'How often startup checks whether the consumers have caught up with their backlog.',
    parse: 'duration',
  },
});

export type HintsConfig = ConfigOf<typeof hintsConfig.spec>;

/** The configuration from defaults only, with `overrides` on top (tests, one-process stacks). */
export function hintsConfigWith(overrides: Partial<HintsConfig> = {}): HintsConfig {
  return Object.freeze({ ...hintsConfig.parse([], {}), ...overrides });
}

/** The partitions this replica may hold, sorted: all of them, or its OWNED_PARTITIONS list (checked against PARTITIONS). */
export function ownedPartitionsOf(c: Pick<HintsConfig, 'partitions' | 'ownedPartitions'>): { readonly partitions: readonly number[]; readonly pinned?: readonly number[] } {
  return ownedPartitionsOfSetting(c.partitions, c.ownedPartitions);
}

/** The lease group of the cluster's hints replicas (one lease per KUBE partition). */
export function hintsLeaseGroup(cluster: string): string {
  return `hints/${cluster}`;
}
