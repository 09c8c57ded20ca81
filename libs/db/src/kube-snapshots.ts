// Snapshots of one KUBE partition's projection (migration 0006), what a replay and a compactor
// read back from them, and the record of how far KUBE was purged (kube_log_cuts).
//
// A snapshot is copied by the partition's owner from one exported REPEATABLE READ view, in
// short transactions (writeKubeSnapshot says why), and counts once a last transaction, holding
// its lease (assertFence), marked it complete: the partition's kube_objects rows and
// endpoint_slices rows are written by the owner alone, so what the copy reads is the state at
// the partition consumer's committed offset. The nodes come from the owner's memory (the caller), because the
// node rows in kube_objects are written by every owner's node consumers and may be ahead of what
// this owner's reconciles read. `reconciles_to` (max reconciles.id at the snapshot) tells which
// replay records the slices already hold.

import { sql } from 'kysely';
import type { EndpointSlice } from '@slicemesh/model';
import type { KubeObjectRow } from './object-store.ts';
import { objectRowOf } from './object-store.ts';
import type { LeaseClaim } from './leases.ts';
import { assertFence } from './leases.ts';
import type { Db, StoredKind, Trx } from './schema.ts';
import { chunks } from './batches.ts';

/** Snapshots kept per (cluster, partition): the newest this many. */
export const SNAPSHOTS_KEPT = 2;

export interface KubeSnapshotInput {
  readonly cluster: string;
  readonly partition: number;
  readonly partitions: number;
  /** The partition consumer's offset name; its committed value must equal `seq`. */
  readonly consumer: string;
  /** The partition consumer's offset the snapshot reflects. */
  readonly seq: number;
  /** The newest node message `nodes` reflect. */
  readonly nodesSeq: number;
  /** Nodes and node tombstones as of `nodesSeq`. */
  readonly nodes: readonly KubeObjectRow[];
  /** Whether a namespace belongs to the partition. */
  readonly ownsNamespace: (namespace: string) => boolean;
  /** The partition's lease: without it nothing is written (FencedError). */
  readonly fence: readonly LeaseClaim[];
  /** How many to keep (default SNAPSHOTS_KEPT). */
  readonly keep?: number;
}

export interface KubeSnapshotHeader {
  readonly id: number;
  readonly cluster: string;
  readonly partition: number;
  readonly partitions: number;
  readonly seq: number;
  readonly nodesSeq: number;
  readonly reconcilesTo: number;
  readonly objects: number;
  readonly slices: number;
  readonly takenAt: Date;
}

export interface KubeSnapshot extends KubeSnapshotHeader {
  /** Objects and tombstones (nodes included, namespace ''), in (kind, namespace, name) order. */
  readonly rows: readonly KubeObjectRow[];
  readonly sliceBodies: readonly EndpointSlice[];
}

/** Thrown when the committed offset is not the one the caller's memory says it snapshots. */
export class SnapshotOffsetMismatch extends Error {
  override readonly name = 'SnapshotOffsetMismatch';
}

/** Options of writeKubeSnapshot. */
export interface KubeSnapshotCopyOptions {
  /** Rows copied per transaction. Defaults to 5000. */
  readonly chunkRows?: number;
  /** Awaited after each chunk committed, with the rows copied so far (progress; tests). */
  readonly onCopied?: (rows: number) => void | Promise<void>;
}

/** An id pg_export_snapshot() returns, e.g. 00000003-0000001B-1 (it goes into SQL as a literal). */
const SNAPSHOT_ID = /^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i;

/**
 * Writes a snapshot of one partition (see the file comment) and drops all but the newest
 * `keep`. One REPEATABLE READ transaction fixes the view and exports it (pg_export_snapshot);
 * being read-only it takes no transaction id. The rows are copied in chunks of `chunkRows`,
 * each in a short transaction of its own that imports that view, so every chunk reads the state
 * at the committed offset. Why not one transaction, as before: a transaction that writes holds
 * back every outbox row committed after it started (the relay publishes only rows older than the
 * oldest open writer), so a copy of 100k objects (1-2.6 s) stalled SLICES for as long. A last
 * short transaction checks the lease (assertFence), marks the snapshot complete and drops the
 * older ones; a copy that fails removes what it wrote. `onConsistent` is called once the view
 * is fixed, so a caller that paused its writers can let them go on while the rows are copied.
 * Throws FencedError when the lease no longer holds (the snapshot then never counts),
 * SnapshotOffsetMismatch when the committed offset is not `seq`.
 */
export async function writeKubeSnapshot(db: Db, s: KubeSnapshotInput, onConsistent: () => void = () => {}, o: KubeSnapshotCopyOptions = {}): Promise<KubeSnapshotHeader> {
  const chunkRows = o.chunkRows ?? 5000;
  let copied = 0;
  const progress = async (n: number): Promise<void> => {
    copied += n;
    await o.onCopied?.(copied);
  };
  // The header first, so that the view (and every chunk reading it) sees the row the copied rows
  // refer to; it counts for nothing until marked complete.
  const header = await sql<{ id: string; taken_at: Date }>`
    insert into kube_snapshots (cluster, partition, partitions, seq, nodes_seq, reconciles_to, objects, slices)
    values (${s.cluster}, ${s.partition}, ${s.partitions}, ${s.seq}, ${s.nodesSeq}, 0, 0, 0) returning id, taken_at`.execute(db).catch((err: unknown) => {
    onConsistent();
    throw err;
  });
  const id = Number(header.rows[0]?.id);
  const written = await db.transaction().setIsolationLevel('repeatable read').execute(async (view) => {
    try {
      const head = await sql<{ last_seq: string | null; reconciles_to: string | null; snapshot: string }>`
        select (select last_seq from consumer_offsets where consumer = ${s.consumer}) as last_seq,
               (select max(id) from reconciles) as reconciles_to, pg_export_snapshot() as snapshot`.execute(view);
      onConsistent();
      const committed = Number(head.rows[0]?.last_seq ?? 0);
      if (committed !== s.seq) throw new SnapshotOffsetMismatch(`${s.consumer}: committed offset ${committed}, the snapshot was asked at ${s.seq}`);
      const reconcilesTo = Number(head.rows[0]?.reconciles_to ?? 0);
      const snapshot = head.rows[0]?.snapshot ?? '';
      if (!SNAPSHOT_ID.test(snapshot)) throw new Error(`pg_export_snapshot() returned ${JSON.stringify(snapshot)}`);

      const objectNs = await sql<{ namespace: string }>`select distinct namespace from kube_objects where cluster = ${s.cluster} and kind <> 'Node'`.execute(view);
      const sliceNs = await sql<{ namespace: string }>`select distinct namespace from endpoint_slices where cluster = ${s.cluster}`.execute(view);
      const namespaces = [...new Set([...objectNs.rows, ...sliceNs.rows].map((r) => r.namespace))].filter((ns) => s.ownsNamespace(ns)).sort();

      /**
       * Copies chunk after chunk, each in a short transaction reading the exported view, until one
       * comes back short; `step` copies the rows after key `from` and names its last key. Returns
       * the rows copied.
       */
      const copyAll = async <K>(step: (trx: Trx, from: K | undefined) => Promise<{ n: number; last: K | undefined }>): Promise<number> => {
        let total = 0;
        for (let from: K | undefined; ; ) {
          const after = from;
          const r = await db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
            await sql`set transaction snapshot ${sql.lit(snapshot)}`.execute(trx);
            // Each chunk continues along the primary key. Without statistics (this Postgres runs
            // with autovacuum off) the planner otherwise sorts the whole partition for every chunk.
            await sql`set local enable_sort = off`.execute(trx);
            return step(trx, after);
          });
          total += r.n;
          await progress(r.n);
          if (r.n < chunkRows || r.last === undefined) return total;
          from = r.last;
        }
      };

      let objectCount = await copyAll<{ kind: string; namespace: string; name: string }>(async (trx, from) => {
        const rows = await sql<{ kind: string; namespace: string; name: string; n: string }>`with
  part as (select kind, namespace, name, uid, resource_version, deleted, body, kube_seq from kube_objects
    where cluster = ${s.cluster} and kind <> 'Node' and namespace = any(${namespaces}::text[])
      ${from === undefined ? sql`` : sql`and (kind, namespace, name) > (${from.kind}, ${from.namespace}, ${from.name})`}
    order by kind, namespace, name limit ${chunkRows}),
  copied as (insert into kube_snapshot_objects (snapshot_id, kind, namespace, name, uid, resource_version, deleted, body, kube_seq)
    select ${id}, kind, namespace, name, uid, resource_version, deleted, body, kube_seq from part returning 1)
select kind, namespace, name, (select count(*) from copied) as n from part order by kind desc, namespace desc, name desc limit 1`.execute(trx);
        const last = rows.rows[0];
        return { n: Number(last?.n ?? 0), last: last === undefined ? undefined : { kind: last.kind, namespace: last.namespace, name: last.name } };
      });
      for (const part of chunks(s.nodes, Math.min(2000, chunkRows))) {
        const payload = JSON.stringify(part.map((r) => ({ kind: r.kind, namespace: r.namespace, name: r.name, uid: r.uid, resource_version: r.resourceVersion, deleted: r.deleted, body: r.body, kube_seq: r.kubeSeq })));
        await sql`insert into kube_snapshot_objects (snapshot_id, kind, namespace, name, uid, resource_version, deleted, body, kube_seq)
          select ${id}, kind, namespace, name, uid, resource_version, deleted, body, kube_seq
          from jsonb_to_recordset(${payload}::jsonb) as r(kind text, namespace text, name text, uid text, resource_version text, deleted boolean, body jsonb, kube_seq bigint)`.execute(db);
        objectCount += part.length;
        await progress(part.length);
      }
      const sliceCount = await copyAll<{ namespace: string; name: string }>(async (trx, from) => {
        const rows = await sql<{ namespace: string; name: string; n: string }>`with
  part as (select namespace, name, service, body from endpoint_slices
    where cluster = ${s.cluster} and namespace = any(${namespaces}::text[]) and body is not null
      ${from === undefined ? sql`` : sql`and (namespace, name) > (${from.namespace}, ${from.name})`}
    order by namespace, name limit ${chunkRows}),
  copied as (insert into kube_snapshot_slices (snapshot_id, namespace, name, service, body) select ${id}, namespace, name, service, body from part returning 1)
select namespace, name, (select count(*) from copied) as n from part order by namespace desc, name desc limit 1`.execute(trx);
        const last = rows.rows[0];
        return { n: Number(last?.n ?? 0), last: last === undefined ? undefined : { namespace: last.namespace, name: last.name } };
      });
      await sql`update kube_snapshots set reconciles_to = ${reconcilesTo}, objects = ${objectCount}, slices = ${sliceCount} where id = ${id}`.execute(db);
      return { id, reconcilesTo, objectCount, sliceCount, takenAt: header.rows[0]?.taken_at ?? new Date() };
    } finally {
      onConsistent(); // also when it failed: the caller must not wait for ever
    }
  }).catch(async (err: unknown) => {
    // An incomplete snapshot never counts; its rows go with it (cascade).
    await sql`delete from kube_snapshots where id = ${id} and not complete`.execute(db).catch(() => {});
    throw err;
  });
  await db.transaction().execute(async (trx) => {
    await assertFence(trx, s.fence);
    await sql`update kube_snapshots set complete = true where id = ${written.id}`.execute(trx);
    await sql`delete from kube_snapshots where cluster = ${s.cluster} and partition = ${s.partition} and id not in (
      select id from kube_snapshots where cluster = ${s.cluster} and partition = ${s.partition} and complete order by seq desc, id desc limit ${s.keep ?? SNAPSHOTS_KEPT})`.execute(trx);
  });
  return {
    id: written.id,
    cluster: s.cluster,
    partition: s.partition,
    partitions: s.partitions,
    seq: s.seq,
    nodesSeq: s.nodesSeq,
    reconcilesTo: written.reconcilesTo,
    objects: written.objectCount,
    slices: written.sliceCount,
    takenAt: written.takenAt,
  };
}

type HeaderRow = { id: string; cluster: string; partition: number; partitions: number; seq: string; nodes_seq: string; reconciles_to: string; objects: number; slices: number; taken_at: Date };

function headerOf(r: HeaderRow): KubeSnapshotHeader {
  return {
    id: Number(r.id),
    cluster: r.cluster,
    partition: r.partition,
    partitions: r.partitions,
    seq: Number(r.seq),
    nodesSeq: Number(r.nodes_seq),
    reconcilesTo: Number(r.reconciles_to),
    objects: r.objects,
    slices: r.slices,
    takenAt: r.taken_at,
  };
}

const HEADER_COLUMNS = sql`id, cluster, partition, partitions, seq, nodes_seq, reconciles_to, objects, slices, taken_at`;

/** Every kept snapshot's header of `cluster`, newest first per partition ([] when none). */
export async function listKubeSnapshots(db: Db, cluster: string): Promise<KubeSnapshotHeader[]> {
  const r = await sql<HeaderRow>`select ${HEADER_COLUMNS}
    from kube_snapshots where cluster = ${cluster} and complete order by partition, seq desc, id desc`.execute(db);
  return r.rows.map(headerOf);
}

/** The newest complete snapshot's header of `partition`; undefined when none. */
async function newestHeader(db: Db, cluster: string, partition: number): Promise<KubeSnapshotHeader | undefined> {
  const r = await sql<HeaderRow>`select ${HEADER_COLUMNS}
    from kube_snapshots where cluster = ${cluster} and partition = ${partition} and complete order by seq desc, id desc limit 1`.execute(db);
  const row = r.rows[0];
  return row === undefined ? undefined : headerOf(row);
}

export interface SnapshotReadOptions {
  /** Only this namespace's objects and slices (nodes are always included). */
  readonly namespace?: string;
  /** Only this Service's slices (with `namespace`). */
  readonly service?: string;
  /** Leave the nodes out. */
  readonly withoutNodes?: boolean;
}

/** The newest snapshot of a partition with its rows (see SnapshotReadOptions); undefined when none. */
export async function loadKubeSnapshot(db: Db, cluster: string, partition: number, o: SnapshotReadOptions = {}): Promise<KubeSnapshot | undefined> {
  const header = await newestHeader(db, cluster, partition);
  if (header === undefined) return undefined;
  const ns = o.namespace;
  const objects = await sql<{ kind: StoredKind; namespace: string; name: string; uid: string; resource_version: string; deleted: boolean; body: string; kube_seq: string }>`
    select kind, namespace, name, uid, resource_version, deleted, body::text as body, kube_seq from kube_snapshot_objects
    where snapshot_id = ${header.id}
      and ((kind = 'Node' and ${o.withoutNodes !== true}) or (kind <> 'Node' and (${ns ?? null}::text is null or namespace = ${ns ?? null})))
    order by kind, namespace, name`.execute(db);
  const slices = await sql<{ body: string }>`select body::text as body from kube_snapshot_slices
    where snapshot_id = ${header.id} and (${ns ?? null}::text is null or namespace = ${ns ?? null}) and (${o.service ?? null}::text is null or service = ${o.service ?? null})
    order by namespace, name`.execute(db);
  return {
    ...header,
    rows: objects.rows.map((r) => objectRowOf({ ...r, cluster, body: JSON.parse(r.body) as unknown })),
    sliceBodies: slices.rows.map((r) => JSON.parse(r.body) as EndpointSlice),
  };
}

/**
 * The newest complete snapshot's header of `partition`, with how many of its objects are live
 * (not tombstones) and not Nodes, counted in Postgres: what a compaction can decide by before it
 * reads the rows. undefined when the partition has none.
 */
export async function kubeSnapshotSummary(db: Db, cluster: string, partition: number): Promise<(KubeSnapshotHeader & { readonly liveObjects: number }) | undefined> {
  const header = await newestHeader(db, cluster, partition);
  if (header === undefined) return undefined;
  const live = await sql<{ n: string }>`select count(*) as n from kube_snapshot_objects where snapshot_id = ${header.id} and kind <> 'Node' and not deleted`.execute(db);
  return { ...header, liveObjects: Number(live.rows[0]?.n ?? 0) };
}

/** The scope name of a partition's subjects in kube_log_cuts. */
export function partitionScope(partition: number): string {
  return `p${partition}`;
}
/** The scope name of the node subjects in kube_log_cuts. */
export const NODES_SCOPE = 'nodes';

/** The first sequence kept per scope (`p<N>`, `nodes`) of `cluster`; a scope never purged is absent. */
export async function loadKubeLogCuts(db: Db, cluster: string): Promise<Map<string, number>> {
  const r = await sql<{ scope: string; keep_from: string }>`select scope, keep_from from kube_log_cuts where cluster = ${cluster}`.execute(db);
  return new Map(r.rows.map((x) => [x.scope, Number(x.keep_from)]));
}

/**
 * Records that messages of `scope` below `keepFrom` may be gone (before the purge: a cut recorded
 * and not yet purged only makes a replay start from a snapshot). Never moves a cut back.
 */
export async function recordKubeLogCut(db: Db, cluster: string, scope: string, keepFrom: number, purged = 0): Promise<void> {
  await sql`insert into kube_log_cuts (cluster, scope, keep_from, purged) values (${cluster}, ${scope}, ${keepFrom}, ${purged})
    on conflict (cluster, scope) do update set keep_from = greatest(kube_log_cuts.keep_from, excluded.keep_from),
      purged = kube_log_cuts.purged + excluded.purged, updated_at = now()`.execute(db);
}

/** consumer_offsets rows whose name starts with `prefix` (e.g. `hints:`), by name. */
export async function offsetsWithPrefix(db: Db, prefix: string): Promise<Map<string, number>> {
  const r = await sql<{ consumer: string; last_seq: string }>`select consumer, last_seq from consumer_offsets where starts_with(consumer, ${prefix})`.execute(db);
  return new Map(r.rows.map((x) => [x.consumer, Number(x.last_seq)]));
}

/** The stored node tombstones of `cluster` (deleted Nodes), by name. */
export async function loadNodeTombstones(db: Db, cluster: string): Promise<KubeObjectRow[]> {
  const r = await sql<{ kind: StoredKind; namespace: string; name: string; uid: string; resource_version: string; deleted: boolean; body: string; kube_seq: string }>`
    select kind, namespace, name, uid, resource_version, deleted, body::text as body, kube_seq from kube_objects
    where cluster = ${cluster} and kind = 'Node' and namespace = '' and deleted order by name`.execute(db);
  return r.rows.map((x) => objectRowOf({ ...x, cluster, body: JSON.parse(x.body) as unknown }));
}
