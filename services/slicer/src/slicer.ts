// Wiring: a slicer replica. It connects to Postgres and NATS once, keeps its share of the KUBE
// partitions through leases (lease-keeper in @slicemesh/runtime, the leases in @slicemesh/db),
// and runs one engine (engine.ts) for the partitions it holds: when the set changes — a replica
// joined or left, a lease was lost — the engine is stopped before any lease is given up and a
// new one starts for the new set. One replica per schema also holds the relay's lease and
// publishes the outbox. Readiness says ready once the engine for the held partitions is.

import { randomUUID } from 'node:crypto';
import type { Db, DbHandle, LeaseClaim } from '@slicemesh/db';
import { RelayWaker, createDb, leaseStore, migrateToLatest } from '@slicemesh/db';
import type { EventRequestPublisher, JetStreamClient, NatsConnection } from '@slicemesh/nats';
import { connectNats, natsConnectionOf, ensureStreams, eventRequestPublisher, jetstream, jetstreamManager } from '@slicemesh/nats';
import type { Clock, LeaseKeeper, LeasedEngines, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { StartupSteps, createLogger, createMetrics, realClock, startLeaseKeeper, startLeasedEngines, warnSlowRenewal } from '@slicemesh/runtime';
import type { SlicerConfig } from './config.ts';
import { RELAY_LEASE_GROUP, resolveSlicerSettings, slicerLeaseGroup } from './config.ts';
import type { Engine, SnapshotOutcome } from './engine.ts';
import { ClosedError, startEngine } from './engine.ts';
import type { SlicerMetrics } from './metrics.ts';
import { createSlicerMetrics } from './metrics.ts';
import { slicerStore } from './store.ts';
import { outboxBacklog, runSlicesRelay } from './relay.ts';

export { ClosedError } from './engine.ts';
export type { SnapshotOutcome } from './engine.ts';

/** Name of the slicer's position in relay_positions. */
export const RELAY_NAME = 'slicer';
/** Pause before an engine whose start failed is started again. */
const ENGINE_RETRY_MS = 2000;

export interface SlicerDeps {
  /** A shared connection; close() leaves it open. Defaults to connecting to config.natsUrl. */
  readonly nc?: NatsConnection;
  /** A shared handle whose search_path is config.dbSchema; close() leaves it open. */
  readonly db?: Db;
  /** Defaults to a pino logger at config.logLevel. */
  readonly logger?: Logger;
  /** Paces the batching window, backoff, polling and lease rounds. Defaults to realClock. */
  readonly clock?: Clock;
  /** Registry to add the slicer's series to. Defaults to createMetrics('slicer'). */
  readonly metrics?: Metrics;
}

export interface Slicer {
  /** Resolves once the replica took its share of the partitions and their engine caught up; rejects if startup fails. */
  readonly ready: Promise<void>;
  readonly metrics: SlicerMetrics;
  isReady(): boolean;
  /** /readyz: ready, or what startup is doing. */
  readiness(): ReadyStatus;
  /** Services marked dirty or being reconciled now (0 when idle or closed). */
  pending(): number;
  /** Partitions this replica holds now. */
  partitions(): readonly number[];
  /** Whether this replica runs the outbox relay now (it holds the relay's lease). */
  relaying(): boolean;
  /** Snapshots a partition this replica holds now and, with COMPACT_LOG, compacts KUBE after it (what SNAPSHOT_EVERY does by itself). */
  snapshot(partition: number): Promise<SnapshotOutcome>;
  /** Stops the engine, gives the leases up, stops the relay, closes what it opened. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a slicer replica for `config` and returns at once; await `ready`.
 *
 * ### Examples
 * ```ts
 * const slicer = startSlicer(slicerConfigWith({ cluster: 'c1', healthPort: 0 }));
 * await slicer.ready;
 * await slicer.close();
 * ```
 */
export function startSlicer(config: SlicerConfig, deps: SlicerDeps = {}): Slicer {
  const settings = resolveSlicerSettings(config);
  const { names } = settings;
  const log = deps.logger ?? createLogger({ service: 'slicer', level: config.logLevel }).child({ replica: config.replicaId });
  const clock = deps.clock ?? realClock;
  const incarnation = randomUUID();
  let db: Db | undefined = deps.db;
  let engines: LeasedEngines<Engine> | undefined;
  const registry = deps.metrics ?? createMetrics('slicer');
  const metrics = createSlicerMetrics(registry, () => (db ? outboxBacklog(db, RELAY_NAME) : Promise.resolve(0)), () => engines?.current()?.pending() ?? 0);
  const held = registry.gauge({ name: 'slicer_partitions_held', help: 'KUBE partitions whose lease this replica holds.' });
  const takeovers = registry.counter({ name: 'slicer_partition_changes_total', help: 'Changes of the set of partitions this replica holds (each restarts its engine).' });
  const waker = new RelayWaker();
  const stopped = new AbortController();
  let ready = false;
  let notReady = 'starting';
  let dbHandle: DbHandle | undefined;
  let nc: NatsConnection | undefined = deps.nc;
  let relayKeeper: LeaseKeeper | undefined;
  let relay: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;
  let eventRequests: EventRequestPublisher | undefined;

  const steps = new StartupSteps(notReady);
  const step = (reason: string): void => {
    if (stopped.signal.aborted) throw new ClosedError('slicer closed during startup');
    steps.next(reason);
    notReady = reason;
  };

  /** The relay lease as the keeper last reported it: what a relay that ended by itself restarts with. */
  let relayClaims: readonly LeaseClaim[] = [];
  function startRelay(claims: readonly LeaseClaim[], js: JetStreamClient, relayDb: Db): Promise<void> {
    relayClaims = claims;
    if (claims.length > 0 && relay === undefined && !stopped.signal.aborted) {
      const stop = new AbortController();
      log.info({ token: claims[0]?.token }, 'running the outbox relay');
      const done = runSlicesRelay({
        db: relayDb,
        js,
        name: RELAY_NAME,
        signal: stop.signal,
        waker,
        fence: claims,
        partitions: config.partitions,
        prefix: names.prefix,
        onPublished: (_row, duplicate) => metrics.outboxPublished.inc({ duplicate: String(duplicate) }),
        onError: (err) => log.warn({ err }, 'outbox relay failed; retrying'),
      });
      const r = { stop, done };
      relay = r;
      // A relay ends by itself only when its save was fenced: the lease had lapsed (a late renewal
      // under load) or moved. If the keeper still reports it held, nothing else would start a relay
      // again and the outbox would wait for ever: try again shortly with what the keeper holds then.
      void done.then(() => {
        if (relay !== r || stop.signal.aborted || stopped.signal.aborted) return;
        relay = undefined;
        log.warn({ token: claims[0]?.token }, 'the outbox relay stopped: its lease lapsed; running it again if this replica still holds the lease');
        setTimeout(() => void startRelay(relayClaims, js, relayDb), 500).unref();
      });
      return Promise.resolve();
    }
    if (claims.length === 0 && relay !== undefined) {
      const r = relay;
      relay = undefined;
      r.stop.abort();
      return r.done;
    }
    return Promise.resolve();
  }

  async function start(): Promise<void> {
    step('connecting to Postgres');
    if (db === undefined) {
      dbHandle = await createDb({ url: config.databaseUrl, schema: config.dbSchema });
      db = dbHandle.db;
    }
    step('migrating');
    const applied = await migrateToLatest(db, config.dbSchema);
    if (applied.length > 0) log.info({ migrations: applied, schema: config.dbSchema }, 'migrated');
    const store = slicerStore(db, config.cluster);

    step('connecting to NATS');
    nc ??= await connectNats({ url: config.natsUrl, role: 'slicer', ...natsConnectionOf(config), name: `${settings.durablePrefix}-${config.replicaId}`, log: (ev) => log.info({ nats: ev.type, detail: ev.detail }, 'NATS connection status') });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    step('creating streams');
    if (config.ensureStreams) await ensureStreams(jsm, names, { replicas: config.natsReplicas, onReplicasChanged: (c) => log.warn({ stream: c.stream, from: c.from, to: c.to }, 'replicas changed to NATS_REPLICAS') });
    eventRequests = eventRequestPublisher(js, {
      prefix: names.prefix,
      onResult: (r) => {
        metrics.eventRequests.inc({ outcome: r.outcome });
        if (r.outcome !== 'published') log.warn({ outcome: r.outcome, reason: r.request.event.reason, object: `${r.request.involvedObject.namespace}/${r.request.involvedObject.name}`, ...(r.outcome === 'failed' ? { error: r.error } : {}) }, 'Event request not published; the Event is lost');
      },
    });

    step('taking leases');
    const member = config.replicaId;
    const ttlMs = config.leaseTtl;
    const onError = (what: string) => (err: unknown): void => log.warn({ err }, `${what}: lease round failed`);
    const onNameClash = (): void => log.error({ replica: member }, 'another live process uses this REPLICA_ID: give every replica its own');
    const onSlowRenewal = warnSlowRenewal(log, ttlMs);
    const relayDb = db;
    relayKeeper = startLeaseKeeper({
      port: leaseStore(relayDb, { group: RELAY_LEASE_GROUP, member, incarnation, ttlMs, partitions: 1 }),
      member,
      partitions: 1,
      ttlMs,
      clock,
      onChange: (claims) => startRelay(claims, js, relayDb),
      onError: onError('relay'),
      onNameClash,
      onSlowRenewal,
    });
    const requests = eventRequests;
    const engineDb = db;
    engines = startLeasedEngines<LeaseClaim, Engine>({
      keeper: {
        port: leaseStore(db, { group: slicerLeaseGroup(config.cluster), member, incarnation, ttlMs, partitions: config.partitions }),
        member,
        partitions: config.partitions,
        ...(settings.pinned !== undefined ? { pinned: settings.pinned } : {}),
        ttlMs,
        onError: onError('partitions'),
        onNameClash,
        onSlowRenewal,
      },
      clock,
      log,
      stopped: stopped.signal,
      isClosedError: (err) => err instanceof ClosedError,
      closedError: () => new ClosedError('slicer closed during startup'),
      onHeld: (claims) => {
        held.set(claims.length);
        takeovers.inc();
      },
      retryMs: ENGINE_RETRY_MS,
      start: (claims) => startEngine({ config, settings, claims, store, js, jsm, log, clock, metrics, eventRequests: requests, onWrote: () => waker.wake(), db: engineDb }),
    });
    step('catching up the partitions held');
    await engines.caughtUp();
    steps.next('ready');
    ready = true;
    metrics.ready.set(1);
    log.info({ cluster: config.cluster, partitions: engines.held(), schema: config.dbSchema, steps: steps.durations() }, 'slicer ready');
  }

  const started = start();
  started.catch(() => {}); // observed through `ready` and close()
  let closing: Promise<void> | undefined;

  const readiness = (): ReadyStatus => (ready ? (engines?.engineReadiness() ?? { ready: true }) : { ready: false, reason: notReady });

  return {
    ready: started,
    metrics,
    isReady: () => readiness().ready,
    readiness,
    pending: () => (closing === undefined ? (engines?.current()?.pending() ?? 0) : 0),
    partitions: () => engines?.held() ?? [],
    relaying: () => relay !== undefined,
    snapshot: (p) => {
      const e = engines?.current();
      if (e === undefined || !e.isReady()) return Promise.reject(new Error(`no engine is ready for partition ${p}`));
      return e.snapshot(p);
    },
    close: () =>
      (closing ??= (async () => {
        stopped.abort();
        // An engine still catching up ends now, so startup ends (ClosedError) instead of finishing.
        await engines?.interrupt();
        await started.catch(() => {});
        await engines?.close();
        await relayKeeper?.close();
        await relay?.done;
        await eventRequests?.flush();
        ready = false;
        metrics.ready.set(0);
        if (dbHandle !== undefined) await dbHandle.close();
        if (deps.nc === undefined && nc !== undefined) await nc.close();
      })()),
  };
}
