// One slicer engine: the controllers for a fixed set of partitions, as long as this replica holds
// their leases. It keeps those partitions' cluster state in memory (a ClusterState, restored from
// the Postgres snapshot at start, then fed by the log): durable consumers on KUBE feed ingest
// (commit, then apply to memory and mark Services dirty), one reconcile loop takes the ready
// keys in batches, plans them against memory and writes each batch in one transaction. Every
// write carries the leases of the partitions it touches, so once a lease is lost the engine's
// late writes are refused (FencedError) and it is replaced by one for the new set.
//
// Each partition has two consumers: its own subjects and the node subjects (nodes matter to
// every partition, and a node consumer shared between replicas would hand each node change to
// only one of them). Two node consumers in one engine apply the same node change once: the
// second finds it stale.
//
// Bounded log (issue 9.4): every SNAPSHOT_EVERY applied messages of a partition the engine
// snapshots it to Postgres (kube-snapshots in @slicemesh/db) and, with COMPACT_LOG, compacts its
// KUBE subjects (compactor.ts) — in the background, one partition at a time. The snapshot's view
// is fixed with the writers paused at the gate between batches (a few ms), so its objects, slices,
// offsets and the reconcile records it holds agree with each other and with memory's nodes.

import { performance } from 'node:perf_hooks';
import { ClusterState } from '@slicemesh/core';
import type { Db, KubeObjectRow, KubeSnapshotHeader, LeaseClaim } from '@slicemesh/db';
import { listKubeSnapshots, loadNodeTombstones, writeKubeSnapshot } from '@slicemesh/db';
import type { ConsumedMessage, ConsumerInfo, DurableOptions, EventRequestPublisher, HandlerOutcome, JetStreamClient, JetStreamManager } from '@slicemesh/nats';
import {
  DeliveryGapError,
  MIRRORING_EVENT_COMPONENT,
  consumeBatchesInOrder,
  eventRequest,
  partitionOf,
  pendingCount,
  sumCounts,
  restartDurableAt,
} from '@slicemesh/nats';
import type { Clock, Logger, ReadyStatus } from '@slicemesh/runtime';
import { StartupSteps, WorkQueue } from '@slicemesh/runtime';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import type { SlicerConfig, SlicerSettings } from './config.ts';
import { offsetName, partitionDurable, slicerConsumers } from './config.ts';
import { DirtyMarks } from './dirty-marks.ts';
import type { IngestDeps } from './ingest.ts';
import { ingestBatch } from './ingest.ts';
import type { SlicerMetrics } from './metrics.ts';
import { natsDeadLetters } from './dead-letters.ts';
import type { SlicerStore } from './ports.ts';
import { restoreProjection } from './store.ts';
import type { ReconcileDeps, ReconcileOutcome } from './reconcile.ts';
import { reconcileBatch, splitServiceKey } from './reconcile.ts';
import { Gate } from './gate.ts';
import type { Compaction } from './compactor.ts';
import { compactNodes, compactPartition } from './compactor.ts';

/** Most KUBE messages applied in one ingest transaction. */
const INGEST_BATCH = 500;
/** Most Services reconciled and written in one transaction. */
const RECONCILE_BATCH = 256;
/** The initial backlog's drain is polled soon after the consumers start, then less often. */
const DRAIN_POLL_FIRST_MS = 25;
const DRAIN_POLL_MS = 200;
/** Pause before a consume loop that failed (e.g. NATS down) starts again. */
const CONSUME_RESTART_MS = 1000;

export interface EngineDeps {
  readonly config: SlicerConfig;
  readonly settings: SlicerSettings;
  /** The partitions this engine owns, with the leases its writes carry. */
  readonly claims: readonly LeaseClaim[];
  readonly store: SlicerStore;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly log: Logger;
  readonly clock: Clock;
  readonly metrics: SlicerMetrics;
  readonly eventRequests: EventRequestPublisher;
  /** Called after a batch that queued outbox rows committed. */
  readonly onWrote: () => void;
  /** The database, for snapshots and compaction; without it (in-memory stores) neither happens. */
  readonly db?: Db;
}

export interface Engine {
  readonly partitions: readonly number[];
  /** Snapshots `partition` now (and compacts it with COMPACT_LOG), after the work queued before. */
  snapshot(partition: number): Promise<SnapshotOutcome>;
  /** Resolves once the backlog was consumed and every known Service reconciled once. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  readiness(): ReadyStatus;
  /** Services marked dirty or being reconciled now. */
  pending(): number;
  /** Stops consuming and reconciling; the shared connections stay open. Idempotent. */
  close(): Promise<void>;
}

export interface SnapshotOutcome {
  readonly snapshot: KubeSnapshotHeader;
  /** Wall time of the snapshot write, ms. */
  readonly ms: number;
  /** The partition's and the node subjects' compactions (absent without COMPACT_LOG). */
  readonly compactions: readonly Compaction[];
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

/** The partitions a batch of slice writes touches (by namespace). */
function partitionsOfWrites(writes: Parameters<SlicerStore['commitSlices']>[0], partitions: number): Set<number> {
  const out = new Set<number>();
  for (const s of writes.upserts) out.add(partitionOf(s.metadata.namespace ?? '', partitions));
  for (const d of writes.deletes) out.add(partitionOf(d.namespace, partitions));
  for (const r of writes.records) out.add(partitionOf(r.namespace, partitions));
  return out;
}

/** Starts an engine for `deps.claims`' partitions and returns at once; await `ready`. */
export function startEngine(deps: EngineDeps): Engine {
  const { config, settings, js, jsm, log, clock, metrics } = deps;
  const { names } = settings;
  const partitions = deps.claims.map((c) => c.partition).sort((a, b) => a - b);
  const claimOf = new Map(deps.claims.map((c) => [c.partition, c]));
  const dirty = new DirtyMarks();
  let inFlight = 0;
  const stopConsuming = new AbortController();
  const queue = new WorkQueue<string>({ clock });
  const owned = new Set(partitions);
  const state = new ClusterState({ ownsNamespace: (ns) => owned.has(partitionOf(ns, config.partitions)) });
  const offsets = new Map<string, number>();
  // The newest node message memory reflects: the snapshot's nodes (stored by whichever node
  // consumer got furthest) or a node consumer of this engine, whichever is later. A reconcile
  // records it, so a replay reads the nodes this one read.
  let nodesSeen = 0;
  const ownConsumers = slicerConsumers(config.cluster, names, settings.durablePrefix, partitions);
  // By offset name: the partition whose lease a consumer's writes carry; the node consumers.
  const consumerPartition = new Map(ownConsumers.map((c) => [c.offset, c.partition]));
  const nodeConsumers = new Set(ownConsumers.filter((c) => c.nodes).map((c) => c.offset));
  const fence = (ps: Iterable<number>): LeaseClaim[] => {
    const out: LeaseClaim[] = [];
    for (const p of ps) {
      const c = claimOf.get(p);
      if (c === undefined) throw new Error(`partition ${p} is not this engine's (it owns ${partitions.join(',')})`);
      out.push(c);
    }
    return out;
  };
  // The store with the leases attached: a write of a partition this replica lost is refused.
  const store: SlicerStore = {
    loadSnapshot: (consumers) => deps.store.loadSnapshot(consumers),
    commitIngest: (batch) => deps.store.commitIngest({ ...batch, fence: fence([consumerPartition.get(batch.consumer) ?? -1]) }),
    commitSlices: (writes) => deps.store.commitSlices({ ...writes, fence: fence(partitionsOfWrites(writes, config.partitions)) }),
  };
  let ready = false;
  let notReady = 'starting';
  let reconciling: Promise<void> | undefined;
  const loops: Promise<void>[] = [];
  const initial = new Set<string>();
  let initialDone: () => void = () => {};

  const steps = new StartupSteps(notReady);
  const step = (reason: string): void => {
    if (stopConsuming.signal.aborted) throw new ClosedError('slicer engine closed during startup');
    steps.next(reason);
    notReady = reason;
  };

  let reconcileDeps: ReconcileDeps;
  let ingestDeps: IngestDeps;
  const gate = new Gate();
  // Applied messages per partition since its last snapshot, and the snapshot chain (one at a time).
  const sinceSnapshot = new Map<number, number>();
  let snapshots: Promise<unknown> = Promise.resolve();
  const snapshotQueued = new Set<number>();

  // Nodes as this engine's memory holds them (what its reconciles read), with the tombstones the
  // database knows that memory also holds as deleted.
  function memoryNodes(tombstones: readonly KubeObjectRow[]): KubeObjectRow[] {
    const rows: KubeObjectRow[] = [];
    for (const [name, node] of state.nodes()) {
      const v = state.version('Node', '', name);
      rows.push({ cluster: config.cluster, kind: 'Node', namespace: '', name, uid: node.metadata.uid ?? '', resourceVersion: v?.resourceVersion ?? node.metadata.resourceVersion ?? '', deleted: false, body: node, kubeSeq: nodesSeen });
    }
    for (const t of tombstones) {
      const v = state.version('Node', '', t.name);
      if (v?.deleted === true) rows.push({ ...t, resourceVersion: v.resourceVersion, kubeSeq: nodesSeen });
    }
    return rows;
  }

  async function takeSnapshot(p: number): Promise<SnapshotOutcome> {
    const db = deps.db;
    if (db === undefined) throw new Error('snapshots need the database');
    const t0 = performance.now();
    const tombstones = await loadNodeTombstones(db, config.cluster);
    const consumer = offsetName(names.kube, partitionDurable(settings.durablePrefix, p));
    let write: Promise<KubeSnapshotHeader> | undefined;
    await gate.exclusive(async () => {
      let fixed: () => void = () => {};
      const viewFixed = new Promise<void>((r) => (fixed = r));
      write = writeKubeSnapshot(db, {
        cluster: config.cluster,
        partition: p,
        partitions: config.partitions,
        consumer,
        seq: offsets.get(consumer) ?? 0,
        nodesSeq: nodesSeen,
        nodes: memoryNodes(tombstones),
        ownsNamespace: (ns) => partitionOf(ns, config.partitions) === p,
        fence: fence([p]),
      }, fixed);
      write.catch(() => {});
      await viewFixed;
    });
    const snapshot = await (write as Promise<KubeSnapshotHeader>);
    const ms = Math.round(performance.now() - t0);
    metrics.snapshots.inc({ result: 'written' });
    log.info({ partition: p, seq: snapshot.seq, nodesSeq: snapshot.nodesSeq, objects: snapshot.objects, slices: snapshot.slices, ms }, 'partition snapshot written');
    const compactions: Compaction[] = [];
    if (config.compactLog) {
      const cdeps = { db, js, jsm, names, cluster: config.cluster, partitions: config.partitions, fence: fence([p]), tombstoneRetentionMs: config.tombstoneRetention, nowMs: () => clock.now() };
      for (const run of [() => compactPartition(cdeps, p), () => compactNodes(cdeps)]) {
        const c = await run();
        compactions.push(c);
        const scope = c.scope === 'nodes' ? 'nodes' : 'partition';
        if (c.carried > 0) metrics.logCarried.inc({ scope }, c.carried);
        if (c.purged > 0) metrics.logPurged.inc({ scope }, c.purged);
        log.info({ ...c }, c.skipped === undefined ? 'KUBE compacted' : 'KUBE not compacted');
      }
    }
    return { snapshot, ms, compactions };
  }

  function snapshotPartition(p: number): Promise<SnapshotOutcome> {
    const run = snapshots.then(() => takeSnapshot(p));
    snapshots = run.catch(() => {});
    return run;
  }

  // The count towards the next snapshot survives engine restarts: it starts from the objects of
  // each partition stored since its newest snapshot (a lower bound of the messages applied), so
  // replicas that keep taking partitions over still snapshot, however short each engine lives.
  async function seedSnapshotCounts(objects: readonly KubeObjectRow[]): Promise<void> {
    if (config.snapshotEvery <= 0 || deps.db === undefined) return;
    const newest = new Map<number, number>();
    for (const h of await listKubeSnapshots(deps.db, config.cluster)) if (!newest.has(h.partition)) newest.set(h.partition, h.seq);
    for (const r of objects) {
      if (r.kind === 'Node') continue;
      const p = partitionOf(r.namespace, config.partitions);
      if (owned.has(p) && r.kubeSeq > (newest.get(p) ?? 0)) sinceSnapshot.set(p, (sinceSnapshot.get(p) ?? 0) + 1);
    }
  }

  // Called after each ingested batch of a partition consumer: queue a snapshot once due.
  function countApplied(p: number, n: number): void {
    if (config.snapshotEvery <= 0 || deps.db === undefined || n === 0) return;
    sinceSnapshot.set(p, (sinceSnapshot.get(p) ?? 0) + n);
    snapshotIfDue(p);
  }

  // Also called once the engine is ready: messages applied before (while the backlog was being
  // consumed) count, and a partition whose whole burst arrived then would otherwise wait for its
  // next message to snapshot (a CI run of bounded-log.int waited 20 s for a compaction so).
  function snapshotIfDue(p: number): void {
    if (config.snapshotEvery <= 0 || deps.db === undefined) return;
    const since = sinceSnapshot.get(p) ?? 0;
    if (since < config.snapshotEvery || snapshotQueued.has(p) || !ready || stopConsuming.signal.aborted) return;
    snapshotQueued.add(p);
    sinceSnapshot.set(p, 0);
    snapshotPartition(p)
      .catch((err: unknown) => {
        metrics.snapshots.inc({ result: 'failed' });
        log.warn({ err, partition: p }, 'partition snapshot or compaction failed; trying again after the next SNAPSHOT_EVERY messages');
      })
      .finally(() => snapshotQueued.delete(p));
  }

  // The mirroring controller records its warnings on the Endpoints object (A.13.5). Called only
  // after the batch committed; the publish is not awaited and cannot fail the reconcile.
  function emitEvents(out: ReconcileOutcome): void {
    if (out.events.length === 0) return;
    const { namespace, name } = splitServiceKey(out.key);
    const uid = state.endpoints(namespace, name)?.metadata.uid;
    const ref = { kind: 'Endpoints', apiVersion: 'v1', namespace, name, ...(uid ? { uid } : {}) };
    for (const ev of out.events) deps.eventRequests.emit(eventRequest(config.cluster, MIRRORING_EVENT_COMPONENT, ref, ev, clock.now()));
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
      await gate.enter();
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
        if (wrote) deps.onWrote();
      } catch (err) {
        for (const k of keys) {
          metrics.reconciles.inc({ result: 'error' });
          queue.addRateLimited(k);
        }
        log.error({ err, services: keys.length, first: keys[0] }, 'writing a reconcile batch failed; memory restored, retrying with backoff');
      } finally {
        gate.leave();
        inFlight = 0;
        for (const k of keys) {
          queue.done(k);
          if (initial.delete(k) && initial.size === 0) initialDone();
        }
      }
    }
  }

  function handler(offset: string): (msgs: ConsumedMessage[]) => Promise<HandlerOutcome> {
    const partition = nodeConsumers.has(offset) ? undefined : consumerPartition.get(offset);
    return async (msgs) => {
      const t0 = performance.now();
      await gate.enter();
      let outcomes;
      try {
        outcomes = await ingestBatch(offset, msgs, ingestDeps);
      } finally {
        gate.leave();
      }
      if (nodeConsumers.has(offset)) nodesSeen = Math.max(nodesSeen, offsets.get(offset) ?? 0);
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
      if (partition !== undefined) countApplied(partition, outcomes.filter((o) => o.result !== 'duplicate' && o.result !== 'stale').length);
      drainKick?.();
      return 'ack';
    };
  }

  // Positions the durable at the consumer's committed offset + 1: the offset (written with the
  // objects) is the truth, so whatever the server still holds as pending is dropped and
  // redelivered in order.
  async function positionDurable(spec: DurableOptions): Promise<ConsumerInfo> {
    return restartDurableAt(jsm, names.kube, spec, (offsets.get(offsetName(names.kube, spec.durable)) ?? 0) + 1);
  }

  /** Consumes `spec`'s durable until the engine stops; `positioned` is its info from startup. */
  async function superviseLoop(spec: DurableOptions, positioned: ConsumerInfo): Promise<void> {
    const durable = spec.durable;
    const offset = offsetName(names.kube, durable);
    const signal = stopConsuming.signal;
    let failures = 0;
    for (let first = true; !signal.aborted; first = false) {
      try {
        const info = first ? positioned : await positionDurable(spec);
        log.debug({ consumer: durable }, 'consuming from the committed offset');
        await consumeBatchesInOrder(js, names.kube, durable, handler(offset), { signal, batch: INGEST_BATCH, info });
        failures = 0;
        if (!signal.aborted) {
          // The subscription ended by itself (e.g. the consumer was deleted): do not spin.
          log.warn({ consumer: durable }, 'consumer ended; restarting');
          await sleep(clock, CONSUME_RESTART_MS, signal);
        }
      } catch (err) {
        if (err instanceof DeliveryGapError) {
          // Not a failure of ours: a delivery was lost in flight (a NATS server went away).
          metrics.deliveryGaps.inc({ consumer: durable });
          log.warn({ consumer: durable, gap: err.message }, 'a KUBE delivery was lost in flight; restarting from the committed offset');
          continue;
        }
        failures++;
        metrics.eventsIngested.inc({ kind: 'unknown', result: 'error' });
        log.error({ err, consumer: durable, failures }, 'ingest failed; restarting from the committed offset');
        await sleep(clock, Math.min(CONSUME_RESTART_MS * 2 ** Math.min(failures - 1, 5), 30_000), signal);
      }
    }
  }

  // Set while startup waits for the initial backlog: an ingested batch makes the next check come
  // soon (its ack is on its way), rather than at the end of a longer poll interval.
  let drainKick: (() => void) | undefined;

  /** Waits until every durable consumed what was there at start; `created` is each one's info as positioned. */
  async function waitDrained(created: readonly ConsumerInfo[]): Promise<void> {
    const signal = stopConsuming.signal;
    // The backlog is what was there at start: a durable created with nothing to deliver, or seen
    // with nothing left, is not asked again (each consumer info costs the server a scan of the
    // filter, see consumeBatchesInOrder).
    let left = created.filter((c) => c.num_pending + c.num_ack_pending !== 0).map((c) => c.name);
    if (left.length === 0) return;
    let kicked = false;
    for (let wait = DRAIN_POLL_FIRST_MS; ; wait = kicked ? DRAIN_POLL_FIRST_MS : Math.min(wait * 2, DRAIN_POLL_MS)) {
      kicked = false;
      try {
        const asked = performance.now();
        const pending = await Promise.all(left.map((d) => pendingCount(jsm, names.kube, d)));
        log.debug({ consumers: left, pending, ms: Math.round(performance.now() - asked) }, 'initial backlog: consumers read');
        left = left.filter((_, i) => pending[i] !== 0);
        if (left.length === 0) return;
        const count = sumCounts(pending); // unknown (?) while the server reports a count that cannot be true
        notReady = `consuming the initial backlog (${count ?? '?'} messages left)`;
      } catch (err) {
        notReady = `cannot read consumer state: ${err instanceof Error ? err.message : String(err)}`;
      }
      await Promise.race([
        sleep(clock, wait, signal),
        new Promise<void>((resolve) => {
          drainKick = () => {
            kicked = true;
            resolve();
          };
        }),
      ]);
      drainKick = undefined;
      // The batch's ack reaches the server a moment later.
      if (kicked) await sleep(clock, DRAIN_POLL_FIRST_MS, signal);
      if (signal.aborted) throw new ClosedError('slicer engine closed during startup');
    }
  }

  async function start(): Promise<void> {
    step('loading the snapshot');
    const t0 = performance.now();
    const consumers = ownConsumers.map((c) => c.offset);
    const snapshot = await store.loadSnapshot(consumers);
    step('restoring the projection');
    for (const c of consumers) offsets.set(c, snapshot.offsets.get(c) ?? 0);
    // One unacknowledged batch at a time: the offset check in ingest needs stream order, also
    // across redeliveries (see ingest.ts), and a batch is acked or nak'ed whole.
    const durableOpts = { ackWaitMs: config.ackWait, maxAckPending: INGEST_BATCH };
    const specs: DurableOptions[] = ownConsumers.map((c) => ({ ...durableOpts, durable: c.durable, filterSubject: c.filterSubject }));
    // The consumers are placed at the snapshot's offsets while memory is being restored (JetStream
    // API calls, all at once); nothing is consumed before the loops below start.
    const positioned = Promise.all(specs.map((spec) => positionDurable(spec)));
    positioned.catch(() => {}); // awaited below
    await restoreProjection(state, snapshot);
    for (const r of snapshot.objects) if (r.kind === 'Node') nodesSeen = Math.max(nodesSeen, r.kubeSeq);
    for (const c of nodeConsumers) nodesSeen = Math.max(nodesSeen, offsets.get(c) ?? 0);
    await seedSnapshotCounts(snapshot.objects);
    log.info({ ...state.counts(), partitions, ms: Math.round(performance.now() - t0), offsets: Object.fromEntries(offsets) }, 'projection restored from Postgres');

    step('creating consumers');
    const infos = await positioned;

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
      nodesSeq: () => nodesSeen,
      triggerTimes: new TriggerTimeTracker(),
    };

    specs.forEach((spec, i) => loops.push(superviseLoop(spec, infos[i] as ConsumerInfo)));

    step('consuming the initial backlog');
    await waitDrained(infos);
    // Like a controller whose informers just synced: every Service is reconciled once, which
    // also covers marks a crash lost (they are held in memory only) and the partitions this
    // replica just took over. Reconciling before the backlog is in would plan from a partial
    // view (a Service before its pods) and write placeholder slices whose names then outlive the
    // real ones.
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
    for (const p of owned) snapshotIfDue(p);
    log.info({ cluster: config.cluster, partitions, ms: Math.round(performance.now() - t0), steps: steps.durations() }, 'slicer engine ready');
  }

  const started = start();
  started.catch(() => {}); // observed through `ready` and close()
  let closing: Promise<void> | undefined;

  return {
    partitions,
    snapshot: (p) => {
      if (!owned.has(p)) return Promise.reject(new Error(`partition ${p} is not this engine's (it owns ${partitions.join(',')})`));
      return snapshotPartition(p);
    },
    ready: started,
    isReady: () => ready,
    readiness: () => (ready ? { ready: true } : { ready: false, reason: notReady }),
    // A closed engine holds no work: its marks die with it (the next owner resyncs everything).
    pending: () => (closing === undefined ? dirty.size + inFlight : 0),
    close: () =>
      (closing ??= (async () => {
        stopConsuming.abort();
        await started.catch(() => {});
        await Promise.all(loops);
        queue.shutDown();
        await reconciling;
        await snapshots;
        ready = false;
      })()),
  };
}
