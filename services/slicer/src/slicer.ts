// Wiring: the slicer keeps its partitions' cluster state in memory (a ClusterState, restored
// from the Postgres snapshot at start, then fed by the log). Durable consumers on KUBE feed
// ingest (commit, then apply to memory and mark Services dirty); one reconcile loop takes the
// ready keys in batches, plans them against memory and writes each batch in one transaction;
// the relay publishes the outbox; readiness (served by the service host) says ready once the backlog is
// consumed and every known Service was reconciled once.

import { performance } from 'node:perf_hooks';
import { ClusterState } from '@slicemesh/core';
import type { Db, DbHandle } from '@slicemesh/db';
import { RelayWaker, createDb, migrateToLatest } from '@slicemesh/db';
import type { ConsumedMessage, DurableOptions, EventRequestPublisher, HandlerOutcome, JetStreamClient, JetStreamManager, NatsConnection } from '@slicemesh/nats';
import {
  MIRRORING_EVENT_COMPONENT,
  connectNats,
  eventRequest,
  eventRequestPublisher,
  consumeBatchesInOrder,
  restartDurableAt,
  ensureStreams,
  jetstream,
  jetstreamManager,
  kubeNodesFilter,
  kubePartitionFilter,
  partitionOf,
  pendingCount,
} from '@slicemesh/nats';
import type { Clock, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { WorkQueue, createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import type { SlicerConfig } from './config.ts';
import { nodesDurable, offsetName, partitionDurable, resolveSlicerSettings } from './config.ts';
import { DirtyMarks } from './dirty-marks.ts';
import type { IngestDeps } from './ingest.ts';
import { ingestBatch } from './ingest.ts';
import type { SlicerMetrics } from './metrics.ts';
import { createSlicerMetrics } from './metrics.ts';
import { natsDeadLetters } from './dead-letters.ts';
import { restoreProjection, slicerStore } from './store.ts';
import type { ReconcileDeps, ReconcileOutcome } from './reconcile.ts';
import { reconcileBatch, splitServiceKey } from './reconcile.ts';
import { outboxBacklog, runSlicesRelay } from './relay.ts';

/** Name of the slicer's position in relay_positions. */
export const RELAY_NAME = 'slicer';
/** Most KUBE messages applied in one ingest transaction. */
const INGEST_BATCH = 500;
/** Most Services reconciled and written in one transaction. */
const RECONCILE_BATCH = 256;
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
}

export interface Slicer {
  /** Resolves once migrations ran, consumers exist and the initial backlog was consumed; rejects if startup fails. */
  readonly ready: Promise<void>;
  readonly metrics: SlicerMetrics;
  isReady(): boolean;
  /** /readyz: ready, or what startup is doing. */
  readiness(): ReadyStatus;
  /** Services marked dirty or being reconciled now (0 when idle or closed). */
  pending(): number;
  /** Stops consuming, drains the workers, stops the relay, closes what it opened. Idempotent. */
  close(): Promise<void>;
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
  let inFlight = 0;
  const dirty = new DirtyMarks();
  const metrics = createSlicerMetrics(deps.metrics ?? createMetrics('slicer'), () => (db ? outboxBacklog(db, RELAY_NAME) : Promise.resolve(0)), () => dirty.size + inFlight);
  const stopConsuming = new AbortController();
  const stopRelay = new AbortController();
  const queue = new WorkQueue<string>({ clock });
  const owned = new Set(settings.partitions);
  const state = new ClusterState({ ownsNamespace: (ns) => owned.has(partitionOf(ns, config.partitions)) });
  const offsets = new Map<string, number>();
  const waker = new RelayWaker();
  const durables = [...settings.partitions.map((p) => partitionDurable(settings.durablePrefix, p)), nodesDurable(settings.durablePrefix)];
  let ready = false;
  let notReady = 'starting';
  let dbHandle: DbHandle | undefined;
  let nc: NatsConnection | undefined = deps.nc;
  let reconciling: Promise<void> | undefined;
  let relay: Promise<void> | undefined;
  const loops: Promise<void>[] = [];
  // Keys of the startup pass; ready once each was reconciled (or failed) once.
  const initial = new Set<string>();
  let initialDone: () => void = () => {};

  const step = (reason: string): void => {
    if (stopConsuming.signal.aborted) throw new ClosedError('slicer closed during startup');
    notReady = reason;
  };

  let reconcileDeps: ReconcileDeps;
  let ingestDeps: IngestDeps;
  let eventRequests: EventRequestPublisher | undefined;

  // The mirroring controller records its warnings on the Endpoints object (A.13.5). Called only
  // after the batch committed; the publish is not awaited and cannot fail the reconcile.
  function emitEvents(out: ReconcileOutcome): void {
    if (out.events.length === 0 || eventRequests === undefined) return;
    const { namespace, name } = splitServiceKey(out.key);
    const uid = state.endpoints(namespace, name)?.metadata.uid;
    const ref = { kind: 'Endpoints', apiVersion: 'v1', namespace, name, ...(uid ? { uid } : {}) };
    for (const ev of out.events) eventRequests.emit(eventRequest(config.cluster, MIRRORING_EVENT_COMPONENT, ref, ev, clock.now()));
  }

  function report(out: ReconcileOutcome, commitMs: number): void {
    metrics.reconciles.inc({ result: out.errors.length > 0 ? 'partial' : out.result });
    if (out.result !== 'clean') metrics.reconcileDuration.observe((out.planMs + commitMs) / 1000);
    if (out.created > 0) metrics.sliceWrites.inc({ op: 'create' }, out.created);
    if (out.updated > 0) metrics.sliceWrites.inc({ op: 'update' }, out.updated);
    if (out.deleted > 0) metrics.sliceWrites.inc({ op: 'delete' }, out.deleted);
    const l = log.child({ service: out.key, ...(out.reconcileID ? { reconcileID: out.reconcileID } : {}) });
    const facts = { created: out.created, updated: out.updated, deleted: out.deleted, seq: out.kubeSeq?.to, planMs: Math.round(out.planMs * 100) / 100 };
    if (out.result === 'changed') l.info(facts, 'reconciled');
    else if (out.result !== 'clean') l.debug(facts, 'reconciled, nothing to write');
    for (const ev of out.events) l.warn({ reason: ev.reason }, ev.message);
    emitEvents(out);
    if (out.errors.length > 0) l.warn({ problems: out.errors, retries: queue.numRequeues(out.key) }, 'reconcile skipped pods; retrying with backoff');
  }

  // The one reconcile loop: batches of ready keys, each batch one transaction.
  async function reconcileLoop(): Promise<void> {
    for (;;) {
      const keys = await queue.getBatch(RECONCILE_BATCH);
      if (keys.length === 0) return;
      inFlight = keys.length;
      try {
        const t0 = performance.now();
        const outcomes = await reconcileBatch(keys, reconcileDeps, () => performance.now());
        const total = performance.now() - t0;
        const commitMs = Math.max(0, total - outcomes.reduce((n, o) => n + o.planMs, 0));
        log.debug({ services: keys.length, ms: Math.round(total * 100) / 100, commitMs: Math.round(commitMs * 100) / 100 }, 'reconciled a batch');
        let wrote = false;
        for (const out of outcomes) {
          report(out, commitMs);
          if (out.result === 'changed') wrote = true;
          if (out.errors.length > 0) queue.addRateLimited(out.key);
          else queue.forget(out.key);
        }
        if (wrote) waker.wake();
      } catch (err) {
        for (const k of keys) {
          metrics.reconciles.inc({ result: 'error' });
          queue.addRateLimited(k);
        }
        log.error({ err, services: keys.length, first: keys[0] }, 'writing a reconcile batch failed; memory restored, retrying with backoff');
      } finally {
        inFlight = 0;
        for (const k of keys) {
          queue.done(k);
          if (initial.delete(k) && initial.size === 0) initialDone();
        }
      }
    }
  }

  function handler(offset: string): (msgs: ConsumedMessage[]) => Promise<HandlerOutcome> {
    return async (msgs) => {
      const t0 = performance.now();
      const outcomes = await ingestBatch(offset, msgs, ingestDeps);
      log.debug({ consumer: offset, messages: msgs.length, ms: Math.round((performance.now() - t0) * 100) / 100 }, 'ingested a batch');
      for (const [i, out] of outcomes.entries()) {
        const msg = msgs[i];
        metrics.eventsIngested.inc({ kind: out.kind ?? 'unknown', result: out.result });
        if (out.result === 'dead-lettered') {
          metrics.deadLetters.inc();
          log.warn({ seq: msg?.seq, subject: msg?.subject, reason: out.reason }, 'dead-lettered a KUBE message');
        }
        if (out.result === 'echo') {
          log.warn({ seq: msg?.seq, subject: msg?.subject, managedBy: config.managedBy }, "an EndpointSlice of ours came back through KUBE: the watcher's MANAGED_BY should include the slicer's");
        }
        for (const k of out.keys) {
          dirty.mark(k, msg?.seq ?? 0);
          queue.addAfter(k, out.delayMs);
        }
      }
      return 'ack';
    };
  }

  // Positions the durable at the consumer's committed offset + 1: the offset (written with the
  // objects) is the truth, so whatever the server still holds as pending is dropped and
  // redelivered in order.
  async function positionDurable(jsm: JetStreamManager, spec: DurableOptions): Promise<void> {
    await restartDurableAt(jsm, names.kube, spec, (offsets.get(offsetName(names.kube, spec.durable)) ?? 0) + 1);
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
        log.error({ err, consumer: durable, failures }, 'ingest failed; restarting from the committed offset');
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
    step('connecting to Postgres');
    if (db === undefined) {
      dbHandle = await createDb({ url: config.databaseUrl, schema: config.dbSchema });
      db = dbHandle.db;
    }
    step('migrating');
    const applied = await migrateToLatest(db, config.dbSchema);
    if (applied.length > 0) log.info({ migrations: applied, schema: config.dbSchema }, 'migrated');
    const store = slicerStore(db, config.cluster);

    step('loading the snapshot');
    const t0 = performance.now();
    const consumers = durables.map((d) => offsetName(names.kube, d));
    const restored = restoreProjection(state, await store.loadSnapshot(consumers));
    for (const c of consumers) offsets.set(c, restored.offsets.get(c) ?? 0);
    log.info({ ...state.counts(), ms: Math.round(performance.now() - t0), offsets: Object.fromEntries(offsets) }, 'projection restored from Postgres');

    step('connecting to NATS');
    nc ??= await connectNats({ url: config.natsUrl, name: `${settings.durablePrefix}`, log: (ev) => log.info({ nats: ev.type, detail: ev.detail }, 'NATS connection status') });
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    step('creating streams and consumers');
    if (config.ensureStreams) await ensureStreams(jsm, names);
    eventRequests = eventRequestPublisher(js, {
      prefix: names.prefix,
      onResult: (r) => {
        metrics.eventRequests.inc({ outcome: r.outcome });
        if (r.outcome !== 'published') log.warn({ outcome: r.outcome, reason: r.request.event.reason, object: `${r.request.involvedObject.namespace}/${r.request.involvedObject.name}`, ...(r.outcome === 'failed' ? { error: r.error } : {}) }, 'Event request not published; the Event is lost');
      },
    });
    // One unacknowledged batch at a time: the offset check in ingest needs stream order, also
    // across redeliveries (see ingest.ts), and a batch is acked or nak'ed whole.
    const durableOpts = { ackWaitMs: config.ackWait, maxAckPending: INGEST_BATCH };
    const specs: DurableOptions[] = [
      ...settings.partitions.map((p) => ({ ...durableOpts, durable: partitionDurable(settings.durablePrefix, p), filterSubject: kubePartitionFilter(config.cluster, p, names) })),
      { ...durableOpts, durable: nodesDurable(settings.durablePrefix), filterSubject: kubeNodesFilter(config.cluster, names) },
    ];
    for (const spec of specs) await positionDurable(jsm, spec);

    ingestDeps = {
      state,
      offsets,
      store,
      deadLetters: natsDeadLetters(js, config.cluster, names, clock),
      managedBy: config.managedBy,
      cluster: config.cluster,
      partitions: config.partitions,
      prefix: names.prefix,
      batchPeriodMs: config.batchPeriod,
    };
    reconcileDeps = {
      state,
      offsets,
      dirty,
      store,
      cluster: config.cluster,
      partitions: config.partitions,
      prefix: names.prefix,
      settings: { managedBy: config.managedBy, maxEndpointsPerSlice: config.maxEndpointsPerSlice },
      partitionConsumer: (p) => offsetName(names.kube, partitionDurable(settings.durablePrefix, p)),
      nodesConsumer: offsetName(names.kube, nodesDurable(settings.durablePrefix)),
      triggerTimes: new TriggerTimeTracker(),
    };

    for (const spec of specs) loops.push(superviseLoop(js, jsm, spec));
    const relayDb = db;
    relay = runSlicesRelay({
      db: relayDb,
      js,
      name: RELAY_NAME,
      signal: stopRelay.signal,
      waker,
      onPublished: (_row, duplicate) => metrics.outboxPublished.inc({ duplicate: String(duplicate) }),
      onError: (err) => log.warn({ err }, 'outbox relay failed; retrying'),
    });

    step('consuming the initial backlog');
    await waitDrained(jsm);
    // Like a controller whose informers just synced: every Service is reconciled once, which
    // also covers marks a crash lost (they are held in memory only). Reconciling before the
    // backlog is in would plan from a partial view (a Service before its pods) and write
    // placeholder slices whose names then outlive the real ones.
    step('reconciling every known Service once');
    const allDone = new Promise<void>((resolve) => {
      initialDone = resolve;
    });
    stopConsuming.signal.addEventListener('abort', () => initialDone(), { once: true });
    for (const key of state.reconcilableKeys()) {
      const p = partitionOf(key.slice(0, key.indexOf('/')), config.partitions);
      dirty.mark(key, offsets.get(offsetName(names.kube, partitionDurable(settings.durablePrefix, p))) ?? 0);
      initial.add(key);
      queue.add(key);
    }
    if (initial.size === 0) initialDone();
    reconciling = reconcileLoop();
    await allDone;
    step('reconciled every known Service once');
    ready = true;
    metrics.ready.set(1);
    log.info({ cluster: config.cluster, partitions: settings.partitions, schema: config.dbSchema, ms: Math.round(performance.now() - t0) }, 'slicer ready');
  }

  const started = start();
  started.catch(() => {}); // observed through `ready` and close()
  let closing: Promise<void> | undefined;

  return {
    ready: started,
    metrics,
    isReady: () => ready,
    readiness: () => (ready ? { ready: true } : { ready: false, reason: notReady }),
    // A closed slicer holds no work: its marks die with it (the next start resyncs everything).
    pending: () => (closing === undefined ? dirty.size + inFlight : 0),
    close: () =>
      (closing ??= (async () => {
        stopConsuming.abort();
        await started.catch(() => {});
        await Promise.all(loops);
        queue.shutDown();
        await reconciling;
        stopRelay.abort();
        await relay;
        await eventRequests?.flush();
        ready = false;
        metrics.ready.set(0);
        if (dbHandle !== undefined) await dbHandle.close();
        if (deps.nc === undefined && nc !== undefined) await nc.close();
      })()),
  };
}
