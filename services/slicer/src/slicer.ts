// Wiring: a slicer replica. It connects to Postgres and NATS once, keeps its share of the KUBE
// partitions through leases (lease-keeper in @slicemesh/runtime, the leases in @slicemesh/db),
// and runs one engine (engine.ts) for the partitions it holds: when the set changes — a replica
// joined or left, a lease was lost — the engine is stopped before any lease is given up and a
// new one starts for the new set. One replica per schema also holds the relay's lease and
// publishes the outbox. Readiness says ready once the engine for the held partitions is.

import { randomUUID } from 'node:crypto';
import type { Db, DbHandle, LeaseClaim } from '@slicemesh/db';
import { RelayWaker, createDb, leaseStore, migrateToLatest } from '@slicemesh/db';
import type { EventRequestPublisher, JetStreamClient, JetStreamManager, NatsConnection } from '@slicemesh/nats';
import { connectNats, ensureStreams, eventRequestPublisher, jetstream, jetstreamManager } from '@slicemesh/nats';
import type { Clock, LeaseKeeper, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock, startLeaseKeeper } from '@slicemesh/runtime';
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
  let engine: Engine | undefined;
  const registry = deps.metrics ?? createMetrics('slicer');
  const metrics = createSlicerMetrics(registry, () => (db ? outboxBacklog(db, RELAY_NAME) : Promise.resolve(0)), () => engine?.pending() ?? 0);
  const held = registry.gauge({ name: 'slicer_partitions_held', help: 'KUBE partitions whose lease this replica holds.' });
  const takeovers = registry.counter({ name: 'slicer_partition_changes_total', help: 'Changes of the set of partitions this replica holds (each restarts its engine).' });
  const waker = new RelayWaker();
  const stopped = new AbortController();
  let ready = false;
  let notReady = 'starting';
  let dbHandle: DbHandle | undefined;
  let nc: NatsConnection | undefined = deps.nc;
  let keeper: LeaseKeeper | undefined;
  let relayKeeper: LeaseKeeper | undefined;
  let relay: { readonly stop: AbortController; readonly done: Promise<void> } | undefined;
  let eventRequests: EventRequestPublisher | undefined;
  let swapping: Promise<void> = Promise.resolve();

  const step = (reason: string): void => {
    if (stopped.signal.aborted) throw new ClosedError('slicer closed during startup');
    notReady = reason;
  };

  // Stops the running engine, then starts one for `claims` (none: this replica stands by).
  function swap(claims: readonly LeaseClaim[], js: JetStreamClient, jsm: JetStreamManager, store: ReturnType<typeof slicerStore>): Promise<void> {
    swapping = swapping.then(async () => {
      const old = engine;
      engine = undefined;
      if (old !== undefined) await old.close();
      held.set(claims.length);
      takeovers.inc();
      if (claims.length === 0 || stopped.signal.aborted || eventRequests === undefined) {
        log.info({ partitions: [] }, 'holding no partition');
        return;
      }
      log.info({ partitions: claims.map((c) => c.partition), tokens: claims.map((c) => c.token) }, 'starting the engine for the partitions held');
      const e = startEngine({ config, settings, claims, store, js, jsm, log, clock, metrics, eventRequests, onWrote: () => waker.wake(), ...(db !== undefined ? { db } : {}) });
      engine = e;
      e.ready.catch((err: unknown) => {
        if (err instanceof ClosedError || engine !== e) return;
        log.error({ err, partitions: e.partitions }, 'the engine did not start; starting it again');
        clock.setTimer(() => {
          if (engine === e) void swap(claims, js, jsm, store);
        }, ENGINE_RETRY_MS);
      });
    });
    return swapping;
  }

  function startRelay(claims: readonly LeaseClaim[], js: JetStreamClient, relayDb: Db): Promise<void> {
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
        onPublished: (_row, duplicate) => metrics.outboxPublished.inc({ duplicate: String(duplicate) }),
        onError: (err) => log.warn({ err }, 'outbox relay failed; retrying'),
      });
      relay = { stop, done };
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

  // Until the engine for the partitions held now caught up (it may be replaced meanwhile).
  async function engineCaughtUp(): Promise<void> {
    for (;;) {
      await swapping;
      const e = engine;
      if (e === undefined) return;
      try {
        await e.ready;
        if (stopped.signal.aborted) throw new ClosedError('slicer closed during startup');
        if (engine === e) return;
      } catch (err) {
        if (stopped.signal.aborted) throw err;
        await new Promise((r) => clock.setTimer(() => r(undefined), 200));
      }
    }
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
    nc ??= await connectNats({ url: config.natsUrl, name: `${settings.durablePrefix}-${config.replicaId}`, log: (ev) => log.info({ nats: ev.type, detail: ev.detail }, 'NATS connection status') });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    step('creating streams');
    if (config.ensureStreams) await ensureStreams(jsm, names);
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
    });
    keeper = startLeaseKeeper({
      port: leaseStore(db, { group: slicerLeaseGroup(config.cluster), member, incarnation, ttlMs, partitions: config.partitions }),
      member,
      partitions: config.partitions,
      ...(settings.pinned !== undefined ? { pinned: settings.pinned } : {}),
      ttlMs,
      clock,
      onChange: (claims) => swap(claims, js, jsm, store),
      onError: onError('partitions'),
      onNameClash,
    });
    await keeper.started;
    step('catching up the partitions held');
    await engineCaughtUp();
    ready = true;
    metrics.ready.set(1);
    log.info({ cluster: config.cluster, partitions: keeper.held(), schema: config.dbSchema }, 'slicer ready');
  }

  const started = start();
  started.catch(() => {}); // observed through `ready` and close()
  let closing: Promise<void> | undefined;

  const readiness = (): ReadyStatus => {
    if (!ready) return { ready: false, reason: notReady };
    const e = engine;
    if (e !== undefined && !e.isReady()) {
      const r = e.readiness();
      return { ready: false, reason: `partitions ${e.partitions.join(',')}: ${r.ready ? 'starting' : r.reason}` };
    }
    return { ready: true };
  };

  return {
    ready: started,
    metrics,
    isReady: () => readiness().ready,
    readiness,
    pending: () => (closing === undefined ? (engine?.pending() ?? 0) : 0),
    partitions: () => keeper?.held() ?? [],
    snapshot: (p) => {
      const e = engine;
      if (e === undefined || !e.isReady()) return Promise.reject(new Error(`no engine is ready for partition ${p}`));
      return e.snapshot(p);
    },
    close: () =>
      (closing ??= (async () => {
        stopped.abort();
        // An engine still catching up ends now, so startup ends (ClosedError) instead of finishing.
        await engine?.close();
        await started.catch(() => {});
        await keeper?.close();
        await swapping;
        await engine?.close();
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
