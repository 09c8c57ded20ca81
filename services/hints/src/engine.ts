// One hints engine: the hints service for a fixed set of KUBE partitions, as long as this replica
// holds their leases (hints-service.ts swaps engines when the set changes). Per partition four
// consumers (consumers.ts: its Services and other controllers' slices, every node, every slice
// change) feed the in-memory state of the engine's partitions (projection.ts, stored batch by
// batch with each consumer's offset) and a keyed work queue; workers reconcile each dirty
// service from memory into decisions, per-zone views, the service spec and the hinted slices.
//
// Postgres is the record an engine starts from: it loads its partitions' rows (and every node),
// positions each consumer just after its stored offset, and the log tail brings memory up to
// date. Dirty marks are the in-memory queue only: startup reconciles every known service of the
// partitions once, which covers whatever was marked and lost — by a crash, or by the replica
// that held a partition before. Startup order (habit 5): load state, audit the buckets against
// the record, drain every consumer's backlog without publishing, then reconcile every known
// service; only then ready.
//
// Fencing: every Postgres write carries the leases of the partitions it touches (ingest: the
// consumer's partition; the publishing records: the partitions of the services in the batch),
// so once a lease is lost the engine's late writes are refused (FencedError). The first refusal
// deposes the engine: its consumers stop (without repositioning the durables the next owner now
// uses) and its workers reconcile nothing more. KV puts cannot be fenced; see
// docs/architecture.md, "Hints replicas", for what a deposed engine can still put and why the
// next owner's startup repairs it.
//
// The buckets hold every partition's keys (`<cluster>.…`): the startup audit, the seeding of the
// indexes and therefore every delete are limited to the keys of the engine's namespaces.

import { isDerivedServiceName } from '@slicemesh/multicluster';
import { performance } from 'node:perf_hooks';
import type { HintsProjectionStore, LeaseClaim, PublishedView, HintsIntent } from '@slicemesh/db';
import { FencedError } from '@slicemesh/db';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import type { BackboneNames, ConsumedMessage, DurableOptions, HandlerOutcome, JetStreamClient, JetStreamManager, KV } from '@slicemesh/nats';
import {
  consumeBatchesInOrder, dlqSubject, parseHintedKey, parseSvcKey, parseViewKey, partitionOf, publishDeadLetter, restartDurableAt, svcClusterFilter,
} from '@slicemesh/nats';
import type { Clock, Logger, ReadyStatus } from '@slicemesh/runtime';
import { WorkQueue, newReconcileID, runWorkers } from '@slicemesh/runtime';
import { TopologyCache } from '@slicemesh/topology';
import { BatchedRecords } from './batched-records.ts';
import type { PublishingRecord } from './batched-records.ts';
import type { HintsConfig } from './config.ts';
import type { ConsumerSpec } from './consumers.ts';
import { consumerSpecs, filterFrom, sleep, waitCaughtUp } from './consumers.ts';
import type { HintsEvents } from './hints-events.ts';
import type { HintsMetrics } from './hints-metrics.ts';
import type { ConsumerRole } from './ingest.ts';
import { ingestHandlers } from './ingest.ts';
import { kvPort, readBucket } from './kv-port.ts';
import { VersionFloors, applyNodeChange } from './node-topology.ts';
import { HintsProjection } from './projection.ts';
import type { KeyIndex, ServiceKey } from './published-index.ts';
import { hintedKeyIndex, serviceKeyOf, splitServiceKey, svcKeyIndex, viewKeyIndex } from './published-index.ts';
import type { ServiceReconcilerDeps } from './service-reconciler.ts';
import { reconcileMemo, reconcileService } from './service-reconciler.ts';
import { digestOf } from './view-plan.ts';

/** First wait after a consumer failed; doubles per consecutive failure up to 30 s. */
const CONSUMER_RETRY_MS = 500;

/** `ready` rejects with this when close() came before startup finished. */
export class ClosedError extends Error {
  override readonly name = 'ClosedError';
}

export interface HintsEngineDeps {
  readonly config: HintsConfig;
  readonly names: BackboneNames;
  /** The partitions this engine owns, with the leases its writes carry. */
  readonly claims: readonly LeaseClaim[];
  readonly record: HintsProjectionStore;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly buckets: { readonly views: KV; readonly svc: KV; readonly hinted: KV };
  readonly events: HintsEvents;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: HintsMetrics;
}

export interface HintsEngine {
  readonly partitions: readonly number[];
  /** Resolves once the backlog was consumed and every known service of the partitions published once. */
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  /** Stops consuming, lets the reconciles in flight finish, drops the queued ones. Idempotent; the connections stay open. */
  close(): Promise<void>;
}

/** Records every value the bucket holds under `filter` whose key `mine` accepts in `index`: the bucket is the record of the buckets Postgres does not track. */
async function seedFromBucket(index: KeyIndex, kv: KV, filter: string, mine: (key: string) => boolean): Promise<void> {
  for (const [key, e] of await readBucket(kv, filter)) if (mine(key)) index.set(key, { revision: e.revision, digest: digestOf(e.value) });
}

/**
 * A key test from a key parser: keys that do not parse are nobody's (they are left alone), and
 * so are the derived Services of multi-cluster imports, which the multi-cluster service writes.
 */
function keyOwner(parse: (key: string) => { readonly namespace: string; readonly service: string }, owns: (namespace: string) => boolean): (key: string) => boolean {
  return (key) => {
    try {
      const k = parse(key);
      return owns(k.namespace) && !isDerivedServiceName(k.service);
    } catch {
      return false;
    }
  };
}

/** Starts an engine for `deps.claims`' partitions and returns at once; await `ready`. */
export function startHintsEngine(deps: HintsEngineDeps): HintsEngine {
  const { config, names, js, jsm, clock, events, record } = deps;
  const m = deps.metrics;
  const cluster = config.cluster;
  const partitions = deps.claims.map((c) => c.partition).sort((a, b) => a - b);
  const log = deps.log.child({ partitions });
  const claimOf = new Map(deps.claims.map((c) => [c.partition, c]));
  const owned = new Set(partitions);
  const owns = (namespace: string): boolean => owned.has(partitionOf(namespace, config.partitions));
  const ownsViewKey = keyOwner(parseViewKey, owns);
  const fence = (namespaces: Iterable<string>): LeaseClaim[] => {
    const ps = new Set<number>();
    for (const ns of namespaces) ps.add(partitionOf(ns, config.partitions));
    return [...ps].sort((a, b) => a - b).map((p) => {
      const c = claimOf.get(p);
      if (c === undefined) throw new Error(`partition ${p} is not this engine's (it owns ${partitions.join(',')})`);
      return c;
    });
  };
  // The publishing record with the leases of the services' partitions attached.
  const publishing: PublishingRecord = {
    recordIntents: (intents: readonly HintsIntent[]) => record.recordIntents(intents, fence(intents.map((i) => i.namespace))),
    recordPublished: (confirmed: readonly PublishedView[], deleted: readonly string[]) =>
      record.recordPublished(confirmed, deleted, fence([...confirmed.map((c) => c.key), ...deleted].map((k) => parseViewKey(k).namespace))),
  };

  const stop = new AbortController();
  const queue = new WorkQueue<ServiceKey>({ clock, baseDelayMs: 500, maxDelayMs: 60_000 });
  const cache = new TopologyCache();
  const known = new Set<ServiceKey>();
  const loops: Promise<void>[] = [];
  /** Consumers whose last attempt failed, with why. */
  const failing = new Map<string, string>();
  let workers: Promise<void> | undefined;
  let status: ReadyStatus = { ready: false, reason: 'starting' };
  let started = false;
  let deposed: string | undefined;
  let records: BatchedRecords | undefined;

  // Keys of the startup pass; ready once each succeeded or was given up.
  const initial = new Set<ServiceKey>();
  let initialDone: () => void = () => {};
  const finishedInitial = (key: ServiceKey): void => {
    if (initial.delete(key) && initial.size === 0) initialDone();
  };
  stop.signal.addEventListener('abort', () => initialDone(), { once: true });

  const durableOf = (spec: ConsumerSpec, filterSubject: string): DurableOptions => ({ durable: spec.durable, filterSubject, maxAckPending: config.ingestBatch });
  /** (Re)creates the durable at `startSeq`, with the filter the stream's contents there call for. */
  async function restartAt(spec: ConsumerSpec, startSeq: number): Promise<void> {
    const filter = await filterFrom(jsm, spec, startSeq);
    if (filter !== spec.filterSubject) log.info({ consumer: spec.durable, filter, from: startSeq }, 'SLICES still holds subjects without the partition token: reading every partition and skipping the others');
    await restartDurableAt(jsm, spec.stream, durableOf(spec, filter), startSeq);
  }

  /** A write was refused: the lease is gone, so is the right to consume and publish. */
  function depose(err: FencedError): void {
    if (deposed !== undefined) return;
    deposed = err.message;
    log.warn({ err }, 'a lease of this engine is lost: it stops consuming and publishing');
    stop.abort();
  }

  const step = (reason: string): void => {
    if (stop.signal.aborted) throw new ClosedError('hints engine closed before it was ready');
    status = { ready: false, reason };
  };

  async function start(): Promise<void> {
    const t0 = performance.now();
    step('loading the snapshot');
    const specs = partitions.flatMap((p) => consumerSpecs(cluster, names, config.durablePrefix, p));
    const snapshot = await record.loadSnapshot(specs.map((s) => s.offset), { namespace: owns, viewKey: ownsViewKey });
    const state = new HintsProjection(snapshot);
    let zoneLayout = applyNodeChange(cache, state.nodes.list(), '').zoneLayout;

    step('auditing the buckets');
    const views = kvPort(deps.buckets.views);
    const svc = kvPort(deps.buckets.svc);
    const hinted = kvPort(deps.buckets.hinted);
    const viewIndex = viewKeyIndex();
    for (const r of snapshot.publishedViews) viewIndex.set(r.key, { revision: r.revision, digest: r.revision > 0 ? r.digest : null });
    const audited = viewIndex.auditAgainst(new Map([...(await views.revisions(svcClusterFilter(cluster)))].filter(([key]) => ownsViewKey(key))));
    const svcIndex = svcKeyIndex();
    await seedFromBucket(svcIndex, deps.buckets.svc, svcClusterFilter(cluster), keyOwner((k) => { const a = parseSvcKey(k); return { namespace: a.namespace, service: a.name }; }, owns));
    const hintedIndex = hintedKeyIndex();
    await seedFromBucket(hintedIndex, deps.buckets.hinted, svcClusterFilter(cluster), keyOwner(parseHintedKey, owns));
    log.info(
      {
        services: snapshot.services.length, slices: snapshot.slices.length, foreignSlices: snapshot.foreignSlices.length, nodes: snapshot.nodes.length, views: viewIndex.keys().length,
        unconfirmedViews: audited, specs: svcIndex.keys().length, hintedSlices: hintedIndex.keys().length, offsets: Object.fromEntries(snapshot.offsets),
      },
      'state loaded',
    );
    step('creating consumers');

    let nodesChanged = false;
    const nodeFloors = new VersionFloors();
    const handlerOf = new Map<ConsumerSpec, (msgs: readonly ConsumedMessage[]) => Promise<HandlerOutcome>>();
    for (const p of partitions) {
      const mine = specs.filter((s) => s.partition === p);
      const offsetOf = (role: ConsumerRole): string => mine.find((s) => s.role === role)?.offset ?? '';
      const claim = deps.claims.filter((c) => c.partition === p);
      const handlers = ingestHandlers({
        cluster,
        prefix: names.prefix,
        projection: state,
        // The batch's rows carry the consumer's partition's lease.
        store: { commitIngest: (consumer, seq, rows) => record.commitIngest(consumer, seq, rows, claim) },
        offsets: { slices: offsetOf('slices'), nodes: offsetOf('nodes'), services: offsetOf('services'), endpointslices: offsetOf('endpointslices') },
        owns: (namespace) => partitionOf(namespace, config.partitions) === p,
        partitions: config.partitions,
        nodeFloors,
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
          if (o.result === 'dead-lettered') log.warn({ consumer: o.role, partition: p, seq: o.seq, reason: o.reason, field: o.field }, 'malformed message dead-lettered');
        },
      });
      for (const spec of mine) handlerOf.set(spec, handlers[spec.role]);
    }

    // Each durable starts just after the offset stored with the state: what the server still
    // held as pending is dropped and comes again in order.
    const targets = new Map<ConsumerSpec, number>();
    const lastSeq = new Map<string, number>();
    for (const stream of new Set(specs.map((s) => s.stream))) lastSeq.set(stream, (await jsm.streams.info(stream)).state.last_seq);
    for (const spec of specs) {
      await restartAt(spec, state.offset(spec.offset) + 1);
      targets.set(spec, lastSeq.get(spec.stream) ?? 0);
    }
    for (const spec of specs) {
      const handle = handlerOf.get(spec);
      if (handle !== undefined) loops.push(supervise(spec, handle, state));
    }
    step('consuming the backlog');
    for (const spec of specs) {
      await waitCaughtUp(jsm, spec, targets.get(spec) ?? 0, { clock, intervalMs: config.drainPollInterval, signal: stop.signal });
    }
    step('reconciling every known service once');
    log.info({}, 'backlog drained');

    // The startup pass: every service of the partitions anything knows about, once.
    for (const key of [...state.knownServices(), ...viewIndex.services(), ...svcIndex.services(), ...hintedIndex.services()]) {
      if (owns(splitServiceKey(key).namespace)) known.add(key);
    }
    for (const key of known) initial.add(key);
    const allDone = new Promise<void>((resolve) => {
      initialDone = resolve;
      if (initial.size === 0 || stop.signal.aborted) resolve();
    });
    const reconcilerDeps: ServiceReconcilerDeps = {
      cluster, state, records: (records = publishedRecords(publishing, state)), views, svc, hinted, cache, nodes: () => state.nodes.list(), viewIndex, svcIndex, hintedIndex,
      preferSameTrafficDistribution: config.preferSameTrafficDistribution, clock, memo: reconcileMemo(),
    };
    started = true;
    for (const key of initial) queue.add(key);
    workers = runWorkers(queue, config.workers, (key) => reconcileOne(reconcilerDeps, key), {
      onError: (r) => {
        if (r.error instanceof FencedError) depose(r.error);
        const level = r.outcome === 'requeued' && r.retries < 3 ? 'warn' : 'error';
        if (!stop.signal.aborted) log[level]({ err: r.error, service: r.key, retries: r.retries, outcome: r.outcome }, 'reconcile failed');
        if (r.outcome !== 'requeued') finishedInitial(r.key);
      },
    });
    await allDone;
    step('ready');
    status = { ready: true };
    log.info({ services: known.size, ms: Math.round(performance.now() - t0) }, 'hints engine ready');
  }

  /**
   * Runs one consumer until close. After a failure (the batch was not stored, memory is as
   * before) it waits with backoff and consumes again from the offset held in memory; after a
   * refused write (the lease is lost) it stops for good, leaving the durable to the next owner.
   */
  async function supervise(spec: ConsumerSpec, handle: (msgs: readonly ConsumedMessage[]) => Promise<HandlerOutcome>, state: HintsProjection): Promise<void> {
    let failures = 0;
    const handler = async (msgs: readonly ConsumedMessage[]): Promise<HandlerOutcome> => {
      const outcome = await handle(msgs);
      failing.delete(spec.durable);
      return outcome;
    };
    for (let first = true; !stop.signal.aborted; first = false) {
      try {
        if (!first) await restartAt(spec, state.offset(spec.offset) + 1);
        await consumeBatchesInOrder(js, spec.stream, spec.durable, handler, { signal: stop.signal, batch: config.ingestBatch });
        failures = 0;
        if (!stop.signal.aborted) log.warn({ consumer: spec.durable }, 'consumer ended; starting it again');
      } catch (err) {
        if (err instanceof FencedError) depose(err);
        if (stop.signal.aborted) return;
        failures++;
        failing.set(spec.durable, `consumer ${spec.durable} failing: ${err instanceof Error ? err.message : String(err)}`);
        log.warn({ err, consumer: spec.durable, failures }, 'ingest failed; consuming again from the stored offset');
      }
      await sleep(clock, Math.min(CONSUMER_RETRY_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 6), 30_000), stop.signal);
    }
  }

  /** The record behind the reconciles, its confirmations written behind (batched-records.ts). */
  function publishedRecords(publishing: PublishingRecord, state: HintsProjection): BatchedRecords {
    const reason = 'the published-views record is failing';
    return new BatchedRecords(publishing, state, {
      onFailed: (err) => {
        if (err instanceof FencedError) {
          depose(err);
          return 'drop';
        }
        failing.set(reason, `${reason}: ${err instanceof Error ? err.message : String(err)}`);
        log.warn({ err }, 'recording published views failed; retrying');
        return 'retry';
      },
      onWritten: () => failing.delete(reason),
      sleep: (ms) => sleep(clock, ms, stop.signal),
    });
  }

  async function reconcileOne(rdeps: ServiceReconcilerDeps, key: ServiceKey): Promise<void> {
    // Closing or deposed: leave queued keys alone; the next owner reconciles every service anyway.
    if (stop.signal.aborted) return;
    const t0 = performance.now();
    const rlog = log.child({ service: key, reconcileID: newReconcileID() });
    try {
      const r = await reconcileService(rdeps, key);
      m.reconciled(r, (performance.now() - t0) / 1000);
      // The reconcile's state is written: its decisions' events may go (best effort, not awaited).
      events.emit(key, rdeps.state.service(key), r.decisions);
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
      status = { ready: false, reason: `startup failed: ${err instanceof Error ? err.message : String(err)}` };
      log.error({ err }, 'engine startup failed');
    }
  });

  function readiness(): ReadyStatus {
    if (deposed !== undefined) return { ready: false, reason: `deposed: ${deposed}` };
    if (stop.signal.aborted) return { ready: false, reason: 'stopping' };
    if (!status.ready) return status;
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
    // What the last reconciles published, recorded, so the next start re-puts none of it.
    const unwritten = (await records?.close()) ?? 0;
    if (unwritten > 0 && deposed === undefined) log.warn({ unwritten }, 'closing with published views unconfirmed in the record: the next start re-puts them');
  }

  return { partitions, ready, readiness, close: () => (closing ??= close()) };
}
