// The decisions of KUBE compaction, pure (compactor.ts does the I/O): how far a scope of the log
// may be purged (the cut), which objects must be carried forward first so that every live
// object's last version stays the last message of its subject, and whether a compaction is worth
// what it republishes.
//
// The cut of a scope is the first sequence kept: min over what still needs the messages — the
// snapshot (its sequence), the hints service's committed offsets of its KUBE consumers, every
// durable consumer on KUBE whose filter reaches the scope — plus one.

import type { KubeObjectRow } from '@slicemesh/db';
import type { DurablePosition, SubjectTail } from '@slicemesh/nats';
import type { SubjectOptions } from '@slicemesh/nats';
import { DELETED, UPSERTED, filtersOverlap, hintsKubeFilter, isHintsKubeRole, parseHintsOffsetName } from '@slicemesh/nats';

/** The header a carried message has; its value is the snapshot sequence it was carried at. */
export const CARRIED_HEADER = 'Slicemesh-Carried';

export interface CutInput {
  /** The snapshot's sequence for a partition, or the nodes sequence for the node subjects. */
  readonly snapshotSeq: number;
  /** The scope's filter (`kube.<cluster>.<p>.>` or `kube.<cluster>.node.>`, prefix included). */
  readonly filter: string;
  /** The KUBE stream's name: offsets naming it are readers of KUBE. */
  readonly kubeStream: string;
  /** consumer_offsets rows of other services (`hints:…`), by name. */
  readonly offsets: ReadonlyMap<string, number>;
  /** Every durable consumer on KUBE. */
  readonly durables: readonly DurablePosition[];
  /** The partition of a partition scope: an offset naming another partition (`…:p<M>:…`) does not hold it. */
  readonly partition?: number;
}

export interface Cut {
  /** The first sequence kept: messages of the scope below it may go. 1: nothing may go. */
  readonly keepFrom: number;
  /** What set it: `snapshot`, `offset <name>` or `durable <name>`. */
  readonly heldBy: string;
}

/**
 * The cut of one scope (see the file comment). An offset counts when one of its `:`-separated
 * parts is the KUBE stream's name — generous on purpose: a hints consumer of SLICES does not
 * hold KUBE back, any hints consumer of KUBE holds every scope, as does a name we cannot read;
 * only one that names another partition (`hints:<cluster>:<stream>:p<M>:<role>`) does not hold
 * partition p's subjects.
 */
export function cutOf(c: CutInput): Cut {
  let at = c.snapshotSeq;
  let heldBy = 'snapshot';
  for (const [name, seq] of [...c.offsets].sort((a, b) => a[0].localeCompare(b[0]))) {
    const parts = name.split(':');
    if (parts.length >= 3 && !parts.includes(c.kubeStream)) continue;
    const named = parts.find((x) => /^p\d+$/.test(x));
    if (c.partition !== undefined && named !== undefined && named !== `p${c.partition}`) continue;
    if (seq < at) {
      at = seq;
      heldBy = `offset ${name}`;
    }
  }
  for (const d of [...c.durables].sort((a, b) => a.durable.localeCompare(b.durable))) {
    if (!d.filters.some((f) => filtersOverlap(f, c.filter))) continue;
    if (d.ackFloor < at) {
      at = d.ackFloor;
      heldBy = `durable ${d.durable}`;
    }
  }
  return { keepFrom: Math.max(1, at + 1), heldBy };
}

/**
 * The KUBE filter the consumer behind a hints offset reads, from its name (hintsOffsetName in
 * @slicemesh/contracts); undefined when the name is not one of those or its role reads no KUBE
 * filter we know (it then holds every scope, see cutOf). The compactor uses it to hold a scope
 * only where the reader still has messages of its own filter to read: a node consumer never reads
 * a partition's pods, and one whose last Service change is old must not hold the partition at
 * that change for ever.
 */
export function hintsOffsetFilter(name: string, c: { readonly cluster: string; readonly kubeStream: string; readonly names: SubjectOptions }): string | undefined {
  const o = parseHintsOffsetName(name);
  if (o === undefined || o.cluster !== c.cluster || o.stream !== c.kubeStream || !isHintsKubeRole(o.role)) return undefined;
  return hintsKubeFilter(o.role, c.cluster, o.partition, c.names);
}

/** One object to republish before the purge. */
export interface Carry {
  readonly subject: string;
  readonly row: KubeObjectRow;
  /** The subject's last sequence now (0: none): the publish expects it, so a newer message wins. */
  readonly expectLast: number;
  /** When the subject's last message was stored (ms), for the envelope's observedAt. */
  readonly lastTimeMs: number;
}

export interface CarryInput {
  /** The snapshot's objects and tombstones of the partition (no nodes). */
  readonly rows: readonly KubeObjectRow[];
  readonly subjectOf: (row: KubeObjectRow) => string;
  /** The last message per subject of the partition. */
  readonly tails: ReadonlyMap<string, SubjectTail>;
  readonly keepFrom: number;
  readonly nowMs: number;
  readonly tombstoneRetentionMs: number;
}

export interface CarryPlan {
  readonly carries: readonly Carry[];
  /** Subjects whose last message is below the cut but no snapshot row speaks for (other controllers' EndpointSlices, rejected input): read and decided by their stored body. */
  readonly unowned: readonly { readonly subject: string; readonly tail: SubjectTail }[];
  /** Deletes older than the retention that go with the purge. */
  readonly expiredTombstones: number;
}

/**
 * What must be carried forward before purging below `keepFrom`: every live object of the
 * snapshot whose subject's last message is below the cut (or that has none), and every
 * tombstone whose delete is below the cut but younger than the retention (carried as a delete).
 */
export function planCarries(c: CarryInput): CarryPlan {
  const carries: Carry[] = [];
  const spoken = new Set<string>();
  let expiredTombstones = 0;
  for (const row of c.rows) {
    const subject = c.subjectOf(row);
    spoken.add(subject);
    const tail = c.tails.get(subject);
    if (tail !== undefined && tail.seq >= c.keepFrom) continue;
    if (row.deleted) {
      if (tail === undefined) continue;
      if (c.nowMs - tail.timeMs >= c.tombstoneRetentionMs) {
        expiredTombstones++;
        continue;
      }
    }
    carries.push({ subject, row, expectLast: tail?.seq ?? 0, lastTimeMs: tail?.timeMs ?? c.nowMs });
  }
  const unowned = [...c.tails].filter(([s, t]) => !spoken.has(s) && t.seq < c.keepFrom).map(([subject, tail]) => ({ subject, tail }));
  carries.sort((a, b) => a.expectLast - b.expectLast || a.subject.localeCompare(b.subject));
  return { carries, unowned, expiredTombstones };
}

/** Whether the stored last message of a subject nobody's snapshot speaks for is carried: anything but an expired delete. */
export function carriesUnowned(body: unknown, ageMs: number, tombstoneRetentionMs: number): boolean {
  const type = typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
  return !(type === DELETED && ageMs >= tombstoneRetentionMs);
}

/**
 * Whether compacting is worth it: what goes (`below`: messages of the scope below the cut) must
 * be at least twice what is republished, so every compaction at least halves the old part and a
 * log of mostly quiet objects is not rewritten at every snapshot.
 */
export function worthCompacting(below: number, carries: number): boolean {
  return below > 0 && below >= 2 * carries;
}

/**
 * worthCompacting's two numbers bounded without reading the log, from the snapshot's live objects
 * (not tombstones, not Nodes) and the sequences the stream holds:
 * - below the cut go at most the stream's messages below it, whatever their subject;
 * - a live object is not carried only when its subject's last message is at or above the cut,
 *   and those are distinct messages, so at least `liveObjects - (messages at or above the cut)`
 *   are carried.
 * When the bounds already say "not worth it", so would the exact numbers (fewer below, more
 * carried), and the three reads of the partition's log they cost are saved.
 */
export function compactionBounds(liveObjects: number, keepFrom: number, range: { readonly first: number; readonly last: number }): { readonly belowAtMost: number; readonly carriesAtLeast: number } {
  const belowAtMost = Math.max(0, keepFrom - Math.max(range.first, 1));
  const atOrAbove = Math.max(0, range.last - Math.max(keepFrom, range.first) + 1);
  return { belowAtMost, carriesAtLeast: Math.max(0, liveObjects - atOrAbove) };
}

/** The msg id of a carried message: `<cluster>/<uid>/<rv>[/deleted]/carried-<S>`. */
export function carriedMsgId(cluster: string, row: Pick<KubeObjectRow, 'uid' | 'resourceVersion' | 'deleted'>, snapshotSeq: number): string {
  return `${cluster}/${row.uid}/${row.resourceVersion}${row.deleted ? '/deleted' : ''}/carried-${snapshotSeq}`;
}

/** The KUBE body of a carried object: the watcher's envelope with the stored object (same resourceVersion). */
export function carriedEnvelope(cluster: string, row: KubeObjectRow, observedAtMs: number): Record<string, unknown> {
  return { type: row.deleted ? DELETED : UPSERTED, cluster, kind: row.kind, object: row.body, observedAt: new Date(observedAtMs).toISOString() };
}
