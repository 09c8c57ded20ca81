// The watcher's settings, each declared once with its flag, env variable, default and doc
// (`watcher --help` prints them), plus the values derived from them.

import { NATS_CONNECTION_SETTINGS, NATS_REPLICAS_SETTING, NATS_URL_SETTING, parseSubjectPrefix, ENSURE_STREAMS_SETTING } from '@slicemesh/nats';
import { DEFAULT_OWN_MANAGERS, parseOwnManagers } from '@slicemesh/contracts';
import { DEFAULT_MAX_OBJECT_BYTES } from '@slicemesh/kube';
import type { StreamNames } from '@slicemesh/nats';
import { defineConfig, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';

function clusterName(text: string): string {
  // '/' separates the parts of a msgID (<cluster>/<uid>/<rv>), so it may not occur here.
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(text)) throw new Error('must be 1..63 characters of [A-Za-z0-9._-], starting with a letter or digit');
  return text;
}

/** Every setting of the watcher, with its default. */
export const watcherConfig = defineConfig({
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', parse: clusterName, doc: 'ID of the watched cluster: first token of every subject and msgID. Give each cluster its own.' },
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
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  natsReplicas: NATS_REPLICAS_SETTING,
  partitions: { env: 'PARTITIONS', flag: '--partitions', default: 1, min: 1, max: 10_000, parse: 'int', doc: 'Number of KUBE partitions (a deployment-wide constant shared with the slicer).' },
  kubeStream: { env: 'KUBE_STREAM', flag: '--kube-stream', default: 'KUBE', parse: 'string', doc: 'Stream holding the Kubernetes event log.' },
  slicesStream: { env: 'SLICES_STREAM', flag: '--slices-stream', default: 'SLICES', parse: 'string', doc: 'Stream of slice changes (only declared here).' },
  dlqStream: { env: 'DLQ_STREAM', flag: '--dlq-stream', default: 'DLQ', parse: 'string', doc: 'Stream for dead letters (rejected objects).' },
  subjectPrefix: { env: 'SUBJECT_PREFIX', flag: '--subject-prefix', default: '', parse: parseSubjectPrefix, doc: 'Prefix of every stream subject (e.g. "stage."); empty in production.' },
  ensureStreams: ENSURE_STREAMS_SETTING,
  publishWindow: { env: 'PUBLISH_WINDOW', flag: '--publish-window', default: 256, min: 1, max: 10_000, parse: 'int', doc: 'Objects with a publish awaiting its ack at once (versions of one object are always sent one by one).' },
  maxObjectBytes: {
    env: 'MAX_OBJECT_BYTES',
    flag: '--max-object-bytes',
    default: DEFAULT_MAX_OBJECT_BYTES,
    min: 1024,
    max: 64 * 1024 * 1024,
    parse: 'int',
    doc: 'Largest trimmed object published; larger ones are dead-lettered. Lowered to fit the server max_payload.',
  },
  managedBy: {
    env: 'MANAGED_BY',
    flag: '--managed-by',
    default: DEFAULT_OWN_MANAGERS.join(','),
    parse: parseOwnManagers,
    doc: "Managed-by values of our own EndpointSlices, comma-separated; must include the slicer's MANAGED_BY. Slices with any other value, or none, are other controllers' and are published to KUBE.",
  },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 9101, min: 0, max: 65_535, parse: 'int', doc: 'Port of /metrics, /healthz and /readyz (0 picks a free one).' },
  logLevel: LOG_LEVEL_SETTING,
});

/** The parsed settings. */
export type WatcherConfig = ConfigOf<typeof watcherConfig.spec>;

/** The defaults with `overrides` applied (tests and the in-process stack). */
export function watcherConfigWith(overrides: Partial<WatcherConfig> = {}): WatcherConfig {
  return { ...watcherConfig.parse([], {}), ...overrides };
}

/** The stream names and subject prefix the settings name. */
export function streamNamesOf(c: WatcherConfig): StreamNames {
  return { kube: c.kubeStream, slices: c.slicesStream, dlq: c.dlqStream, prefix: c.subjectPrefix };
}

// How the connection settings above pick the API server: one rule, shared with the other service.
export { kubeConnectionOf } from '@slicemesh/kube';
