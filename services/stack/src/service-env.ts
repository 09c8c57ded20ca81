// Each service's settings as the environment variables its own config declares. The same map
// configures an in-process service (parsed by its config) and a child process (its env), so
// both modes go through the documented settings and cannot drift apart.

import { NKEY_SEED_FILE_ENV, roleSeedFile } from '@slicemesh/nats';
import type { BackboneNames, NatsRole } from '@slicemesh/nats';

/** Everything the services of one stack share. */
export interface StackLayout {
  /** Comma-separated server list (NATS_URL). */
  readonly natsUrl: string;
  /**
   * NATS_REPLICAS of every service that creates streams or buckets (watcher, slicer, hints,
   * publisher): 1 on a single server, 3 on a cluster. Unset: not passed, so new streams get one
   * replica and existing ones keep their count.
   */
  readonly natsReplicas?: number;
  readonly databaseUrl: string;
  readonly schema: string;
  /** Source cluster id: first token of every subject and key. */
  readonly cluster: string;
  /** KUBE partitions (watcher and slicer must agree). */
  readonly partitions: number;
  readonly names: BackboneNames;
  /** API server the watcher lists and watches. */
  readonly kubeServer: string;
  /** Slicer pod batching window, ms. */
  readonly batchPeriodMs: number;
  /** Slicer KUBE ack wait, ms: how soon a message held by a killed slicer is redelivered. */
  readonly ackWaitMs: number;
  /** pino level of every service. */
  readonly logLevel: LogLevel;
  /**
   * A locked-down NATS: the directory of the role seeds (`<role>.nk`, auth-files.ts); each
   * service connects with its role's. Unset: no credentials.
   */
  readonly natsAuthDir?: string;
}

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One proxy agent: the node it plays and where its dry-run rules go. */
export interface AgentSpec {
  readonly node: string;
  /** The node's zone label when the stack started ('' without one); the agent itself follows its Node. */
  readonly zone: string;
  readonly nodeIPs: readonly string[];
  readonly rulesFile: string;
}

export type Env = Readonly<Record<string, string>>;

/** NATS_NKEY_SEED_FILE of `role` on a locked-down NATS; nothing on an open one. */
function credentials(l: StackLayout, role: NatsRole): Env {
  return l.natsAuthDir === undefined ? {} : { [NKEY_SEED_FILE_ENV]: roleSeedFile(l.natsAuthDir, role) };
}

function streams(l: StackLayout): Env {
  return { ...(l.natsReplicas !== undefined ? { NATS_REPLICAS: String(l.natsReplicas) } : {}), KUBE_STREAM: l.names.kube, SLICES_STREAM: l.names.slices, DLQ_STREAM: l.names.dlq, EVENTS_STREAM: l.names.events ?? 'EVENTS', SUBJECT_PREFIX: l.names.prefix };
}

/** services/watcher/src/config.ts */
export function watcherEnv(l: StackLayout, healthPort: number): Env {
  return {
    CLUSTER: l.cluster, KUBE_SERVER: l.kubeServer, NATS_URL: l.natsUrl, ...credentials(l, 'watcher'), PARTITIONS: String(l.partitions), ...streams(l),
    HEALTH_PORT: String(healthPort), LOG_LEVEL: l.logLevel,
  };
}

/**
 * services/slicer/src/config.ts. Replica `n` is named slicer-<n>: a restarted replica keeps its
 * name and takes its leases back at once instead of waiting for them to expire.
 */
export function slicerEnv(l: StackLayout, healthPort: number, replica = 0): Env {
  return {
    NATS_URL: l.natsUrl, ...credentials(l, 'slicer'), DATABASE_URL: l.databaseUrl, DB_SCHEMA: l.schema, CLUSTER: l.cluster, PARTITIONS: String(l.partitions), ...streams(l),
    BATCH_PERIOD: `${l.batchPeriodMs}ms`, ACK_WAIT: `${l.ackWaitMs}ms`, HEALTH_PORT: String(healthPort), LOG_LEVEL: l.logLevel,
    REPLICA_ID: `slicer-${replica}`,
  };
}

/**
 * services/hints/src/config.ts. Replica `n` is named hints-<n>: a restarted replica keeps its name
 * and takes its leases back at once instead of waiting for them to expire.
 */
export function hintsEnv(l: StackLayout, healthPort: number, replica = 0): Env {
  return {
    NATS_URL: l.natsUrl, ...credentials(l, 'hints'), DATABASE_URL: l.databaseUrl, DB_SCHEMA: l.schema, CLUSTER: l.cluster, PARTITIONS: String(l.partitions), ...streams(l),
    SVC_BUCKET: l.names.svc, VIEWS_BUCKET: l.names.views, HINTED_BUCKET: l.names.hinted, HEALTH_PORT: String(healthPort), LOG_LEVEL: l.logLevel,
    REPLICA_ID: `hints-${replica}`,
  };
}

/** What the stack's publisher does: write to the API, count only, or not run. */
export const STACK_PUBLISHER_MODES = ['write', 'shadow', 'off'] as const;
export type StackPublisherMode = (typeof STACK_PUBLISHER_MODES)[number];

/** services/publisher/src/config.ts: the slices go to the API server the watcher reads, at kube-controller-manager's default QPS and burst. */
export function publisherEnv(l: StackLayout, mode: 'write' | 'shadow', healthPort: number): Env {
  return {
    MODE: mode, NATS_URL: l.natsUrl, ...credentials(l, 'publisher'), DATABASE_URL: l.databaseUrl, DB_SCHEMA: l.schema, CLUSTER: l.cluster, ...streams(l),
    HINTED_BUCKET: l.names.hinted, KUBE_SERVER: l.kubeServer, HEALTH_PORT: String(healthPort), LOG_LEVEL: l.logLevel,
  };
}

/** services/proxy-agent/src/config.ts, with the dry-run backend writing iptables-restore input. */
export function agentEnv(l: StackLayout, a: AgentSpec, healthPort: number): Env {
  return {
    // No NODE_ZONE: the agent follows its Node's zone label in KUBE, relabels included.
    NATS_URL: l.natsUrl, ...credentials(l, 'agent'), CLUSTER: l.cluster, NODE_NAME: a.node, KUBE_STREAM: l.names.kube, SUBJECT_PREFIX: l.names.prefix, NODE_IPS: a.nodeIPs.join(','),
    BACKEND: 'dry-run', DRY_RUN_FILE: a.rulesFile, DRY_RUN_FORMAT: 'iptables', MIN_SYNC_PERIOD: '200ms',
    SVC_BUCKET: l.names.svc, VIEWS_BUCKET: l.names.views, HEALTH_PORT: String(healthPort), LOG_LEVEL: l.logLevel,
  };
}
