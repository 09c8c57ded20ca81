// The replay check: rebuild a Service's slices from the KUBE log alone and compare them with
// what the slicer recorded. For every `reconciles` row (in order) the projection is rebuilt
// from the log up to the view that reconcile read (partition messages ≤ kube_seq_to, node
// messages ≤ the bound in its reconcile ID), the same composition of the core (planService over a ClusterState) runs, and its writes
// must match the row's counts and its SLICES message; at the end the replayed slices must
// equal the stored ones, names included.
//
// Not compared: the last-change-trigger-time annotation. Like upstream's, the slicer keeps
// trigger-time state in memory (A.10), so it depends on which syncs one process saw; the
// replay runs its own tracker and strips the annotation on both sides.
// Also assumed: a reconcile's new names did not collide with another Service's slices (the
// live reconcile avoids every name in the namespace; the replay only knows this Service's).
//
// After compaction (a bounded log, issue 9.4) the head of the log is gone: the replay then starts
// from the newest snapshot of the Service's partition — its objects, the nodes and the Service's
// slices at sequence S — and replays only the records after the snapshot (reconciles.id above
// its `reconcilesTo`) with the messages after S. What happened before the snapshot is no longer
// checked. With a complete log (no cut recorded) the replay starts from the first message.

import type { ReconcileSettings } from '@slicemesh/core';
import { ClusterState, applySlicePlan, isEmptyPlan, planService, serviceView } from '@slicemesh/core';
import type { EndpointSlice, Endpoints, Node, Pod, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { Db, KubeObjectRow, StoredReconcile } from '@slicemesh/db';
import { NODES_SCOPE, loadKubeLogCuts, loadKubeSnapshot, loadOutboxPayloads, loadReconciles, loadSlices, partitionScope } from '@slicemesh/db';
import type { JetStreamClient, StreamNames } from '@slicemesh/nats';
import { kubeNodesFilter, partitionOf, slicesSubject } from '@slicemesh/nats';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import { decodeKubeMessage } from '@slicemesh/contracts';
import { isProjected, objectChangeOf } from './ingest.ts';
import type { LogMessage } from './kube-log.ts';
import { kubeNamespaceFilter, readKubeLog } from './kube-log.ts';
import type { SliceChangedMessage } from './reconcile.ts';
import { SLICE_CHANGED, parseReconcileID } from './reconcile.ts';

export interface ReplayInput {
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  readonly partitions: number;
  /** Stream subject prefix. */
  readonly prefix: string;
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
  /** The Service's replay records, in id order. */
  readonly records: readonly (Pick<StoredReconcile, 'id' | 'kubeSeqTo' | 'reconcileId' | 'created' | 'updated' | 'deleted'> & { readonly settings?: unknown })[];
  /** KUBE messages of the Service's namespace (its partition's subjects), any order. */
  readonly namespaceLog: readonly LogMessage[];
  /** KUBE node messages, any order. */
  readonly nodeLog: readonly LogMessage[];
  /** The SLICES messages the slicer queued for this Service, in order. */
  readonly published: readonly SliceChangedMessage[];
  /** The Service's slices as stored now. */
  readonly stored: readonly EndpointSlice[];
  /** Start from this snapshot instead of the start of the log (see the file comment). */
  readonly base?: ReplayBase;
}

/** Where a replay from a snapshot starts. */
export interface ReplayBase {
  /** The partition's KUBE sequence the snapshot reflects: the namespace's messages after it are replayed. */
  readonly seq: number;
  /** The node sequence its nodes reflect. */
  readonly nodesSeq: number;
  /** The newest reconciles.id whose slices it holds: the records after it are replayed. */
  readonly reconcilesTo: number;
  /** The namespace's objects and tombstones, and the nodes. */
  readonly objects: readonly KubeObjectRow[];
  /** The Service's slices. */
  readonly slices: readonly EndpointSlice[];
}

export interface ReplayStep {
  readonly id: number;
  readonly reconcileID: string;
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  /** Empty when the step matched. */
  readonly problems: readonly string[];
}

export interface ReplayReport {
  /** True when every step and the final state matched. */
  readonly ok: boolean;
  readonly steps: readonly ReplayStep[];
  /** Every problem, step problems prefixed with the record id. */
  readonly problems: readonly string[];
  /** The replayed slices, sorted by name. */
  readonly slices: readonly EndpointSlice[];
  /** Set when the replay started from a snapshot: its sequences. */
  readonly from?: { readonly seq: number; readonly nodesSeq: number };
}

/** A projection fed in sequence order: the live slicer's ClusterState and decoder, from the snapshot when there is one. */
function newProjection(input: ReplayInput): { readonly state: ClusterState; readonly apply: (m: LogMessage) => void } {
  const state = new ClusterState();
  for (const r of input.base?.objects ?? []) {
    state.restore({ kind: r.kind, namespace: r.namespace, name: r.name, resourceVersion: r.resourceVersion, deleted: r.deleted, object: r.body as Service | Pod | Node | Endpoints });
  }
  for (const sl of input.base?.slices ?? []) state.putSlice(sl);
  const ctx = { cluster: input.cluster, partitions: input.partitions, prefix: input.prefix };
  return {
    state,
    apply: (m) => {
      const d = decodeKubeMessage(m, ctx);
      // Not ok: the live slicer dead-lettered it; not projected: it skipped it (another controller's slice).
      if (d.ok && isProjected(d.change)) state.restore(objectChangeOf(d.change));
    },
  };
}

/** The settings a record says it ran with, else the input's (records made before they were kept). */
function settingsOf(rec: ReplayInput['records'][number], input: ReplayInput): ReconcileSettings {
  const s = rec.settings as Partial<ReconcileSettings> | null | undefined;
  return {
    managedBy: typeof s?.managedBy === 'string' ? s.managedBy : input.managedBy,
    maxEndpointsPerSlice: typeof s?.maxEndpointsPerSlice === 'number' ? s.maxEndpointsPerSlice : input.maxEndpointsPerSlice,
  };
}

/** Cursor over one log: applies messages up to a bound; rewinds (rebuild) if a bound goes back. */
class Cursor {
  private readonly log: readonly LogMessage[];
  private next = 0;
  private bound: number;
  constructor(log: readonly LogMessage[], from = 0) {
    this.log = log;
    this.bound = from;
  }
  /** False when `to` is below the last bound (the projection must be rebuilt). */
  advance(to: number, apply: (m: LogMessage) => void): boolean {
    if (to < this.bound) return false;
    this.bound = to;
    while (this.next < this.log.length && (this.log[this.next] as LogMessage).seq <= to) apply(this.log[this.next++] as LogMessage);
    return true;
  }
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}

/** The slice as compared: JSON round trip, keys sorted, trigger-time annotation removed. */
export function comparableSlice(s: EndpointSlice): string {
  const plain = JSON.parse(JSON.stringify(s)) as { metadata: { annotations?: Record<string, string> } };
  if (plain.metadata.annotations) {
    delete plain.metadata.annotations[ANNOTATION_TRIGGER_TIME];
    if (Object.keys(plain.metadata.annotations).length === 0) delete plain.metadata.annotations;
  }
  return JSON.stringify(canonical(plain));
}

function compareSets(what: string, replayed: readonly EndpointSlice[], recorded: readonly EndpointSlice[]): string[] {
  const a = new Map(replayed.map((s) => [s.metadata.name, comparableSlice(s)]));
  const b = new Map(recorded.map((s) => [s.metadata.name, comparableSlice(s)]));
  const problems: string[] = [];
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(name);
    const y = b.get(name);
    if (x === undefined) problems.push(`${what}: slice ${name} is recorded but the replay did not produce it`);
    else if (y === undefined) problems.push(`${what}: the replay produced slice ${name}, which is not recorded`);
    else if (x !== y) problems.push(`${what}: slice ${name} differs: replayed ${x} recorded ${y}`);
  }
  return problems;
}

/**
 * Replays one Service (see the file comment). With no records and no stored slices the report
 * is ok with no steps. Never throws for mismatches; they are listed in `problems`.
 */
export function replayService(input: ReplayInput): ReplayReport {
  const base = input.base;
  const nsFrom = base?.seq ?? 0;
  const nodesFrom = base?.nodesSeq ?? 0;
  const nsLog = input.namespaceLog.filter((m) => m.seq > nsFrom).sort((a, b) => a.seq - b.seq);
  const nodeLog = input.nodeLog.filter((m) => m.seq > nodesFrom).sort((a, b) => a.seq - b.seq);
  const records = base === undefined ? input.records : input.records.filter((r) => r.id > base.reconcilesTo);
  let projection = newProjection(input);
  let nsCursor = new Cursor(nsLog, nsFrom);
  let nodeCursor = new Cursor(nodeLog, nodesFrom);
  const tracker = new TriggerTimeTracker();
  const published = new Map<string, SliceChangedMessage>();
  for (const p of input.published) if (p.reconcileID !== null) published.set(p.reconcileID, p);
  const steps: ReplayStep[] = [];

  for (const rec of records) {
    const to = rec.kubeSeqTo;
    const nodesTo = parseReconcileID(rec.reconcileId)?.nodesTo ?? to;
    if (to < nsFrom || nodesTo < nodesFrom) {
      steps.push({ id: rec.id, reconcileID: rec.reconcileId, created: 0, updated: 0, deleted: 0, problems: [`read KUBE up to ${to} (nodes ${nodesTo}), before the snapshot at ${nsFrom} (nodes ${nodesFrom}): not replayable`] });
      continue;
    }
    // The two logs touch disjoint objects, so each is applied in its own order; a bound that
    // moved back (records out of view order) means a rebuild from the start (slices kept).
    if (!nsCursor.advance(to, projection.apply) || !nodeCursor.advance(nodesTo, projection.apply)) {
      const slices = projection.state.slicesOf(input.namespace, input.service);
      projection = newProjection(input);
      for (const s of slices) projection.state.putSlice(s);
      nsCursor = new Cursor(nsLog, nsFrom);
      nodeCursor = new Cursor(nodeLog, nodesFrom);
      nsCursor.advance(to, projection.apply);
      nodeCursor.advance(nodesTo, projection.apply);
    }
    const planned = planService(serviceView(projection.state, input.namespace, input.service), {
      ...settingsOf(rec, input),
      triggerTime: (svc, pods, changes) => tracker.computeTriggerTime(svc, pods, changes),
    });
    const applied = isEmptyPlan(planned.plan) ? { created: [], updated: [], deleted: [] } : applySlicePlan(projection.state, input.cluster, planned.plan);
    const counts = { created: applied.created.length, updated: applied.updated.length, deleted: applied.deleted.length };
    const problems: string[] = [];
    for (const k of ['created', 'updated', 'deleted'] as const) {
      if (counts[k] !== rec[k]) problems.push(`${k}: replayed ${counts[k]}, recorded ${rec[k]}`);
    }
    const msg = published.get(rec.reconcileId);
    const changed = counts.created + counts.updated + counts.deleted > 0;
    if (changed && msg === undefined) problems.push('no SLICES message was recorded for this reconcile');
    if (!changed && msg !== undefined) problems.push('a SLICES message was recorded, but the replay changed nothing');
    if (msg !== undefined) {
      problems.push(...compareSets('SLICES upserts', [...applied.created, ...applied.updated], msg.upserts));
      const deletes = applied.deleted.map((s) => s.metadata.name).sort();
      if (JSON.stringify(deletes) !== JSON.stringify([...msg.deletes].sort())) problems.push(`SLICES deletes: replayed ${JSON.stringify(deletes)}, recorded ${JSON.stringify(msg.deletes)}`);
    }
    steps.push({ id: rec.id, reconcileID: rec.reconcileId, ...counts, problems });
  }

  const finalSlices = projection.state.slicesOf(input.namespace, input.service);
  const problems = [...steps.flatMap((s) => s.problems.map((p) => `reconcile ${s.id} (${s.reconcileID}): ${p}`)), ...compareSets('final state', finalSlices, input.stored)];
  return { ok: problems.length === 0, steps, problems, slices: finalSlices, ...(base !== undefined ? { from: { seq: base.seq, nodesSeq: base.nodesSeq } } : {}) };
}

export interface ReplayLogDeps {
  readonly db: Db;
  readonly js: JetStreamClient;
  readonly names: StreamNames;
  readonly cluster: string;
  readonly partitions: number;
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
  /**
   * `auto` (default): from the start of the log while it is complete, from the newest snapshot of
   * the partition once a purge cut it (kube_log_cuts); `snapshot`: from the newest snapshot
   * whenever there is one.
   */
  readonly from?: 'auto' | 'snapshot';
}

/**
 * Loads what replayService needs for `namespace/name` (records and stored slices from Postgres,
 * the namespace's and the nodes' KUBE messages from NATS, the SLICES messages from the outbox)
 * and replays it.
 */
export async function replayServiceLog(deps: ReplayLogDeps, key: { readonly namespace: string; readonly name: string }): Promise<ReplayReport> {
  const { db, cluster, names } = deps;
  const partition = partitionOf(key.namespace, deps.partitions);
  const cuts = await loadKubeLogCuts(db, cluster);
  const cut = (cuts.get(partitionScope(partition)) ?? 1) > 1 || (cuts.get(NODES_SCOPE) ?? 1) > 1;
  let base: ReplayBase | undefined;
  if (cut || deps.from === 'snapshot') {
    const snap = await loadKubeSnapshot(db, cluster, partition, { namespace: key.namespace, service: key.name });
    if (snap === undefined || snap.partitions !== deps.partitions) {
      if (cut) {
        const why = snap === undefined ? 'there is no snapshot of it' : `its snapshot was taken with ${snap.partitions} partitions`;
        return { ok: false, steps: [], problems: [`partition ${partition}'s log was purged, but ${why}: nothing to replay from`], slices: [] };
      }
    } else {
      base = { seq: snap.seq, nodesSeq: snap.nodesSeq, reconcilesTo: snap.reconcilesTo, objects: snap.rows, slices: snap.sliceBodies };
    }
  }
  const records = (await loadReconciles(db, cluster, key.namespace, key.name)).filter((r) => base === undefined || r.id > base.reconcilesTo);
  const to = Math.max(0, ...records.map((r) => r.kubeSeqTo));
  const nodesTo = Math.max(0, ...records.map((r) => parseReconcileID(r.reconcileId)?.nodesTo ?? r.kubeSeqTo));
  const namespaceLog = await readKubeLog(deps.js, names.kube, kubeNamespaceFilter(cluster, partition, key.namespace, names), to, { fromSeq: (base?.seq ?? 0) + 1 });
  const nodeLog = await readKubeLog(deps.js, names.kube, kubeNodesFilter(cluster, names), nodesTo, { fromSeq: (base?.nodesSeq ?? 0) + 1 });
  // Rows written before SLICES subjects carried the partition token hold the older form.
  const subjects = [partition, null].map((p) => slicesSubject({ cluster, partition: p, namespace: key.namespace, service: key.name }, names));
  const published = (await loadOutboxPayloads(db, subjects)).map((p) => p as SliceChangedMessage).filter((p) => p.type === SLICE_CHANGED);
  const stored = await loadSlices(db, cluster, key.namespace, key.name);
  return replayService({
    cluster,
    namespace: key.namespace,
    service: key.name,
    partitions: deps.partitions,
    prefix: names.prefix,
    managedBy: deps.managedBy,
    maxEndpointsPerSlice: deps.maxEndpointsPerSlice,
    records,
    namespaceLog,
    nodeLog,
    published,
    stored,
    ...(base !== undefined ? { base } : {}),
  });
}
