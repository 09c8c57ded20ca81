// The hints service: three consumers (SLICES, KUBE nodes, KUBE services) feed Postgres and a
// keyed work queue; workers reconcile each dirty service into decisions, per-zone views and the
// service spec in KV.
//
// Dirty marks are the in-memory queue only (the slicer owns dirty_services): after a crash,
// startup reconciles every known service once, which covers whatever was marked and lost.
// Startup order (habit 5): load state, audit the buckets against the record, drain every
// consumer's backlog without publishing, then reconcile every known service; only then ready.

import { performance } from 'node:perf_hooks';
import type { DbHandle } from '@slicemesh/db';
import { createDb, migrateToLatest } from '@slicemesh/db';
import type { BackboneNames, JetStreamManager, NatsConnection } from '@slicemesh/nats';
import {
  connectNats, consumeLoop, dlqSubject, ensureDurable, ensureKv, ensureStreams, jetstream, jetstreamManager, publishDeadLetter, svcClusterFilter,
} from '@slicemesh/nats';
import type { Clock, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { WorkQueue, createLogger, createMetrics, newReconcileID, realClock, runWorkers } from '@slicemesh/runtime';
import { TopologyCache } from '@slicemesh/topology';
import type { HintsConfig } from './config.ts';
import { consumerSpecs, waitCaughtUp } from './consumers.ts';
import { hintsMetrics } from './hints-metrics.ts';
import { ingestHandlers } from './ingest.ts';
import { kvPort, readBucket } from './kv-port.ts';
import { NodeSet, applyNodeChange } from './node-topology.ts';
import { PgHintsStore } from './pg-store.ts';
import type { ServiceKey } from './published-index.ts';
import { serviceKeyOf, svcKeyIndex, viewKeyIndex } from './published-index.ts';
import type { ServiceReconcilerDeps } from './service-reconciler.ts';
import { reconcileService } from './service-reconciler.ts';
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
  /** For /readyz: ready once `ready` resolved and while every consumer runs. */
  readiness(): ReadyStatus;
  readonly metrics: Metrics;
  /** Stops consuming, finishes queued reconciles, closes NATS and Postgres. Idempotent. */
  close(): Promise<void>;
}

/** Starts the hints service; see the file comment for the startup order. */
export function startHints(config: HintsConfig, deps: HintsDeps = {}): HintsHandle {
  const cluster = config.cluster;
  const log = (deps.logger ?? createLogger({ service: 'hints', level: config.logLevel })).child({ cluster });
  const metrics = deps.metrics ?? createMetrics('hints');
  const m = hintsMetrics(metrics);
  const clock = deps.clock ?? realClock;
  const names: BackboneNames = {
    kube: config.kubeStream, slices: config.slicesStream, dlq: config.dlqStream, prefix: config.subjectPrefix, svc: config.svcBucket, views: config.viewsBucket,
  };
  const stop = new AbortController();
  const queue = new WorkQueue<ServiceKey>({ clock, baseDelayMs: 500, maxDelayMs: 60_000 });
  const cache = new TopologyCache();
  const known = new Set<ServiceKey>();
  const loops: Promise<void>[] = [];
  let nc: NatsConnection | undefined;
  let dbh: DbHandle | undefined;
  let workers: Promise<void> | undefined;
  let status: ReadyStatus = { ready: false, reason: 'starting' };
  let started = false;

  // Keys of the startup pass; ready once each succeeded or was given up.
  const initial = new Set<ServiceKey>();
  let initialDone: () => void = () => {};
  const finishedInitial = (key: ServiceKey): void => {
    if (initial.delete(key) && initial.size === 0) initialDone();
  };
  stop.signal.addEventListener('abort', () => initialDone(), { once: true });

  async function start(): Promise<void> {
    const aborted = (): void => {
      if (stop.signal.aborted) throw new Error('hints service closed before it was ready');
    };
    nc = await connectNats({ url: config.natsUrl, name: `hints-${cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') });
    const js = jetstream(nc);
    const jsm: JetStreamManager = await jetstreamManager(nc);
    const streams = await ensureStreams(jsm, names);
    const viewsKv = await ensureKv(nc, names.views);
    const svcKv = await ensureKv(nc, names.svc);
    aborted();
    dbh = await createDb({ url: config.databaseUrl, schema: config.dbSchema, onPoolError: (err) => log.warn({ err }, 'idle Postgres connection failed') });
    await migrateToLatest(dbh.db, config.dbSchema);
    const store = new PgHintsStore(dbh.db, cluster);
    aborted();

    // State: nodes, the record of published views audited against the bucket, the specs in KV.
    const nodes = new NodeSet(await store.loadNodes());
    let zoneLayout = applyNodeChange(cache, nodes.list(), '').zoneLayout;
    const views = kvPort(viewsKv);
    const svc = kvPort(svcKv);
    const viewIndex = viewKeyIndex();
    for (const r of await store.loadPublishedViews()) viewIndex.set(r.key, { revision: r.revision, digest: r.revision > 0 ? digestOf(r.body) : null });
    const audited = viewIndex.auditAgainst(await views.keys(svcClusterFilter(cluster)));
    const svcIndex = svcKeyIndex();
    for (const [key, e] of await readBucket(svcKv, svcClusterFilter(cluster))) svcIndex.set(key, { revision: e.revision, digest: digestOf(e.value) });
    log.info({ nodes: nodes.list().length, views: viewIndex.keys().length, unconfirmedViews: audited, specs: svcIndex.keys().length }, 'state loaded');
    aborted();

    const specs = consumerSpecs(cluster, names, config.durablePrefix);
    const byRole = Object.fromEntries(specs.map((s) => [s.role, s])) as Record<(typeof specs)[number]['role'], (typeof specs)[number]>;
    const handlers = ingestHandlers({
      cluster,
      prefix: names.prefix,
      store,
      offsets: { slices: byRole.slices.offset, nodes: byRole.nodes.offset, services: byRole.services.offset },
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
      onNode: (env) => {
        if (!nodes.apply(env)) return;
        const change = applyNodeChange(cache, nodes.list(), zoneLayout);
        zoneLayout = change.zoneLayout;
        if (!started) return; // the startup pass reconciles everything anyway
        if (change.requeueAll) {
          log.info({ node: env.object.metadata.name, services: known.size }, 'node zone layout changed: recomputing every service');
          for (const key of known) queue.addAfter(key, config.batchPeriod);
        }
        for (const o of change.overloaded) {
          log.info({ service: o.service, addressType: o.addressType, reason: o.reason, node: env.object.metadata.name }, 'hints overloaded after node change: requeued');
          queue.add(o.service);
        }
      },
      report: (o) => {
        m.ingested(o);
        if (o.result === 'dead-lettered') log.warn({ consumer: o.role, seq: o.seq, reason: o.reason, field: o.field }, 'malformed message dead-lettered');
      },
    });

    const targets = new Map<string, number>();
    for (const spec of specs) {
      await ensureDurable(jsm, spec.stream, { durable: spec.durable, filterSubject: spec.filterSubject, maxAckPending: 1 });
      targets.set(spec.role, (spec.stream === names.slices ? streams.slices : streams.kube).state.last_seq);
    }
    for (const spec of specs) {
      const loop = consumeLoop(js, spec.stream, spec.durable, handlers[spec.role], {
        signal: stop.signal,
        onError: (err, msg) => log.warn({ err, consumer: spec.role, seq: msg.seq, subject: msg.subject }, 'message failed; redelivering with backoff'),
      }).catch((err: unknown) => {
        if (stop.signal.aborted) return;
        status = { ready: false, reason: `consumer ${spec.durable} stopped: ${err instanceof Error ? err.message : String(err)}` };
        log.error({ err, consumer: spec.role }, 'consumer stopped');
      });
      loops.push(loop);
    }
    for (const spec of specs) {
      await waitCaughtUp(jsm, spec, targets.get(spec.role) ?? 0, { clock, intervalMs: config.drainPollInterval, signal: stop.signal });
    }
    aborted();
    log.info({}, 'backlog drained');

    // The startup pass: every service anything knows about, once.
    for (const key of [...(await store.knownServices()), ...viewIndex.services(), ...svcIndex.services()]) known.add(key);
    for (const key of known) initial.add(key);
    const allDone = new Promise<void>((resolve) => {
      initialDone = resolve;
      if (initial.size === 0) resolve();
    });
    const reconcilerDeps: ServiceReconcilerDeps = {
      cluster, store, views, svc, cache, nodes: () => nodes.list(), viewIndex, svcIndex,
      preferSameTrafficDistribution: config.preferSameTrafficDistribution, clock,
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
    status = { ready: true };
    log.info({ services: known.size }, 'ready');
  }

  async function reconcileOne(rdeps: ServiceReconcilerDeps, key: ServiceKey): Promise<void> {
    // Closing: leave queued keys alone; the next start reconciles every service anyway.
    if (stop.signal.aborted) return;
    const t0 = performance.now();
    const rlog = log.child({ service: key, reconcileID: newReconcileID() });
    try {
      const r = await reconcileService(rdeps, key);
      m.reconciled(r, (performance.now() - t0) / 1000);
      for (const d of r.decisions) {
        if (d.event === null) continue;
        const fields = { addressType: d.addressType, eventType: d.event.type, reason: d.event.reason, message: d.event.message, why: d.reason };
        if (d.event.type === 'Warning') rlog.warn(fields, 'hints event');
        else rlog.info(fields, 'hints event');
      }
      if (r.decisionsChanged) {
        rlog.info({ decisions: r.decisions.map((d) => ({ addressType: d.addressType, enabled: d.enabled, mode: d.mode, reason: d.reason })) }, 'hints decision');
      }
      rlog.debug({ slices: r.slices, viewPuts: r.viewPuts, viewDeletes: r.viewDeletes, viewBytes: r.viewBytes, svc: r.svc }, 'reconciled');
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
      status = { ready: false, reason: `startup failed: ${err instanceof Error ? err.message : String(err)}` };
      log.error({ err }, 'startup failed');
    }
  });

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    stop.abort();
    status = { ready: false, reason: 'shutting down' };
    await ready.catch(() => {});
    await Promise.all(loops);
    queue.shutDown();
    await workers;
    if (nc !== undefined) await nc.drain().catch(() => nc?.close());
    await dbh?.close();
  }

  return { ready, readiness: () => status, metrics, close: () => (closing ??= close()) };
}
