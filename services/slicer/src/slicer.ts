// Wiring: durable consumers on KUBE feed ingest (which only marks Services dirty and queues
// their keys), workers reconcile keys from the queue, the relay publishes the outbox, and the
// health server reports readiness once the initial backlog is consumed.

import type { Db, DbHandle } from '@slicemesh/db';
import { createDb, getOffset, listDirty, migrateToLatest } from '@slicemesh/db';
import type { ConsumedMessage, DurableOptions, HandlerOutcome, JetStreamClient, JetStreamManager, NatsConnection } from '@slicemesh/nats';
import {
  connectNats,
  restartDurableAt,
  ensureStreams,
  jetstream,
  jetstreamManager,
  kubeNodesFilter,
  kubePartitionFilter,
  partitionOf,
  pendingCount,
} from '@slicemesh/nats';
import type { Clock, HealthServer, Logger, Metrics, ReconcileErrorReport } from '@slicemesh/runtime';
import { WorkQueue, createLogger, createMetrics, realClock, runWorkers, startHealthServer } from '@slicemesh/runtime';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import { parseServiceKeyString, serviceKeyString } from './affected.ts';
import type { SlicerConfig } from './config.ts';
import { nodesDurable, offsetName, partitionDurable, resolveSlicerSettings } from './config.ts';
import type { IngestDeps } from './ingest.ts';
import { ingestBatch } from './ingest.ts';
import type { SlicerMetrics } from './metrics.ts';
import { createSlicerMetrics } from './metrics.ts';
import { consumeBatchesInOrder } from './consume.ts';
import { natsDeadLetters } from './dead-letters.ts';
import { pgStores } from './pg-store.ts';
import type { ReconcileDeps } from './reconcile.ts';
import { reconcileService } from './reconcile.ts';
import { outboxBacklog, runSlicesRelay } from './relay.ts';

/** Name of the slicer's position in relay_positions. */
export const RELAY_NAME = 'slicer';
/** How often readiness re-checks the consumers' backlog. */
/** Most KUBE messages applied in one ingest transaction. */
const INGEST_BATCH = 500;
const DRAIN_POLL_MS = 200;
/** Pause before a consume loop that failed (e.g. NATS down) starts again. */
const CONSUME_RESTART_MS = 1000;

export interface SlicerDeps {
  /** A shared connection; close() leaves it open. Defaults to connecting to config.natsUrl. */
  readonly nc?: NatsConnection;
  /** A shared handle whose search_path is config.dbSchema; close() leaves it open. */
  readonly db?: Db;
  /** Defaults to a pino logger at config.logLevel. */
  readonly logger?: Logger;
  /** Paces the batching window, backoff and polling. Defaults to realClock. */
  readonly clock?: Clock;
  /** Registry to add the slicer's series to. Defaults to createMetrics('slicer'). */
  readonly metrics?: Metrics;
  /** Serve /metrics, /healthz, /readyz on config.healthPort. Defaults to true. */
  readonly healthServer?: boolean;
}

export interface Slicer {
  /** Resolves once migrations ran, consumers exist and the initial backlog was consumed; rejects if startup fails. */
  readonly ready: Promise<void>;
  readonly metrics: SlicerMetrics;
  /** The health server's port once it listens. */
  healthPort(): number | undefined;
  isReady(): boolean;
  /** Stops consuming, drains the workers, stops the relay, closes what it opened. Idempotent. */
  close(): Promise<void>;
}

/** A reconcile that wrote its plan but skipped pods (A.3.4): retried with backoff. */
export class PartialReconcileError extends Error {
  override readonly name = 'PartialReconcileError';
  constructor(
    readonly service: string,
    readonly problems: readonly string[],
  ) {
    super(`Service ${service}: ${problems.join('; ')}`);
  }
}

/** `ready` rejects with this when close() was called before startup finished. */
export class ClosedError extends Error {
  override readonly name = 'ClosedError';
}

function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = (): void => {
      clock.clearTimer(handle);
      resolve();
    };
    const handle = clock.setTimer(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Starts the slicer for `config` and returns at once; await `ready`.
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
  const log = deps.logger ?? createLogger({ service: 'slicer', level: config.logLevel });
  const clock = deps.clock ?? realClock;
  let db: Db | undefined = deps.db;
  const metrics = createSlicerMetrics(deps.metrics ?? createMetrics('slicer'), () => (db ? outboxBacklog(db, RELAY_NAME) : Promise.resolve(0)));
  const stopConsuming = new AbortController();
  const stopRelay = new AbortController();
  const queue = new WorkQueue<string>({ clock });
  const owned = new Set(settings.partitions);
  const durables = [...settings.partitions.map((p) => partitionDurable(settings.durablePrefix, p)), nodesDurable(settings.durablePrefix)];
  let ready = false;
  let notReady = 'starting';
  let health: HealthServer | undefined;
  let dbHandle: DbHandle | undefined;
  let nc: NatsConnection | undefined = deps.nc;
  let workers: Promise<void> | undefined;
  let relay: Promise<void> | undefined;
  const loops: Promise<void>[] = [];

  const step = (reason: string): void => {
    if (stopConsuming.signal.aborted) throw new ClosedError('slicer closed during startup');
    notReady = reason;
  };

  async function reconcileKey(key: string): Promise<void> {
    const end = metrics.reconcileDuration.startTimer();
    try {
      const out = await reconcileService(parseServiceKeyString(key), reconcileDeps);
      metrics.reconciles.inc({ result: out.errors.length > 0 ? 'partial' : out.result });
      if (out.created > 0) metrics.sliceWrites.inc({ op: 'create' }, out.created);
      if (out.updated > 0) metrics.sliceWrites.inc({ op: 'update' }, out.updated);
      if (out.deleted > 0) metrics.sliceWrites.inc({ op: 'delete' }, out.deleted);
      const l = log.child({ service: key, ...(out.reconcileID ? { reconcileID: out.reconcileID } : {}) });
      const facts = { created: out.created, updated: out.updated, deleted: out.deleted, seq: out.kubeSeq?.to };
      if (out.result === 'changed') l.info(facts, 'reconciled');
      else l.debug(facts, out.result === 'clean' ? 'already reconciled' : 'reconciled, nothing to write');
      for (const ev of out.events) l.warn({ reason: ev.reason }, ev.message);
      if (out.errors.length > 0) throw new PartialReconcileError(key, out.errors);
      if (!out.cleared) queue.add(key); // a newer mark survived the clear
    } finally {
      end();
    }
  }

  function onReconcileError(r: ReconcileErrorReport<string>): void {
    if (r.error instanceof PartialReconcileError) {
      log.warn({ service: r.key, retries: r.retries, outcome: r.outcome, problems: r.error.problems }, 'reconcile skipped pods; retrying with backoff');
      return;
    }
    metrics.reconciles.inc({ result: r.outcome === 'requeued' ? 'error' : r.outcome });
    log.error({ service: r.key, err: r.error, retries: r.retries, outcome: r.outcome }, 'reconcile failed');
  }

  let reconcileDeps: ReconcileDeps;
  let ingestDeps: IngestDeps;

  function handler(offset: string): (msgs: ConsumedMessage[]) => Promise<HandlerOutcome> {
    return async (msgs) => {
      const outcomes = await ingestBatch(offset, msgs, ingestDeps);
      for (const [i, out] of outcomes.entries()) {
        const msg = msgs[i];
        metrics.eventsIngested.inc({ kind: out.kind ?? 'unknown', result: out.result });
        if (out.result === 'dead-lettered') {
          metrics.deadLetters.inc();
          log.warn({ seq: msg?.seq, subject: msg?.subject, reason: out.reason }, 'dead-lettered a KUBE message');
        }
        for (const k of out.keys) queue.addAfter(serviceKeyString(k.namespace, k.name), out.delayMs);
      }
      return 'ack';
    };
  }

  // Positions the durable at the partition's stored offset + 1: the offset (written with the
  // effects) is the truth, so whatever the server still holds as pending is dropped and
  // redelivered in order (see consume.ts).
  async function positionDurable(jsm: JetStreamManager, spec: DurableOptions): Promise<void> {
    if (db === undefined) throw new Error('slicer: database not connected');
    const applied = await getOffset(db, offsetName(names.kube, spec.durable));
    await restartDurableAt(jsm, names.kube, spec, applied + 1);
  }

  async function superviseLoop(js: JetStreamClient, jsm: JetStreamManager, spec: DurableOptions): Promise<void> {
    const durable = spec.durable;
    const offset = offsetName(names.kube, durable);
    const signal = stopConsuming.signal;
    let failures = 0;
    for (let first = true; !signal.aborted; first = false) {
      try {
        if (!first) await positionDurable(jsm, spec);
        await consumeBatchesInOrder(js, names.kube, durable, handler(offset), { signal, batch: INGEST_BATCH });
        failures = 0;
        if (!signal.aborted) {
          // The subscription ended by itself (e.g. the consumer was deleted): do not spin.
          log.warn({ consumer: durable }, 'consumer ended; restarting');
          await sleep(clock, CONSUME_RESTART_MS, signal);
        }
      } catch (err) {
        failures++;
        metrics.eventsIngested.inc({ kind: 'unknown', result: 'error' });
        log.error({ err, consumer: durable, failures }, 'ingest failed; restarting from the stored offset');
        await sleep(clock, Math.min(CONSUME_RESTART_MS * 2 ** Math.min(failures - 1, 5), 30_000), signal);
      }
    }
  }

  async function waitDrained(jsm: JetStreamManager): Promise<void> {
    const signal = stopConsuming.signal;
    for (;;) {
      try {
        const pending = await Promise.all(durables.map((d) => pendingCount(jsm, names.kube, d)));
        if (pending.every((n) => n === 0)) return;
        notReady = `consuming the initial backlog (${pending.reduce((a, b) => a + b, 0)} messages left)`;
      } catch (err) {
        notReady = `cannot read consumer state: ${err instanceof Error ? err.message : String(err)}`;
      }
      await sleep(clock, DRAIN_POLL_MS, signal);
      if (signal.aborted) throw new ClosedError('slicer closed during startup');
    }
  }

  async function start(): Promise<void> {
    if (deps.healthServer !== false) {
      health = await startHealthServer({ port: config.healthPort, registry: metrics.registry, ready: () => (ready ? { ready: true } : { ready: false, reason: notReady }) });
    }
    step('connecting to Postgres');
    if (db === undefined) {
      dbHandle = await createDb({ url: config.databaseUrl, schema: config.dbSchema });
      db = dbHandle.db;
    }
    step('migrating');
    const applied = await migrateToLatest(db, config.dbSchema);
    if (applied.length > 0) log.info({ migrations: applied, schema: config.dbSchema }, 'migrated');
    step('connecting to NATS');
    nc ??= await connectNats({ url: config.natsUrl, name: `${settings.durablePrefix}`, log: (ev) => log.info({ nats: ev.type, detail: ev.detail }, 'NATS connection status') });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    step('creating streams and consumers');
    if (config.ensureStreams) await ensureStreams(jsm, names);
    // One unacknowledged batch at a time: the offset check in ingest needs stream order, also
    // across redeliveries (see ingest.ts), and a batch is acked or nak'ed whole.
    const durableOpts = { ackWaitMs: config.ackWait, maxAckPending: INGEST_BATCH };
    const specs: DurableOptions[] = [
      ...settings.partitions.map((p) => ({ ...durableOpts, durable: partitionDurable(settings.durablePrefix, p), filterSubject: kubePartitionFilter(config.cluster, p, names) })),
      { ...durableOpts, durable: nodesDurable(settings.durablePrefix), filterSubject: kubeNodesFilter(config.cluster, names) },
    ];
    for (const spec of specs) await positionDurable(jsm, spec);

    const stores = pgStores(db);
    ingestDeps = {
      store: stores.ingest,
      deadLetters: natsDeadLetters(js, config.cluster, names, clock),
      cluster: config.cluster,
      partitions: config.partitions,
      prefix: names.prefix,
      ownsPartition: (p) => owned.has(p),
      batchPeriodMs: config.batchPeriod,
    };
    reconcileDeps = {
      store: stores.reconcile,
      cluster: config.cluster,
      partitions: config.partitions,
      prefix: names.prefix,
      managedBy: config.managedBy,
      maxEndpointsPerSlice: config.maxEndpointsPerSlice,
      partitionConsumer: (p) => offsetName(names.kube, partitionDurable(settings.durablePrefix, p)),
      nodesConsumer: offsetName(names.kube, nodesDurable(settings.durablePrefix)),
      triggerTimes: new TriggerTimeTracker(),
    };

    step('recovering dirty Services');
    // Marks committed before a crash or restart were never reconciled: queue them first.
    const leftover = (await listDirty(db)).filter((d) => d.cluster === config.cluster && owned.has(partitionOf(d.namespace, config.partitions)));
    for (const d of leftover) queue.add(serviceKeyString(d.namespace, d.name));
    if (leftover.length > 0) log.info({ services: leftover.length }, 'queued Services left dirty by a previous run');

    for (const spec of specs) loops.push(superviseLoop(js, jsm, spec));
    const relayDb = db;
    relay = runSlicesRelay({
      db: relayDb,
      js,
      name: RELAY_NAME,
      signal: stopRelay.signal,
      onPublished: (_row, duplicate) => metrics.outboxPublished.inc({ duplicate: String(duplicate) }),
      onError: (err) => log.warn({ err }, 'outbox relay failed; retrying'),
    });

    step('consuming the initial backlog');
    await waitDrained(jsm);
    // Like a controller waiting for its informer caches: reconciling a Service from a partial
    // view of the backlog (its Service before its pods, say) would write placeholder slices
    // whose names then outlive the real ones. Marks made meanwhile wait in the queue.
    workers = runWorkers(queue, config.workers, reconcileKey, { onError: onReconcileError });
    ready = true;
    metrics.ready.set(1);
    log.info({ cluster: config.cluster, partitions: settings.partitions, schema: config.dbSchema }, 'slicer ready');
  }

  const started = start();
  started.catch(() => {}); // observed through `ready` and close()
  let closing: Promise<void> | undefined;

  return {
    ready: started,
    metrics,
    healthPort: () => health?.port,
    isReady: () => ready,
    close: () =>
      (closing ??= (async () => {
        stopConsuming.abort();
        await started.catch(() => {});
        await Promise.all(loops);
        queue.shutDown();
        await workers;
        stopRelay.abort();
        await relay;
        ready = false;
        metrics.ready.set(0);
        await health?.close();
        if (dbHandle !== undefined) await dbHandle.close();
        if (deps.nc === undefined && nc !== undefined) await nc.close();
      })()),
  };
}
