// The slicer's settings, each declared once with its flag, env variable, default and doc
// (`slicer --help` prints them), plus the values derived from them.

import {
  NATS_CONNECTION_SETTINGS, NATS_REPLICAS_SETTING, NATS_URL_SETTING, encodeToken, fnv1a32, kubeNodesFilter, kubePartitionFilter, parseSubjectPrefix, ENSURE_STREAMS_SETTING,
} from '@slicemesh/nats';
import type { StreamNames } from '@slicemesh/nats';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, MANAGED_BY_CONTROLLER, MAX_MAX_ENDPOINTS_PER_SLICE, labelValueProblem } from '@slicemesh/model';
import { assertSchemaName } from '@slicemesh/db';
import { defineConfig, leaseSettings, ownedPartitionsOf, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';

function schemaName(text: string): string {
  assertSchemaName(text);
  return text;
}

function managedByValue(text: string): string {
  const problem = labelValueProblem(text);
  if (text === '' || problem !== null) throw new Error(problem ?? 'must not be empty');
  return text;
}

function durableName(text: string): string {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw new Error('must be 1..200 characters of [A-Za-z0-9_-]');
  return text;
}

/** Every setting of the slicer, with its default. */
export const slicerConfig = defineConfig({
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  natsReplicas: NATS_REPLICAS_SETTING,
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', default: 'postgres://postgres@127.0.0.1:5432/postgres', parse: 'url', doc: 'Postgres connection URL.' },
  dbSchema: { env: 'DB_SCHEMA', flag: '--db-schema', default: 'slicemesh', parse: schemaName, doc: 'Postgres schema holding this deployment\'s tables (created and migrated at start).' },
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', parse: 'string', doc: 'Name of the source cluster, as used in subjects.' },
  partitions: { env: 'PARTITIONS', flag: '--partitions', default: 1, min: 1, max: 10_000, parse: 'int', doc: 'Number of KUBE partitions the watcher publishes (a deployment-wide constant).' },
  ...leaseSettings('slicers'),
  kubeStream: { env: 'KUBE_STREAM', flag: '--kube-stream', default: 'KUBE', parse: 'string', doc: 'Stream holding the Kubernetes event log.' },
  slicesStream: { env: 'SLICES_STREAM', flag: '--slices-stream', default: 'SLICES', parse: 'string', doc: 'Stream the slice changes are published to.' },
  dlqStream: { env: 'DLQ_STREAM', flag: '--dlq-stream', default: 'DLQ', parse: 'string', doc: 'Stream for dead letters (rejected input).' },
  eventsStream: { env: 'EVENTS_STREAM', flag: '--events-stream', default: 'EVENTS', parse: 'string', doc: "Stream the mirroring controller's Kubernetes Event requests are published to (the publisher writes them)." },
  subjectPrefix: { env: 'SUBJECT_PREFIX', flag: '--subject-prefix', default: '', parse: parseSubjectPrefix, doc: 'Prefix of every stream subject (e.g. "stage."); empty in production.' },
  ensureStreams: ENSURE_STREAMS_SETTING,
  durablePrefix: { env: 'DURABLE_PREFIX', flag: '--durable-prefix', optional: true, parse: durableName, doc: 'Durable consumer name prefix; defaults to slicer-<cluster>.' },
  ackWait: { env: 'ACK_WAIT', flag: '--ack-wait', default: '30s', min: 500, parse: 'duration', doc: 'Time before an unacknowledged KUBE message is redelivered.' },
  maxEndpointsPerSlice: {
    env: 'MAX_ENDPOINTS_PER_SLICE',
    flag: '--max-endpoints-per-slice',
    default: DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    min: 1,
    max: MAX_MAX_ENDPOINTS_PER_SLICE,
    parse: 'int',
    doc: 'Endpoints per EndpointSlice (upstream --max-endpoints-per-slice).',
  },
  managedBy: { env: 'MANAGED_BY', flag: '--managed-by', default: MANAGED_BY_CONTROLLER, parse: managedByValue, doc: 'Value of the managed-by label on the slices this controller owns.' },
  batchPeriod: { env: 'BATCH_PERIOD', flag: '--batch-period', default: '0', min: 0, parse: 'duration', doc: 'Window that batches pod changes per Service (upstream --endpoint-updates-batch-period).' },
  snapshotEvery: {
    env: 'SNAPSHOT_EVERY',
    flag: '--snapshot-every',
    default: 20_000,
    min: 0,
    parse: 'int',
    doc: 'Snapshot a partition (Postgres) after this many applied KUBE messages of it, then compact its KUBE subjects (see --compact-log); 0: never.',
  },
  compactLog: {
    env: 'COMPACT_LOG',
    flag: '--compact-log',
    default: true,
    parse: 'bool',
    doc: "After a snapshot, purge the partition's KUBE messages every reader is past (each live object's last version is carried forward first).",
  },
  tombstoneRetention: {
    env: 'TOMBSTONE_RETENTION',
    flag: '--tombstone-retention',
    default: '1h',
    min: 0,
    parse: 'duration',
    doc: "How long a deleted object's delete stays in KUBE through compactions (carried forward); older deletes go with the purge.",
  },
  workers: { env: 'WORKERS', flag: '--workers', default: 5, min: 1, max: 100, parse: 'int', doc: 'Concurrent Service reconciles (upstream --concurrent-service-endpoint-syncs).' },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 9102, min: 0, max: 65_535, parse: 'int', doc: 'Port of /metrics, /healthz and /readyz (0 picks a free one).' },
  logLevel: LOG_LEVEL_SETTING,
});

/** The parsed settings. */
export type SlicerConfig = ConfigOf<typeof slicerConfig.spec>;

/** The defaults with `overrides` applied (tests and the in-process stack). */
export function slicerConfigWith(overrides: Partial<SlicerConfig> = {}): SlicerConfig {
  return { ...slicerConfig.parse([], {}), ...overrides };
}

/** Values derived from the settings, checked against each other. */
export interface SlicerSettings {
  readonly names: StreamNames;
  /** Sorted partition numbers this instance may own (all, or its OWNED_PARTITIONS list). */
  readonly partitions: readonly number[];
  /** Exactly these partitions (an OWNED_PARTITIONS list); undefined: a balanced share. */
  readonly pinned?: readonly number[];
  readonly durablePrefix: string;
}

/**
 * Resolves stream names, owned partitions and the durable prefix. Throws ConfigError when an
 * owned partition is outside 0..PARTITIONS-1.
 */
export function resolveSlicerSettings(c: SlicerConfig): SlicerSettings {
  return {
    names: { kube: c.kubeStream, slices: c.slicesStream, dlq: c.dlqStream, events: c.eventsStream, prefix: c.subjectPrefix },
    ...ownedPartitionsOf(c.partitions, c.ownedPartitions),
    durablePrefix: c.durablePrefix ?? defaultDurablePrefix(c.cluster),
  };
}

/**
 * `slicer-<cluster>` when the cluster name is a plain token, otherwise `slicer-c<fnv1a32 hex>`
 * (durable names allow fewer characters than subject tokens).
 */
export function defaultDurablePrefix(cluster: string): string {
  const token = encodeToken(cluster);
  return /^[A-Za-z0-9_-]{1,100}$/.test(token) ? `slicer-${token}` : `slicer-c${fnv1a32(cluster).toString(16).padStart(8, '0')}`;
}

/** The durable consuming one partition. */
export function partitionDurable(prefix: string, partition: number): string {
  return `${prefix}-p${partition}`;
}

/**
 * The durable feeding `partition`'s owner the node subjects. Nodes concern every partition, so
 * each partition has its own node consumer and offset, and they move with its lease.
 */
export function nodesDurable(prefix: string, partition: number): string {
  return `${prefix}-p${partition}-nodes`;
}

/** Every durable the owner of `partitions` consumes: each partition's own and its node consumer. */
export function slicerDurables(prefix: string, partitions: readonly number[]): string[] {
  return partitions.flatMap((p) => [partitionDurable(prefix, p), nodesDurable(prefix, p)]);
}

/** One durable of the slicer: the partition whose lease it moves with, what it reads, and its consumer_offsets key. */
export interface SlicerConsumer {
  readonly partition: number;
  /** It reads the node subjects (every partition's owner needs every node), not the partition's own. */
  readonly nodes: boolean;
  readonly durable: string;
  readonly filterSubject: string;
  readonly offset: string;
}

/** The durables the owner of `partitions` consumes, in slicerDurables' order, with their filters and offset names. */
export function slicerConsumers(cluster: string, names: StreamNames, prefix: string, partitions: readonly number[]): SlicerConsumer[] {
  const consumer = (partition: number, nodes: boolean, durable: string, filterSubject: string): SlicerConsumer => ({ partition, nodes, durable, filterSubject, offset: offsetName(names.kube, durable) });
  return partitions.flatMap((p) => [
    consumer(p, false, partitionDurable(prefix, p), kubePartitionFilter(cluster, p, names)),
    consumer(p, true, nodesDurable(prefix, p), kubeNodesFilter(cluster, names)),
  ]);
}

/** The lease group of the cluster's slicers (one lease per KUBE partition). */
export function slicerLeaseGroup(cluster: string): string {
  return `slicer/${cluster}`;
}

/** The lease group of the outbox relay: one relay per schema publishes the outbox. */
export const RELAY_LEASE_GROUP = 'slicer-relay';

/** The consumer_offsets key of a durable: offsets are per stream and durable. */
export function offsetName(stream: string, durable: string): string {
  return `${stream}/${durable}`;
}
