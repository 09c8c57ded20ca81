// Every setting of the multi-cluster service, with its default, in one place.

import { parseIPv4Cidr } from '@slicemesh/multicluster';
import { NATS_CONNECTION_SETTINGS, NATS_REPLICAS_SETTING, NATS_URL_SETTING, parseNatsName, parseSubjectPrefix } from '@slicemesh/nats';
import { defineConfig, LOG_LEVEL_SETTING } from '@slicemesh/runtime';
import type { ConfigOf } from '@slicemesh/runtime';

function cidr(text: string): string {
  parseIPv4Cidr(text);
  return text;
}

export const mcsConfig = defineConfig({
  natsUrl: NATS_URL_SETTING,
  ...NATS_CONNECTION_SETTINGS,
  natsReplicas: NATS_REPLICAS_SETTING,
  cluster: { env: 'CLUSTER', flag: '--cluster', default: 'local', doc: "This cluster's id in the cluster set: its subjects and keys, and the source-cluster label of what it exports.", parse: 'string' },
  kubeStream: { env: 'KUBE_STREAM', flag: '--kube-stream', default: 'KUBE', doc: 'Stream of Kubernetes objects (Services and Nodes are read from it).', parse: parseNatsName },
  subjectPrefix: { env: 'SUBJECT_PREFIX', flag: '--subject-prefix', default: '', doc: 'Prefix of every stream subject ("" in production; tests isolate with it).', parse: parseSubjectPrefix },
  svcBucket: { env: 'SVC_BUCKET', flag: '--svc-bucket', default: 'svc', doc: 'KV bucket of service specs: the derived Services of imports go here.', parse: parseNatsName },
  viewsBucket: { env: 'VIEWS_BUCKET', flag: '--views-bucket', default: 'views', doc: 'KV bucket of per-zone views: the views of imports go here.', parse: parseNatsName },
  hintedBucket: { env: 'HINTED_BUCKET', flag: '--hinted-bucket', default: 'hinted', doc: "KV bucket of this cluster's finished slices: what an export carries.", parse: parseNatsName },
  exportStatusBucket: {
    env: 'EXPORT_STATUS_BUCKET',
    flag: '--export-status-bucket',
    default: 'exportstatus',
    doc: "KV bucket of the status each of this cluster's ServiceExports should have (conditions Valid and Conflict); the publisher writes it to the API.",
    parse: parseNatsName,
  },
  serviceImportsBucket: {
    env: 'SERVICE_IMPORTS_BUCKET',
    flag: '--service-imports-bucket',
    default: 'serviceimports',
    doc: "KV bucket of the MCS ServiceImport each import should have in this cluster; the publisher writes them to the API.",
    parse: parseNatsName,
  },
  exportsBucket: { env: 'EXPORTS_BUCKET', flag: '--exports-bucket', default: 'exports', doc: "KV bucket shared by the cluster set (on the hub): every cluster's exports and heartbeats.", parse: parseNatsName },
  exportsDomain: {
    env: 'EXPORTS_DOMAIN',
    flag: '--exports-domain',
    optional: true,
    parse: 'string',
    doc: "JetStream domain of the exports bucket, e.g. the hub's (`hub`) when this cluster's NATS is a leaf node; unset: the connected server's own JetStream.",
  },
  ttl: {
    env: 'CLUSTERSET_TTL',
    flag: '--clusterset-ttl',
    default: '30s',
    min: 1000,
    parse: 'duration',
    doc: "A cluster whose heartbeat is this old is withdrawn from every import (and returns with its next heartbeat). Finite on purpose: a silent cluster's endpoints are not kept for ever.",
  },
  heartbeat: { env: 'CLUSTERSET_HEARTBEAT', flag: '--clusterset-heartbeat', default: '5s', min: 100, parse: 'duration', doc: "How often this cluster's heartbeat is written; keep it well under the TTL (a third or less)." },
  clusterSetCidr: { env: 'CLUSTERSET_IP_CIDR', flag: '--clusterset-ip-cidr', default: '243.0.0.0/16', parse: cidr, doc: 'Where ClusterSet IPs come from (IPv4, /8 to /30); keep it apart from the Service and Pod ranges.' },
  healthPort: { env: 'HEALTH_PORT', flag: '--health-port', default: 9096, min: 0, max: 65_535, doc: 'Port of /metrics, /healthz and /readyz (0 picks a free one).', parse: 'int' },
  logLevel: LOG_LEVEL_SETTING,
});

export type McsConfig = ConfigOf<typeof mcsConfig.spec>;

/** Defaults with `overrides` (tests and the stack). */
export function mcsConfigWith(overrides: Partial<McsConfig> = {}): McsConfig {
  return Object.freeze({ ...mcsConfig.parse([], {}), ...overrides });
}

/** Why the settings cannot work together, or undefined. */
export function mcsConfigProblem(c: Pick<McsConfig, 'ttl' | 'heartbeat'>): string | undefined {
  if (c.heartbeat * 2 > c.ttl) return `CLUSTERSET_HEARTBEAT (${c.heartbeat} ms) must be at most half of CLUSTERSET_TTL (${c.ttl} ms), or one late heartbeat withdraws a live cluster`;
  return undefined;
}
