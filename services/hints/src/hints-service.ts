// Wiring: a hints replica. It connects to NATS and Postgres once, migrates, keeps its share of the
// KUBE partitions through leases (group `hints/<cluster>`: the lease keeper of @slicemesh/runtime
// over the leases of @slicemesh/db), and runs one engine (engine.ts) for the partitions it holds.
// When the set changes — a replica joined or left, a lease was lost — the running engine is
// stopped (its consumers and its reconciles in flight finish) before any lease is given up, and
// a new engine starts for the new set. Readiness: ready once the engine for the held partitions
// is; a replica holding no partition (more replicas than partitions) is ready, standing by.

import { randomUUID } from 'node:crypto';
import type { DbHandle, LeaseClaim } from '@slicemesh/db';
import { HintsProjectionStore, createDb, leaseStore, migrateToLatest } from '@slicemesh/db';
import type { BackboneNames, JetStreamClient, JetStreamManager, KV, NatsConnection, ReplicasChange } from '@slicemesh/nats';
import { connectNats, natsConnectionOf, ensureKv, ensureStreams, jetstream, jetstreamManager } from '@slicemesh/nats';
import type { Clock, LeasedEngines, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock, startLeasedEngines, warnSlowRenewal } from '@slicemesh/runtime';
import type { HintsConfig } from './config.ts';
import { hintsLeaseGroup, ownedPartitionsOf } from './config.ts';
import type { HintsEngine } from './engine.ts';
import { ClosedError, startHintsEngine } from './engine.ts';
import { hintsMetrics } from './hints-metrics.ts';
import type { HintsEvents } from './hints-events.ts';
import { hintsEvents } from './hints-events.ts';

export { ClosedError } from './engine.ts';

/** Pause before an engine whose start failed is started again. */
const ENGINE_RETRY_MS = 2000;

export interface HintsDeps {
  /** Defaults to a pino logger at config.logLevel. */
  readonly logger?: Logger;
  /** Defaults to a fresh registry ('hints'). */
  readonly metrics?: Metrics;
  /** Defaults to the wall clock. */
  readonly clock?: Clock;
}

export interface HintsHandle {
  /** Resolves when migrated, holding its share of the partitions, and their engine caught up and published every known service once; rejects if startup fails or close() comes first. */
  readonly ready: Promise<void>;
  /** For /readyz: ready once `ready` resolved and while the engine of the partitions held is ready (no consumer failing). */
  readiness(): ReadyStatus;
  readonly metrics: Metrics;
  /** Partitions this replica holds now, sorted. */
  partitions(): readonly number[];
  /** Stops the engine, gives the leases up, closes NATS and Postgres. Idempotent. */
  close(): Promise<void>;
}

interface Connections {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly record: HintsProjectionStore;
  readonly buckets: { readonly views: KV; readonly svc: KV; readonly hinted: KV };
  readonly events: HintsEvents;
}

/** Starts a hints replica; see the file comment. */
export function startHints(config: HintsConfig, deps: HintsDeps = {}): HintsHandle {
  const cluster = config.cluster;
  const owned = ownedPartitionsOf(config);
  const log = (deps.logger ?? createLogger({ service: 'hints', level: config.logLevel })).child({ cluster, replica: config.replicaId });
  const metrics = deps.metrics ?? createMetrics('hints');
  const m = hintsMetrics(metrics);
  const held = metrics.gauge({ name: 'hints_partitions_held', help: 'KUBE partitions whose lease this hints replica holds.' });
  const changes = metrics.counter({ name: 'hints_partition_changes_total', help: 'Changes of the set of partitions this replica holds (each restarts its engine).' });
  const clock = deps.clock ?? realClock;
  const incarnation = randomUUID();
  const names: BackboneNames = {
    kube: config.kubeStream, slices: config.slicesStream, dlq: config.dlqStream, events: config.eventsStream, prefix: config.subjectPrefix, svc: config.svcBucket, views: config.viewsBucket, hinted: config.hintedBucket,
  };
  const stopped = new AbortController();
  let nc: NatsConnection | undefined;
  let dbh: DbHandle | undefined;
  let conns: Connections | undefined;
  let engines: LeasedEngines<HintsEngine> | undefined;
  let ready = false;
  let notReady = 'starting';

  const step = (reason: string): void => {
    if (stopped.signal.aborted) throw new ClosedError('hints service closed before it was ready');
    notReady = reason;
  };

  async function start(): Promise<void> {
    step('connecting to NATS');
    nc = await connectNats({ url: config.natsUrl, role: 'hints', ...natsConnectionOf(config), name: `hints-${cluster}-${config.replicaId}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    step('creating streams and buckets');
    const replicas = { replicas: config.natsReplicas, onReplicasChanged: (c: ReplicasChange) => log.warn({ stream: c.stream, from: c.from, to: c.to }, 'replicas changed to NATS_REPLICAS') };
    if (config.ensureStreams) await ensureStreams(jsm, names, replicas);
    const events = hintsEvents(js, { cluster, prefix: names.prefix, clock, metrics, log });
    const buckets = { views: await ensureKv(nc, names.views, replicas), svc: await ensureKv(nc, names.svc, replicas), hinted: await ensureKv(nc, names.hinted, replicas) };
    step('connecting to Postgres');
    dbh = await createDb({ url: config.databaseUrl, schema: config.dbSchema, onPoolError: (err) => log.warn({ err }, 'idle Postgres connection failed') });
    step('migrating');
    await migrateToLatest(dbh.db, config.dbSchema);
    conns = { js, jsm, record: new HintsProjectionStore(dbh.db, cluster), buckets, events };
    step('taking leases');
    const member = config.replicaId;
    const c = conns;
    engines = startLeasedEngines<LeaseClaim, HintsEngine>({
      keeper: {
        port: leaseStore(dbh.db, { group: hintsLeaseGroup(cluster), member, incarnation, ttlMs: config.leaseTtl, partitions: config.partitions }),
        member,
        partitions: config.partitions,
        ...(owned.pinned !== undefined ? { pinned: owned.pinned } : {}),
        ttlMs: config.leaseTtl,
        onError: (err) => log.warn({ err }, 'lease round failed'),
        onNameClash: () => log.error({ replica: member }, 'another live process uses this REPLICA_ID: give every replica its own'),
        onSlowRenewal: warnSlowRenewal(log, config.leaseTtl),
      },
      clock,
      log,
      stopped: stopped.signal,
      isClosedError: (err) => err instanceof ClosedError,
      closedError: () => new ClosedError('hints service closed before it was ready'),
      onHeld: (claims) => {
        held.set(claims.length);
        changes.inc();
      },
      retryMs: ENGINE_RETRY_MS,
      start: (claims) => startHintsEngine({ config, names, claims, record: c.record, js: c.js, jsm: c.jsm, buckets: c.buckets, events: c.events, log, clock, metrics: m }),
    });
    step('catching up the partitions held');
    await engines.caughtUp();
    ready = true;
    log.info({ partitions: engines.held() }, 'ready');
  }

  const started = start();
  started.catch((err: unknown) => {
    if (!stopped.signal.aborted) {
      notReady = `startup failed: ${err instanceof Error ? err.message : String(err)}`;
      log.error({ err }, 'startup failed');
    }
  });

  function readiness(): ReadyStatus {
    if (stopped.signal.aborted) return { ready: false, reason: 'shutting down' };
    if (!ready) return { ready: false, reason: notReady };
    return engines?.engineReadiness() ?? { ready: true };
  }

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    stopped.abort();
    // An engine still catching up ends now, so startup ends (ClosedError) instead of finishing.
    await engines?.interrupt();
    await started.catch(() => {});
    // The keeper closes the engine before it releases the leases.
    await engines?.close();
    await conns?.events.flush();
    if (nc !== undefined) await nc.drain().catch(() => nc?.close());
    await dbh?.close();
  }

  return { ready: started, readiness, metrics, partitions: () => engines?.held() ?? [], close: () => (closing ??= close()) };
}
