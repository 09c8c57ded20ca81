// KUBE compaction (issue 9.4), the I/O around compaction.ts: after a partition's snapshot, its
// owner purges the partition's messages that nothing needs any more, having first carried every
// live object whose last message would go forward (republished with the same body and
// resourceVersion, so every consumer folds it as stale, and marked with the Slicemesh-Carried
// header). The node subjects are purged per subject, never their last message (agents and the
// watcher's readback read it), once every partition has a snapshot.
//
// Order: carry, record the cut (kube_log_cuts: from now on a replay starts from a snapshot),
// purge. A crash between any two leaves a log that is still whole for every reader.

import { assertFence, kubeSnapshotSummary, listKubeSnapshots, loadKubeLogCuts, loadKubeSnapshot, NODES_SCOPE, offsetsWithPrefix, partitionScope, recordKubeLogCut } from '@slicemesh/db';
import type { Db, KubeObjectRow, LeaseClaim } from '@slicemesh/db';
import type { JetStreamClient, JetStreamManager, StreamNames } from '@slicemesh/nats';
import {
  WrongLastSequenceError,
  countFrom,
  durablePositions,
  kubeNodesFilter,
  kubeObjectSubject,
  filtersOverlap,
  kubePartitionFilter,
  lastPerSubject,
  nextSeqMatching,
  publishAcked,
  purgeBelow,
  storedMessage,
  streamShape,
  subjectCounts,
} from '@slicemesh/nats';
import { CARRIED_HEADER, carriedEnvelope, carriedMsgId, carriesUnowned, compactionBounds, cutOf, hintsOffsetFilter, planCarries, worthCompacting } from './compaction.ts';

export interface CompactDeps {
  readonly db: Db;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: StreamNames;
  readonly cluster: string;
  readonly partitions: number;
  /** The partition's lease (none: unfenced, for tools and tests). */
  readonly fence: readonly LeaseClaim[];
  readonly tombstoneRetentionMs: number;
  readonly nowMs: () => number;
}

export interface Compaction {
  /** `p<N>` or `nodes`. */
  readonly scope: string;
  /** Why nothing was purged, when nothing was. */
  readonly skipped?: string;
  readonly snapshotSeq: number;
  /** The first sequence kept (1 when nothing could go). */
  readonly keepFrom: number;
  readonly heldBy: string;
  /** Messages of the scope below the cut before the purge. */
  readonly below: number;
  readonly carried: number;
  /** Carries a newer message overtook (the subject's last message is then that one). */
  readonly overtaken: number;
  readonly expiredTombstones: number;
  readonly purged: number;
}

/** `kube.<cluster>.<p>.<kind>.<ns>.<name>` of a snapshot row. */
function rowSubject(deps: CompactDeps, partition: number, r: KubeObjectRow): string {
  return kubeObjectSubject({ cluster: deps.cluster, partition, kind: r.kind as 'Service' | 'Pod' | 'Endpoints', namespace: r.namespace, name: r.name }, deps.names);
}

async function publishCarry(deps: CompactDeps, subject: string, body: unknown, msgID: string, expectLast: number, snapshotSeq: number): Promise<boolean> {
  try {
    await publishAcked(deps.js, subject, body, { msgID, expectLastSubjectSequence: expectLast, headers: { [CARRIED_HEADER]: String(snapshotSeq) } });
    return true;
  } catch (err) {
    if (err instanceof WrongLastSequenceError) return false; // a newer message came meanwhile: it is the last one
    throw err;
  }
}

function unownedMsgId(cluster: string, body: unknown, stream: string, seq: number, snapshotSeq: number): string {
  const o = body as { type?: unknown; object?: { metadata?: { uid?: unknown; resourceVersion?: unknown } } } | null;
  const uid = o?.object?.metadata?.uid;
  const rv = o?.object?.metadata?.resourceVersion;
  if (typeof uid !== 'string' || typeof rv !== 'string') return `carried/${stream}/${seq}/${snapshotSeq}`;
  return `${cluster}/${uid}/${rv}${o?.type === 'Deleted.v1' ? '/deleted' : ''}/carried-${snapshotSeq}`;
}

/** Why a replicated KUBE is never purged (streamShape), or undefined for a stream of one replica. */
function replicatedReason(deps: CompactDeps, replicas: number): string | undefined {
  return replicas > 1 ? `${deps.names.kube} has ${replicas} replicas: purges let nats-server 2.9 replicas diverge, so a replicated log keeps everything (snapshots are still written)` : undefined;
}

/**
 * The hints offsets as holds on one scope: an offset whose consumer's filter is known holds the
 * scope only when that filter overlaps it, and only at the first message of its filter it has not
 * read yet (none left: no hold); an offset we cannot read holds at its value, as cutOf says.
 */
async function offsetHolds(deps: CompactDeps, offsets: ReadonlyMap<string, number>, scopeFilter: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [name, seq] of offsets) {
    const filter = hintsOffsetFilter(name, { cluster: deps.cluster, kubeStream: deps.names.kube, names: deps.names });
    if (filter === undefined) {
      out.set(name, seq);
      continue;
    }
    if (!filtersOverlap(filter, scopeFilter)) continue;
    const next = await nextSeqMatching(deps.jsm, deps.names.kube, filter, seq + 1);
    if (next !== null) out.set(name, next - 1);
  }
  return out;
}

/** Compacts one partition's subjects from its newest snapshot (see the file comment). */
export async function compactPartition(deps: CompactDeps, partition: number): Promise<Compaction> {
  const scope = partitionScope(partition);
  const none = { scope, snapshotSeq: 0, keepFrom: 1, heldBy: '', below: 0, carried: 0, overtaken: 0, expiredTombstones: 0, purged: 0 };
  // One stream info: its replicas first, its sequences for the bounds below (messages that come
  // after it are above any cut, and can only defer a compaction to the next snapshot).
  const shape = await streamShape(deps.jsm, deps.names.kube);
  const replicated = replicatedReason(deps, shape.replicas);
  if (replicated !== undefined) return { ...none, skipped: replicated };
  const summary = await kubeSnapshotSummary(deps.db, deps.cluster, partition);
  if (summary === undefined) return { ...none, skipped: 'no snapshot' };
  if (summary.partitions !== deps.partitions) return { ...none, skipped: `the snapshot was taken with ${summary.partitions} partitions, not ${deps.partitions}` };
  const stream = deps.names.kube;
  const filter = kubePartitionFilter(deps.cluster, partition, deps.names);
  const [offsets, durables, cuts] = await Promise.all([offsetsWithPrefix(deps.db, 'hints:'), durablePositions(deps.jsm, stream), loadKubeLogCuts(deps.db, deps.cluster)]);
  const cut = cutOf({ snapshotSeq: summary.seq, filter, kubeStream: stream, offsets: await offsetHolds(deps, offsets, filter), durables, partition });
  const base = { ...none, snapshotSeq: summary.seq, keepFrom: cut.keepFrom, heldBy: cut.heldBy };
  if (cut.keepFrom <= (cuts.get(scope) ?? 1)) return { ...base, skipped: `nothing new below the cut (held by ${cut.heldBy})` };
  // Decided from counts when it can be: reading the partition's log and the snapshot's rows costs
  // this process seconds of CPU at 100k objects, beside the reconciles it serves.
  const bound = compactionBounds(summary.liveObjects, cut.keepFrom, shape);
  if (!worthCompacting(bound.belowAtMost, bound.carriesAtLeast)) {
    return { ...base, skipped: `not worth it: at most ${bound.belowAtMost} messages below the cut, at least ${bound.carriesAtLeast} to carry (bounds from the stream's sequences and the snapshot's ${summary.liveObjects} live objects)` };
  }
  const snap = await loadKubeSnapshot(deps.db, deps.cluster, partition, { withoutNodes: true });
  // Snapshots of a partition are written by its owner one at a time: a different one means a
  // newer snapshot, whose own compaction comes next.
  if (snap === undefined || snap.id !== summary.id) return { ...base, skipped: 'a newer snapshot was written meanwhile' };

  const below = (await countFrom(deps.jsm, deps.js, stream, filter, 1)) - (await countFrom(deps.jsm, deps.js, stream, filter, cut.keepFrom));
  const tails = await lastPerSubject(deps.jsm, deps.js, stream, filter);
  const now = deps.nowMs();
  const plan = planCarries({ rows: snap.rows, subjectOf: (r) => rowSubject(deps, partition, r), tails, keepFrom: cut.keepFrom, nowMs: now, tombstoneRetentionMs: deps.tombstoneRetentionMs });
  const unowned: { subject: string; seq: number; body: unknown }[] = [];
  let expired = plan.expiredTombstones;
  for (const u of plan.unowned) {
    const m = await storedMessage(deps.jsm, stream, u.tail.seq);
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(m.data)) as unknown;
    } catch {
      continue; // not JSON: rejected input, in the DLQ already
    }
    if (carriesUnowned(body, now - u.tail.timeMs, deps.tombstoneRetentionMs)) unowned.push({ subject: u.subject, seq: u.tail.seq, body });
    else expired++;
  }
  const carries = plan.carries.length + unowned.length;
  if (!worthCompacting(below, carries)) return { ...base, below, expiredTombstones: expired, skipped: `not worth it: ${below} messages below the cut, ${carries} to carry` };

  await assertFence(deps.db, deps.fence);
  let carried = 0;
  let overtaken = 0;
  for (const c of plan.carries) {
    const ok = await publishCarry(deps, c.subject, carriedEnvelope(deps.cluster, c.row, c.lastTimeMs), carriedMsgId(deps.cluster, c.row, snap.seq), c.expectLast, snap.seq);
    if (ok) carried++;
    else overtaken++;
  }
  for (const u of unowned) {
    const ok = await publishCarry(deps, u.subject, u.body, unownedMsgId(deps.cluster, u.body, stream, u.seq, snap.seq), u.seq, snap.seq);
    if (ok) carried++;
    else overtaken++;
  }
  await assertFence(deps.db, deps.fence);
  await recordKubeLogCut(deps.db, deps.cluster, scope, cut.keepFrom);
  const purged = await purgeBelow(deps.jsm, stream, filter, cut.keepFrom);
  await recordKubeLogCut(deps.db, deps.cluster, scope, cut.keepFrom, purged);
  return { ...base, below, carried, overtaken, expiredTombstones: expired, purged };
}

/**
 * Compacts the node subjects: below the smallest node sequence of every partition's newest
 * snapshot (and every reader's position), each node subject keeps at least its last message.
 */
export async function compactNodes(deps: CompactDeps): Promise<Compaction> {
  const none = { scope: NODES_SCOPE, snapshotSeq: 0, keepFrom: 1, heldBy: '', below: 0, carried: 0, overtaken: 0, expiredTombstones: 0, purged: 0 };
  const replicated = replicatedReason(deps, (await streamShape(deps.jsm, deps.names.kube)).replicas);
  if (replicated !== undefined) return { ...none, skipped: replicated };
  const newest = new Map<number, number>();
  for (const h of await listKubeSnapshots(deps.db, deps.cluster)) {
    if (h.partitions === deps.partitions && !newest.has(h.partition)) newest.set(h.partition, h.nodesSeq);
  }
  const missing = Array.from({ length: deps.partitions }, (_, p) => p).filter((p) => !newest.has(p));
  if (missing.length > 0) return { ...none, skipped: `partitions without a snapshot: ${missing.join(',')}` };
  const snapshotSeq = Math.min(...newest.values());
  const stream = deps.names.kube;
  const filter = kubeNodesFilter(deps.cluster, deps.names);
  const [offsets, durables, cuts] = await Promise.all([offsetsWithPrefix(deps.db, 'hints:'), durablePositions(deps.jsm, stream), loadKubeLogCuts(deps.db, deps.cluster)]);
  const cut = cutOf({ snapshotSeq, filter, kubeStream: stream, offsets: await offsetHolds(deps, offsets, filter), durables });
  const base = { ...none, snapshotSeq, keepFrom: cut.keepFrom, heldBy: cut.heldBy };
  if (cut.keepFrom <= (cuts.get(NODES_SCOPE) ?? 1)) return { ...base, skipped: `nothing new below the cut (held by ${cut.heldBy})` };
  const counts = await subjectCounts(deps.jsm, stream, filter);
  const tails = await lastPerSubject(deps.jsm, deps.js, stream, filter);
  const below = (await countFrom(deps.jsm, deps.js, stream, filter, 1)) - (await countFrom(deps.jsm, deps.js, stream, filter, cut.keepFrom));
  await recordKubeLogCut(deps.db, deps.cluster, NODES_SCOPE, cut.keepFrom);
  let purged = 0;
  for (const [subject, n] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
    const tail = tails.get(subject);
    if (n <= 1 || tail === undefined) continue;
    purged += await purgeBelow(deps.jsm, stream, subject, Math.min(cut.keepFrom, tail.seq));
  }
  await recordKubeLogCut(deps.db, deps.cluster, NODES_SCOPE, cut.keepFrom, purged);
  return { ...base, below, purged };
}
