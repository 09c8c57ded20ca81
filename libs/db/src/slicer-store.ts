// The slicer's durable record. The slicer keeps its projection in memory; Postgres holds what it
// restarts from: the objects as of each consumer's offset (written with that offset in one
// transaction) and the slices it wrote (written with their SLICES outbox rows and replay records
// in one transaction). Each write is one transaction per batch, multi-row statements inside.

import { sql } from 'kysely';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@slicemesh/model';
import { chunks } from './batches.ts';
import type { KubeObjectRow } from './object-store.ts';
import { newestPerKey, objectRowOf, upsertObjects, upsertObjectsStatement } from './object-store.ts';
import { advanceOffset } from './offsets.ts';
import type { OutboxMessage } from './outbox.ts';
import { appendOutbox } from './outbox.ts';
import type { ReconcileRecord } from './reconcile-log.ts';
import { recordReconciles } from './reconcile-log.ts';
import type { Db, StoredKind, Trx } from './schema.ts';
import type { LeaseClaim } from './leases.ts';
import { FencedError, assertFence, fenceHolds } from './leases.ts';
import { JsonTexts } from './shared-json.ts';

export interface SlicerSnapshot {
  /** Last applied KUBE sequence per consumer asked for (0 when none). */
  readonly offsets: ReadonlyMap<string, number>;
  /** Every stored object and tombstone of the cluster, in (kind, namespace, name) order. */
  readonly objects: readonly KubeObjectRow[];
  /** Every stored slice of the cluster, by namespace and name. */
  readonly slices: readonly EndpointSlice[];
}

/**
 * Reads what a slicer restarts from, in one snapshot (REPEATABLE READ), so objects, slices and
 * offsets agree with each other.
 */
export async function loadSlicerSnapshot(db: Db, cluster: string, consumers: readonly string[], opts: { readonly pageSize?: number } = {}): Promise<SlicerSnapshot> {
  const pageSize = opts.pageSize ?? SNAPSHOT_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`snapshot page size must be a positive integer, got ${pageSize}`);
  return db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    const offsetRows = consumers.length === 0 ? [] : await trx.selectFrom('consumer_offsets').select(['consumer', 'last_seq']).where('consumer', 'in', consumers).execute();
    const offsets = new Map(consumers.map((c) => [c, 0]));
    for (const r of offsetRows) offsets.set(r.consumer, Number(r.last_seq));
    // The pages below walk the primary keys. Without statistics (a table never analysed, as
    // with autovacuum off) the planner would rather sort every row of the cluster per page.
    await sql`set local enable_sort = off`.execute(trx);
    const objects: KubeObjectRow[] = [];
    await readPages<ObjectTextRow>(
      (after, limit) => sql<ObjectTextRow>`
        select kind, namespace, name, uid, resource_version, deleted, body::text as body, kube_seq from kube_objects
        where cluster = ${cluster} and (kind, namespace, name) > (${after?.kind ?? ''}, ${after?.namespace ?? ''}, ${after?.name ?? ''})
        order by kind, namespace, name limit ${limit}`.execute(trx),
      pageSize,
      (r) => objects.push(objectRowOf({ ...r, cluster, body: JSON.parse(r.body) as unknown })),
    );
    const slices: EndpointSlice[] = [];
    await readPages<{ namespace: string; name: string; body: string }>(
      (after, limit) => sql<{ namespace: string; name: string; body: string }>`
        select namespace, name, body::text as body from endpoint_slices
        where cluster = ${cluster} and (namespace, name) > (${after?.namespace ?? ''}, ${after?.name ?? ''})
        order by namespace, name limit ${limit}`.execute(trx),
      pageSize,
      (r) => slices.push(JSON.parse(r.body) as EndpointSlice),
    );
    return { offsets, objects, slices };
  });
}

type ObjectTextRow = { kind: StoredKind; namespace: string; name: string; uid: string; resource_version: string; deleted: boolean; body: string; kube_seq: string };

/** Rows per page of a snapshot read. */
const SNAPSHOT_PAGE = 5000;

/**
 * Reads a table in key order, a page at a time, each page asked for before the previous one is
 * parsed, so Postgres produces the next while this process parses. Against one query for the
 * whole table (measured on a restart with 100k pods): the server walks the primary key instead
 * of sorting the table on disk first, and each page's body strings are parsed and dropped while
 * young instead of being held, 100k of them, until the result is complete.
 */
async function readPages<R>(page: (after: R | undefined, limit: number) => Promise<{ rows: R[] }>, size: number, take: (row: R) => void): Promise<void> {
  let next: Promise<{ rows: R[] }> | undefined = page(undefined, size);
  while (next !== undefined) {
    const rows: R[] = (await next).rows;
    next = rows.length === size ? page(rows[rows.length - 1], size) : undefined;
    for (const r of rows) take(r);
  }
}

export interface IngestCommit {
  /** The offset name of the consumer whose batch this is. */
  readonly consumer: string;
  /** The last KUBE sequence of the batch. */
  readonly offset: number;
  /** Objects and tombstones to store (older versions than stored are skipped by the guard). */
  readonly rows: readonly KubeObjectRow[];
  /** The lease of the batch's partition: without it nothing is written (FencedError). */
  readonly fence?: readonly LeaseClaim[];
}

/**
 * Stores one ingested batch and advances its consumer's offset, in one transaction. Throws
 * FencedError, having written nothing, when the batch's lease no longer holds.
 */
export async function commitIngestBatch(db: Db, batch: IngestCommit): Promise<void> {
  const rows = newestPerKey(batch.rows);
  const fence = batch.fence ?? [];
  if (rows.length > SINGLE_STATEMENT_ROWS) {
    await db.transaction().execute(async (trx) => {
      await assertFence(trx, fence);
      await upsertObjects(trx, rows);
      await advanceOffset(trx, batch.consumer, batch.offset);
    });
    return;
  }
  // One statement is one implicit transaction and one round trip (BEGIN, the fence, two writes
  // and COMMIT would be five): the fence, the objects and the offset still go together.
  const held = sql<boolean>`(select ok from fence)`;
  const offset = sql`insert into consumer_offsets (consumer, last_seq) select ${batch.consumer}, ${batch.offset} where ${held}
on conflict (consumer) do update set last_seq = excluded.last_seq where consumer_offsets.last_seq < excluded.last_seq`;
  const objects = rows.length === 0 ? sql`select 1 where false` : sql`${upsertObjectsStatement(rows, held)} returning 1`;
  const r = await sql<{ ok: boolean }>`with fence as (select ${fenceHolds(fence)} as ok), objects as (${objects}), moved as (${offset} returning 1)
select (select ok from fence) as ok, (select count(*) from objects) as objects, (select count(*) from moved) as moved`.execute(db);
  if (r.rows[0]?.ok !== true) throw new FencedError(fence);
}

/** Batches up to this many rows are written by one statement. */
const SINGLE_STATEMENT_ROWS = 2000;

export interface SliceWrites {
  readonly cluster: string;
  /** Slices to store as given: their bodies carry the uid and generation the slicer assigned. */
  readonly upserts: readonly EndpointSlice[];
  readonly deletes: readonly { readonly namespace: string; readonly name: string }[];
  readonly outbox: readonly OutboxMessage[];
  readonly records: readonly ReconcileRecord[];
  /** The leases of the batch's partitions: without them nothing is written (FencedError). */
  readonly fence?: readonly LeaseClaim[];
}

/**
 * Writes one batch of reconciles (slices, their outbox messages, replay records) atomically: as
 * ONE statement when it is small and every outbox id is a plain string or a prefix + row id (one
 * round trip instead of five to seven), otherwise in one transaction of several statements.
 * Throws FencedError, having written nothing, when a lease in `w.fence` no longer holds.
 */
export async function commitSliceWrites(db: Db, w: SliceWrites): Promise<void> {
  const small = w.upserts.length + w.deletes.length + w.outbox.length + w.records.length <= 2000;
  if (small && w.outbox.every((o) => typeof o.msgId !== 'function')) {
    const r = await sliceWritesStatement(w).execute(db);
    if (r.rows[0]?.ok !== true) throw new FencedError(w.fence ?? []);
    return;
  }
  await db.transaction().execute(async (trx) => {
    await assertFence(trx, w.fence ?? []);
    await deleteSlices(trx, w.cluster, w.deletes);
    await upsertSlices(trx, w.cluster, w.upserts);
    await appendOutbox(trx, w.outbox);
    await recordReconciles(trx, w.records);
  });
}

/** commitSliceWrites as one statement of data-modifying CTEs (their rows never overlap). */
function sliceWritesStatement(w: SliceWrites) {
  // A slice is serialised once, for its row and for the outbox message that carries it.
  const texts = new JsonTexts();
  const slices = `[${w.upserts.map((s) => {
    const { body, ...fields } = sliceRow(s);
    return texts.objectWith(fields, 'body', body);
  }).join(',')}]`;
  const deletes = JSON.stringify(w.deletes.map((d) => ({ namespace: d.namespace, name: d.name })));
  const outbox = texts.stringify(w.outbox.map((o) => ({
    subject: o.subject,
    msg_id: typeof o.msgId === 'string' ? o.msgId : null,
    prefix: typeof o.msgId === 'object' ? o.msgId.prefix : null,
    payload: o.payload,
  })));
  const records = JSON.stringify(w.records.map((r) => ({
    namespace: r.namespace, service: r.service, kube_seq_from: r.kubeSeqFrom, kube_seq_to: r.kubeSeqTo, reconcile_id: r.reconcileId,
    created: r.created, updated: r.updated, deleted: r.deleted, settings: r.settings ?? null,
  })));
  const held = sql<boolean>`(select ok from fence)`;
  return sql<{ ok: boolean }>`with
  fence as (select ${fenceHolds(w.fence ?? [])} as ok),
  gone as (
    delete from endpoint_slices e using jsonb_to_recordset(${deletes}::jsonb) as d(namespace text, name text)
    where ${held} and e.cluster = ${w.cluster} and e.namespace = d.namespace and e.name = d.name returning 1),
  written as (
    insert into endpoint_slices (cluster, namespace, name, service, address_type, managed_by, generation, body)
    select ${w.cluster}, namespace, name, service, address_type, managed_by, generation, body
    from jsonb_to_recordset(${slices}::jsonb) as s(namespace text, name text, service text, address_type text, managed_by text, generation int, body jsonb)
    where ${held}
    on conflict (cluster, namespace, name) do update set service = excluded.service, address_type = excluded.address_type,
      managed_by = excluded.managed_by, generation = excluded.generation, body = excluded.body
    returning 1),
  numbered as (
    select nextval(pg_get_serial_sequence('outbox', 'id')) as id, e.subject, e.msg_id, e.prefix, e.payload, e.n
    from rows from (json_to_recordset(${outbox}::json) as (subject text, msg_id text, prefix text, payload json)) with ordinality as e(subject, msg_id, prefix, payload, n)
    where ${held}),
  queued as (
    insert into outbox (id, subject, msg_id, payload)
    select id, subject, coalesce(msg_id, prefix || id::text), payload from numbered order by n returning 1),
  recorded as (
    insert into reconciles (cluster, namespace, service, kube_seq_from, kube_seq_to, reconcile_id, created, updated, deleted, settings)
    select ${w.cluster}, namespace, service, kube_seq_from, kube_seq_to, reconcile_id, created, updated, deleted, settings
    from jsonb_to_recordset(${records}::jsonb) as r(namespace text, service text, kube_seq_from bigint, kube_seq_to bigint, reconcile_id text, created int, updated int, deleted int, settings jsonb)
    where ${held}
    returning 1)
select (select ok from fence) as ok, (select count(*) from gone) as gone, (select count(*) from written) as written, (select count(*) from queued) as queued, (select count(*) from recorded) as recorded`;
}

async function deleteSlices(trx: Trx, cluster: string, keys: SliceWrites['deletes']): Promise<void> {
  for (const part of chunks(keys)) {
    const pairs = sql.join(part.map((k) => sql`(${k.namespace}, ${k.name})`));
    await sql`delete from endpoint_slices where cluster = ${cluster} and (namespace, name) in (${pairs})`.execute(trx);
  }
}

function sliceRow(s: EndpointSlice) {
  const namespace = s.metadata.namespace ?? '';
  const service = s.metadata.labels?.[LABEL_SERVICE_NAME] ?? '';
  if (!s.metadata.name || !namespace || !service) throw new Error(`EndpointSlice ${namespace}/${s.metadata.name}: name, namespace and ${LABEL_SERVICE_NAME} are required`);
  return {
    namespace,
    name: s.metadata.name,
    service,
    address_type: s.addressType,
    managed_by: s.metadata.labels?.[LABEL_MANAGED_BY] ?? '',
    generation: s.metadata.generation ?? 1,
    body: s,
  };
}

async function upsertSlices(trx: Trx, cluster: string, slices: readonly EndpointSlice[]): Promise<void> {
  for (const part of chunks(slices)) {
    await trx
      .insertInto('endpoint_slices')
      .values(part.map((s) => {
        const r = sliceRow(s);
        return { cluster, ...r, body: JSON.stringify(r.body) };
      }))
      .onConflict((oc) => oc.columns(['cluster', 'namespace', 'name']).doUpdateSet((eb) => ({
        service: eb.ref('excluded.service'),
        address_type: eb.ref('excluded.address_type'),
        managed_by: eb.ref('excluded.managed_by'),
        generation: eb.ref('excluded.generation'),
        body: eb.ref('excluded.body'),
      })))
      .execute();
  }
}
