// Every setting of the publisher, with its default, in one place (habit 14).

import { assertSchemaName } from '@slicemesh/db';
import { NATS_CONNECTION_SETTINGS, DEFAULT_OWN_MANAGERS, NATS_REPLICAS_SETTING, NATS_URL_SETTING, parseOwnManagers, parseNatsName, parseSubjectPrefix, ENSURE_STREAMS_SETTING } from '@slicemesh/nats';
import { defineConfig, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';
import { PUBLISHER_MODES } from './apply.ts';

/** Where the slices to write come from (see the `source` setting). */
export const PUBLISHER_SOURCES = ['hinted', 'slices'] as const;

function schemaName(text: string): string {
  assertSchemaName(text);
  return text;
}

/** MANAGED_BY: comma-separated label values (the watcher's and the slicer's rule, libs/contracts). */
export function parseManagedBy(text: string): readonly string[] {
  return parseOwnManagers(text);
}

export const publisherConfig = defineConfig({
  mode: {
    env: 'MODE',
    flag: '--mode',
    default: 'shadow',
    choices: PUBLISHER_MODES,
    doc: 'shadow: read the API and count what would be written, write nothing; write: create, update and delete the slices (kube-controller-manager must then run with --controllers=*,-endpointslice,-endpointslicemirroring).',
    parse: 'string',
  },
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  natsReplicas: NATS_REPLICAS_SETTING,
  ensureStreams: ENSURE_STREAMS_SETTING,
  databaseUrl: { env: 'DATABASE_URL', flag: '--database-url', default: 'postgres://postgres@127.0.0.1:5432/postgres', doc: 'Postgres server (the applied SLICES sequence is recorded there).', parse: 'url' },
  dbSchema: { env: 'DB_SCHEMA', flag: '--db-schema', default: 'slicemesh', doc: "Postgres schema; the publisher's offset row lives beside the slicer's tables.", parse: schemaName },
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', doc: 'Source cluster name: the SLICES subjects read (slices.<cluster>.>).', parse: 'string' },
  kubeStream: { env: 'KUBE_STREAM', flag: '--kube-stream', default: 'KUBE', doc: 'Stream of Kubernetes objects (only declared here).', parse: parseNatsName },
  source: {
    env: 'SOURCE',
    flag: '--source',
    default: 'hinted',
    choices: PUBLISHER_SOURCES,
    doc: "hinted: the hints service's finished slices (KV bucket HINTED_BUCKET), written with their topology hints as the EndpointSlice controller writes them; slices: the slicer's SLICES messages, without hints (for a deployment without the hints service).",
    parse: 'string',
  },
  slicesStream: { env: 'SLICES_STREAM', flag: '--slices-stream', default: 'SLICES', doc: 'Stream of SliceChanged events from the slicer (SOURCE=slices).', parse: parseNatsName },
  hintedBucket: { env: 'HINTED_BUCKET', flag: '--hinted-bucket', default: 'hinted', doc: "KV bucket the hints service keeps the finished slices in (SOURCE=hinted); its stream KV_<bucket> is read.", parse: parseNatsName },
  dlqStream: { env: 'DLQ_STREAM', flag: '--dlq-stream', default: 'DLQ', doc: 'Stream of dead letters (only declared here).', parse: parseNatsName },
  subjectPrefix: { env: 'SUBJECT_PREFIX', flag: '--subject-prefix', default: '', doc: 'Prefix of every stream subject ("" in production; tests isolate with it).', parse: parseSubjectPrefix },
  durablePrefix: { env: 'DURABLE_PREFIX', flag: '--durable-prefix', default: 'publisher', doc: 'Prefix of the durable consumer name (<prefix>-<cluster>).', parse: parseNatsName },
  kubeServer: { env: 'KUBE_SERVER', flag: '--kube-server', optional: true, parse: 'url', doc: 'API server URL needing no credentials (cluster-sim, kubectl proxy). Wins over the other connection settings.' },
  kubeconfig: { env: 'KUBECONFIG', flag: '--kubeconfig', optional: true, parse: 'string', doc: 'kubeconfig file (the first entry of a KUBECONFIG list is used).' },
  kubeContext: { env: 'KUBE_CONTEXT', flag: '--kube-context', optional: true, parse: 'string', doc: 'kubeconfig context; defaults to its current-context.' },
  inCluster: {
    env: 'KUBE_IN_CLUSTER',
    flag: '--in-cluster',
    default: false,
    parse: 'bool',
    doc: 'Use the pod service account. Also chosen when no other connection is set and KUBERNETES_SERVICE_HOST is; otherwise ~/.kube/config.',
  },
  kubeApiQps: {
    env: 'KUBE_API_QPS',
    flag: '--kube-api-qps',
    // kube-controller-manager's --kube-api-qps default.
    default: 20,
    min: 1,
    max: 100_000,
    doc: 'Sustained API requests per second (reads and writes), as kube-controller-manager --kube-api-qps.',
    parse: 'int',
  },
  kubeApiBurst: {
    env: 'KUBE_API_BURST',
    flag: '--kube-api-burst',
    default: 30,
    min: 1,
    max: 100_000,
    doc: 'API requests allowed in a burst above the sustained rate, as kube-controller-manager --kube-api-burst.',
    parse: 'int',
  },
  managedBy: {
    env: 'MANAGED_BY',
    flag: '--managed-by',
    default: DEFAULT_OWN_MANAGERS.join(','),
    doc: "Managed-by label values this publisher owns, comma-separated; must include the slicer's MANAGED_BY and equal the watcher's. Slices with any other value, or none, are never touched.",
    parse: parseManagedBy,
  },
  concurrency: { env: 'CONCURRENCY', flag: '--concurrency', default: 4, min: 1, max: 64, doc: 'Slices written at once (the QPS limit holds across all of them).', parse: 'int' },
  batch: { env: 'BATCH', flag: '--batch', default: 256, min: 1, max: 10_000, doc: 'Most SLICES messages coalesced and applied at once (also the max ack pending).', parse: 'int' },
  maxConflicts: { env: 'MAX_CONFLICTS', flag: '--max-conflicts', default: 8, min: 1, max: 100, doc: 'Re-reads per slice after 409 Conflict before the batch is retried later.', parse: 'int' },
  requestTimeout: { env: 'REQUEST_TIMEOUT', flag: '--request-timeout', default: '30s', min: 100, doc: 'Timeout of one API request.', parse: 'duration' },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 9104, min: 0, max: 65_535, doc: 'Port of /metrics, /healthz and /readyz (0 picks a free one).', parse: 'int' },
  logLevel: LOG_LEVEL_SETTING,
  // The ServiceExport status writer (services/publisher/src/export-status): a third component.
  writeExportStatus: {
    env: 'WRITE_EXPORT_STATUS',
    flag: '--write-export-status',
    default: true,
    parse: 'bool',
    doc: "Run the ServiceExport status writer: the conditions the multi-cluster service decided (Valid, Conflict), from the exportstatus bucket to each ServiceExport's status; counted in shadow mode. Nothing to do without mcs.",
  },
  exportStatusBucket: { env: 'EXPORT_STATUS_BUCKET', flag: '--export-status-bucket', default: 'exportstatus', parse: parseNatsName, doc: "KV bucket of the ServiceExports' desired status (written by mcs)." },
  // The ServiceImport writer (services/publisher/src/service-imports): a fourth component.
  writeServiceImports: {
    env: 'WRITE_SERVICE_IMPORTS',
    flag: '--write-service-imports',
    default: true,
    parse: 'bool',
    doc: 'Run the ServiceImport writer: the MCS ServiceImport of each import, from the serviceimports bucket to the API (created, updated, deleted; only those labelled app.kubernetes.io/managed-by=slicemesh-mcs); counted in shadow mode. Nothing to do without mcs.',
  },
  serviceImportsBucket: { env: 'SERVICE_IMPORTS_BUCKET', flag: '--service-imports-bucket', default: 'serviceimports', parse: parseNatsName, doc: 'KV bucket of the ServiceImports of this cluster\'s imports (written by mcs).' },
  // The event writer (services/publisher/src/events): a second component of the same process.
  recordEvents: {
    env: 'RECORD_EVENTS',
    flag: '--record-events',
    default: true,
    parse: 'bool',
    doc: 'Run the event writer: Kubernetes Events from the EVENTS stream, correlated like client-go\'s recorder, written in write mode, counted in shadow mode.',
  },
  eventsStream: { env: 'EVENTS_STREAM', flag: '--events-stream', default: 'EVENTS', doc: 'Stream of Event requests from the slicer and the hints service.', parse: parseNatsName },
  eventMaxAge: {
    env: 'EVENT_MAX_AGE',
    flag: '--event-max-age',
    default: '1h',
    min: 1000,
    doc: "Event requests older than this are skipped (the API server's default Event TTL is an hour: an older Event would be gone already).",
    parse: 'duration',
  },
});

export type PublisherConfig = ConfigOf<typeof publisherConfig.spec>;

/** The configuration from defaults only, with `overrides` on top (tests, one-process stacks). */
export function publisherConfigWith(overrides: Partial<PublisherConfig> = {}): PublisherConfig {
  return Object.freeze({ ...publisherConfig.parse([], {}), ...overrides });
}

// How the connection settings above pick the API server: one rule, shared with the other service.
export { kubeConnectionOf } from '@slicemesh/kube';
