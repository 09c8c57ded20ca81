// The hints service: four consumers (SLICES, KUBE nodes, services and other controllers'
// EndpointSlices) feed the in-memory
// state (projection.ts, stored batch by batch with each consumer's offset) and a keyed work
// queue; workers reconcile each dirty service from memory into decisions, per-zone views and
// the service spec in KV.
//
// Postgres is the record the service restarts from: startup loads the snapshot and positions
// each consumer just after its stored offset, so the log tail brings memory up to date.
// Dirty marks are the in-memory queue only (the slicer owns its own): after a crash, startup
// reconciles every known service once, which covers whatever was marked and lost.
// Startup order (habit 5): load state, audit the buckets against the record, drain every
// consumer's backlog without publishing, then reconcile every known service; only then ready.

import { performance } from 'node:perf_hooks';
import type { DbHandle } from '@slicemesh/db';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import { HintsProjectionStore, createDb, migrateToLatest } from '@slicemesh/db';
import type { BackboneNames, ConsumedMessage, DurableOptions, HandlerOutcome, JetStreamClient, JetStreamManager, KV, NatsConnection } from '@slicemesh/nats';
import {
  connectNats, consumeBatchesInOrder, dlqSubject, ensureKv, ensureStreams, jetstream, jetstreamManager, publishDeadLetter, restartDurableAt, svcClusterFilter,
} from '@slicemesh/nats';
import type { Clock, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { WorkQueue, createLogger, createMetrics, newReconcileID, realClock, runWorkers } from '@slicemesh/runtime';
import { TopologyCache } from '@slicemesh/topology';
import { BatchedRecords } from './batched-records.ts';
import type { HintsConfig } from './config.ts';
import type { ConsumerSpec } from './consumers.ts';
import { consumerSpecs, sleep, waitCaughtUp } from './consumers.ts';
import { hintsMetrics } from './hints-metrics.ts';
import type { ConsumerRole } from './ingest.ts';
import { ingestHandlers } from './ingest.ts';
import { kvPort, readBucket } from './kv-port.ts';
import { applyNodeChange } from './node-topology.ts';
import { HintsProjection } from './projection.ts';
import type { HintsEvents } from './hints-events.ts';
import { hintsEvents } from './hints-events.ts';
import type { KeyIndex, ServiceKey } from './published-index.ts';
import { hintedKeyIndex, serviceKeyOf, svcKeyIndex, viewKeyIndex } from './published-index.ts';
import type { ServiceReconcilerDeps } from './service-reconciler.ts';
import { reconcileMemo, reconcileService } from './service-reconciler.ts';
import { digestOf } from './view-plan.ts';

export interface HintsDeps {
  /** Defaults to a pino logger at config.logLevel. */
  readonly logger?: Logger;
  /** Defaults to a fresh registry ('hints'). */
  readonly metrics?: Metrics;
  /** Defaults to the wall clock. */
  readonly clock?: Clock;
}

export interface HintsHandle {
  /** Resolves when migrated, consuming, caught up and every known service published once; rejects if startup fails or close() comes first. */
  readonly ready: Promise<void>;
  /** For /readyz: ready once `ready` resolved and while no consumer is failing. */
  readiness(): ReadyStatus;
  readonly metrics: Metrics;
  /** Stops consuming, finishes queued reconciles, closes NATS and Postgres. Idempotent. */
  close(): Promise<void>;
}

/** First wait after a consumer failed; doubles per consecutive failure up to 30 s. */
const CONSUMER_RETRY_MS = 500;

/** Records every value the bucket holds under `filter` in `index`: the bucket is the record of the buckets Postgres does not track. */
async function seedFromBucket(index: KeyIndex, kv: KV, filter: string): Promise<void> {
  for (const [key, e] of await readBucket(kv, filter)) index.set(key, { revision: e.revision, digest: digestOf(e.value) });
}

/** Starts the hints service; see the file comment for the startup order. */
export function startHints(config: HintsConfig, deps: HintsDeps = {}): HintsHandle {
  const cluster = config.cluster;
  const log = (deps.logger ?? createLogger({ service: 'hints', level: config.logLevel })).child({ cluster });
  const metrics = deps.metrics ?? createMetrics('hints');
  const m = hintsMetrics(metrics);
  const clock = deps.clock ?? realClock;
  const names: BackboneNames = {
    kube: config.kubeStream, slices: config.slicesStream, dlq: config.dlqStream, events: config.eventsStream, prefix: config.subjectPrefix, svc: config.svcBucket, views: config.viewsBucket, hinted: config.hintedBucket,
  };
  const stop = new AbortController();
  const queue = new WorkQueue<ServiceKey>({ clock, baseDelayMs: 500, maxDelayMs: 60_000 });
  const cache = new TopologyCache();
  const known = new Set<ServiceKey>();
  const loops: Promise<void>[] = [];
  /** Consumers whose last attempt failed, with why. */
  const failing = new Map<ConsumerRole, string>();
  let nc: NatsConnection | undefined;
  let events: HintsEvents | undefined;
  let dbh: DbHandle | undefined;
  let workers: Promise<void> | undefined;
  let startupStatus: ReadyStatus = { ready: false, reason: 'starting' };
  let started = false;

  // Keys of the startup pass; ready once each succeeded or was given up.
  const initial = new Set<ServiceKey>();
  let initialDone: () => void = () => {};
  const finishedInitial = (key: ServiceKey): void => {
    if (initial.delete(key) && initial.size === 0) initialDone();
  };
  stop.signal.addEventListener('abort', () => initialDone(), { once: true });

  const durableOf = (spec: ConsumerSpec): DurableOptions => ({ durable: spec.durable, filterSubject: spec.filterSubject, maxAckPending: config.ingestBatch });

  async function start(): Promise<void> {
    const aborted = (): void => {
      if (stop.signal.aborted) throw new Error('hints service closed before it was ready');
    };
    nc = await connectNats({ url: config.natsUrl, name: `hints-${cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') });
    const js = jetstream(nc);
    const jsm: JetStreamManager = await jetstreamManager(nc);
    const streams = await ensureStreams(jsm, names);
    events = hintsEvents(js, { cluster, prefix: names.prefix, clock, metrics, log });
    const viewsKv = await ensureKv(nc, names.views);
    const svcKv = await ensureKv(nc, names.svc);
    const hintedKv = await ensureKv(nc, names.hinted);
    aborted();
    dbh = await createDb({ url: config.databaseUrl, schema: config.dbSchema, onPoolError: (err) => log.warn({ err }, 'idle Postgres connection failed') });
    await migrateToLatest(dbh.db, config.dbSchema);
    const record = new HintsProjectionStore(dbh.db, cluster);
    const specs = consumerSpecs(cluster, names, config.durablePrefix);
    aborted();

    // State: the snapshot, the record of published views audited against the bucket, the specs in KV.
    const snapshot = await record.loadSnapshot(specs.map((s) => s.offset));
    const state = new HintsProjection(snapshot);
    let zoneLayout = applyNodeChange(cache, state.nodes.list(), '').zoneLayout;
    const views = kvPort(viewsKv);
    const svc = kvPort(svcKv);
    const viewIndex = viewKeyIndex();
    for (const r of snapshot.publishedViews) viewIndex.set(r.key, { revision: r.revision, digest: r.revision > 0 ? r.digest : null });
    const audited = viewIndex.auditAgainst(await views.keys(svcClusterFilter(cluster)));
    const svcIndex = svcKeyIndex();
    await seedFromBucket(svcIndex, svcKv, svcClusterFilter(cluster));
    const hinted = kvPort(hintedKv);
    const hintedIndex = hintedKeyIndex();
    await seedFromBucket(hintedIndex, hintedKv, svcClusterFilter(cluster));
    log.info(
      {
        services: snapshot.services.length, slices: snapshot.slices.length, foreignSlices: snapshot.foreignSlices.length, nodes: snapshot.nodes.length, views: viewIndex.keys().length,
        unconfirmedViews: audited, specs: svcIndex.keys().length, hintedSlices: hintedIndex.keys().length, offsets: Object.fromEntries(snapshot.offsets),
      },
      'state loaded',
    );
    aborted();

    let nodesChanged = false;
    const handlers = ingestHandlers({
      cluster,
      prefix: names.prefix,
      projection: state,
      store: record,
      offsets: {
        slices: byRole(specs, 'slices').offset, nodes: byRole(specs, 'nodes').offset, services: byRole(specs, 'services').offset,
        endpointslices: byRole(specs, 'endpointslices').offset,
      },
      deadLetter: async (letter) => void (await publishDeadLetter(js, dlqSubject(cluster, 'hints', names), { ...letter, at: new Date(clock.now()).toISOString() })),
      onSlices: (msg) => {
        const key = serviceKeyOf(msg.namespace, msg.service);
        known.add(key);
        queue.addAfter(key, config.batchPeriod);
      },
      onService: (env) => {
        const key = serviceKeyOf(env.object.metadata.namespace ?? '', env.object.metadata.name);
        known.add(key);
        queue.add(key); // A.12.1: service changes are queued at once
      },
      // Another controller's slice: its Service is reconciled like one whose own slices changed.
      onForeignSlice: (env) => {
        const service = env.object.metadata.labels?.[LABEL_SERVICE_NAME];
        if (service === undefined || service === '') return; // belongs to no Service (never held)
        const key = serviceKeyOf(env.object.metadata.namespace ?? '', service);
        known.add(key);
        queue.addAfter(key, config.batchPeriod);
      },
      onVacated: (key) => queue.addAfter(key, config.batchPeriod),
      onNode: () => {
        nodesChanged = true;
      },
      afterBatch: (role) => {
        if (role !== 'nodes' || !nodesChanged) return;
        nodesChanged = false;
        const change = applyNodeChange(cache, state.nodes.list(), zoneLayout);
        zoneLayout = change.zoneLayout;
        if (!started) return; // the startup pass reconciles everything anyway
        if (change.requeueAll) {
          log.info({ services: known.size }, 'node zone layout changed: recomputing every service');
          for (const key of known) queue.addAfter(key, config.batchPeriod);
        }
        for (const o of change.overloaded) {
          log.info({ service: o.service, addressType: o.addressType, reason: o.reason }, 'hints overloaded after node change: requeued');
          queue.add(o.service);
        }
      },
      report: (o) => {
        m.ingested(o);
        if (o.result === 'dead-lettered') log.warn({ consumer: o.role, seq: o.seq, reason: o.reason, field: o.field }, 'malformed message dead-lettered');
      },
    });

    // Each durable starts just after the offset stored with the state: what the server still
    // held as pending is dropped and comes again in order.
    const targets = new Map<string, number>();
    for (const spec of specs) {
      await restartDurableAt(jsm, spec.stream, durableOf(spec), state.offset(spec.offset) + 1);
      targets.set(spec.role, (spec.stream === names.slices ? streams.slices : streams.kube).state.last_seq);
    }
    for (const spec of specs) loops.push(supervise(js, jsm, spec, handlers[spec.role], state));
    for (const spec of specs) {
      await waitCaughtUp(jsm, spec, targets.get(spec.role) ?? 0, { clock, intervalMs: config.drainPollInterval, signal: stop.signal });
    }
    aborted();
    log.info({}, 'backlog drained');

    // The startup pass: every service anything knows about, once.
    for (const key of [...state.knownServices(), ...viewIndex.services(), ...svcIndex.services(), ...hintedIndex.services()]) known.add(key);
    for (const key of known) initial.add(key);
    const allDone = new Promise<void>((resolve) => {
      initialDone = resolve;
      if (initial.size === 0) resolve();
    });
    const reconcilerDeps: ServiceReconcilerDeps = {
      cluster, state, records: new BatchedRecords(record, state), views, svc, hinted, cache, nodes: () => state.nodes.list(), viewIndex, svcIndex, hintedIndex,
      preferSameTrafficDistribution: config.preferSameTrafficDistribution, clock, memo: reconcileMemo(),
    };
    started = true;
    for (const key of initial) queue.add(key);
    workers = runWorkers(queue, config.workers, (key) => reconcileOne(reconcilerDeps, key), {
      onError: (r) => {
        const level = r.outcome === 'requeued' && r.retries < 3 ? 'warn' : 'error';
        log[level]({ err: r.error, service: r.key, retries: r.retries, outcome: r.outcome }, 'reconcile failed');
        if (r.outcome !== 'requeued') finishedInitial(r.key);
      },
    });
    await allDone;
    aborted();
    startupStatus = { ready: true };
    log.info({ services: known.size }, 'ready');
  }

  /**
   * Runs one consumer until close. After a failure (the batch was not stored, memory is as
   * before) it waits with backoff and consumes again from the offset held in memory.
   */
  async function supervise(js: JetStreamClient, jsm: JetStreamManager, spec: ConsumerSpec, handle: (msgs: readonly ConsumedMessage[]) => Promise<HandlerOutcome>, state: HintsProjection): Promise<void> {
    let failures = 0;
    const handler = async (msgs: readonly ConsumedMessage[]): Promise<HandlerOutcome> => {
      const outcome = await handle(msgs);
      failing.delete(spec.role);
      return outcome;
    };
    for (let first = true; !stop.signal.aborted; first = false) {
      try {
        if (!first) await restartDurableAt(jsm, spec.stream, durableOf(spec), state.offset(spec.offset) + 1);
        await consumeBatchesInOrder(js, spec.stream, spec.durable, handler, { signal: stop.signal, batch: config.ingestBatch });
        failures = 0;
        if (!stop.signal.aborted) log.warn({ consumer: spec.role }, 'consumer ended; starting it again');
      } catch (err) {
        if (stop.signal.aborted) return;
        failures++;
        failing.set(spec.role, `consumer ${spec.durable} failing: ${err instanceof Error ? err.message : String(err)}`);
        log.warn({ err, consumer: spec.role, failures }, 'ingest failed; consuming again from the stored offset');
      }
      await sleep(clock, Math.min(CONSUMER_RETRY_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 6), 30_000), stop.signal);
    }
  }

  async function reconcileOne(rdeps: ServiceReconcilerDeps, key: ServiceKey): Promise<void> {
    // Closing: leave queued keys alone; the next start reconciles every service anyway.
    if (stop.signal.aborted) return;
    const t0 = performance.now();
    const rlog = log.child({ service: key, reconcileID: newReconcileID() });
    try {
      const r = await reconcileService(rdeps, key);
      m.reconciled(r, (performance.now() - t0) / 1000);
      // The reconcile's state is written: its decisions' events may go (best effort, not awaited).
      events?.emit(key, rdeps.state.service(key), r.decisions);
      for (const d of r.decisions) {
        if (d.event === null) continue;
        const fields = { addressType: d.addressType, eventType: d.event.type, reason: d.event.reason, message: d.event.message, why: d.reason };
        if (d.event.type === 'Warning') rlog.warn(fields, 'hints event');
        else rlog.info(fields, 'hints event');
      }
      if (r.notProxied !== null && (r.svc === 'delete' || r.viewDeletes > 0)) {
        rlog.info({ why: r.notProxied, viewDeletes: r.viewDeletes, svc: r.svc }, 'service not for this proxy: its spec and views are withdrawn');
      }
      if (r.decisionsChanged) {
        rlog.info({ decisions: r.decisions.map((d) => ({ addressType: d.addressType, enabled: d.enabled, mode: d.mode, reason: d.reason })) }, 'hints decision');
      }
      rlog.debug({ slices: r.slices, foreignSlices: r.foreignSlices, notProxied: r.notProxied, viewPuts: r.viewPuts, viewDeletes: r.viewDeletes, viewBytes: r.viewBytes, svc: r.svc }, 'reconciled');
      // An event may have re-added the key meanwhile; its queued reconcile then re-adds it here.
      if (r.gone) known.delete(key);
      else known.add(key);
      finishedInitial(key);
    } catch (err) {
      m.reconcileFailed('error', (performance.now() - t0) / 1000);
      throw err;
    }
  }

  const ready = start();
  ready.catch((err: unknown) => {
    if (!stop.signal.aborted) {
      startupStatus = { ready: false, reason: `startup failed: ${err instanceof Error ? err.message : String(err)}` };
      log.error({ err }, 'startup failed');
    }
  });

  function readiness(): ReadyStatus {
    if (stop.signal.aborted) return { ready: false, reason: 'shutting down' };
    if (!startupStatus.ready) return startupStatus;
    const trouble = [...failing.values()];
    return trouble.length === 0 ? { ready: true } : { ready: false, reason: trouble.join('; ') };
  }

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    stop.abort();
    await ready.catch(() => {});
    await Promise.all(loops);
    queue.shutDown();
    await workers;
    await events?.flush();
    if (nc !== undefined) await nc.drain().catch(() => nc?.close());
    await dbh?.close();
  }

  return { ready, readiness, metrics, close: () => (closing ??= close()) };
}

function byRole(specs: readonly ConsumerSpec[], role: ConsumerRole): ConsumerSpec {
  const spec = specs.find((s) => s.role === role);
  if (spec === undefined) throw new Error(`no ${role} consumer`);
  return spec;
}
