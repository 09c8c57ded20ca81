// The hints service's ingest commit as ONE statement: the fence, the offset check, the rows of
// the batch (its slices, other controllers' slices, Services) and the new offset, where the
// transaction it replaces took BEGIN, the fence, the offset read, a delete and an upsert per
// table, the offset write and COMMIT — six round trips or more, each waiting on a busy event
// loop while the transaction held its connection ("idle in transaction" inside them was the
// state pg_stat_activity showed most often in the backbone bench's sustained run). Nodes, whose writes
// are guarded by resourceVersion, still go through the transaction.

import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { EndpointSlice, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import type { NamespacedName } from './hints-store.ts';
import type { LeaseClaim } from './leases.ts';
import { fenceHolds } from './leases.ts';

/** Upserts and deletes of one table, keyed by namespace/name. */
interface RowChanges<T> {
  readonly upserts: readonly T[];
  readonly deletes: readonly NamespacedName[];
}

export interface HintsIngestStatementRows {
  readonly slices?: RowChanges<EndpointSlice>;
  readonly foreignSlices?: RowChanges<EndpointSlice>;
  readonly services?: RowChanges<Service>;
}

/** Batches with more rows than this go through the transaction (one JSON text per table stays small). */
export const INGEST_STATEMENT_MAX_ROWS = 2000;

const keyOf = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

/**
 * The rows to write: the last upsert of each key, and only the deletes of keys not upserted in
 * the same batch (the transaction deleted first and upserted after; one statement may not touch
 * a row twice, so a key deleted then upserted is an upsert alone).
 */
function finalRows<T extends { readonly metadata: { readonly namespace?: string; readonly name: string } }>(c: RowChanges<T> | undefined): { upserts: T[]; deletes: NamespacedName[] } {
  if (c === undefined) return { upserts: [], deletes: [] };
  const upserts = new Map<string, T>();
  for (const u of c.upserts) upserts.set(keyOf(u.metadata.namespace, u.metadata.name), u);
  const deletes = new Map<string, NamespacedName>();
  for (const d of c.deletes) if (!upserts.has(keyOf(d.namespace, d.name))) deletes.set(keyOf(d.namespace, d.name), { namespace: d.namespace, name: d.name });
  return { upserts: [...upserts.values()], deletes: [...deletes.values()] };
}

/** The number of rows the statement would write. */
export function ingestStatementRows(rows: HintsIngestStatementRows): number {
  return [rows.slices, rows.foreignSlices, rows.services].reduce((n, c) => n + (c === undefined ? 0 : c.upserts.length + c.deletes.length), 0);
}

/**
 * One table's writes. The bodies' text is kept as written (json, not jsonb: migration 0004); the
 * slice tables also keep the Service a slice belongs to (its service-name label).
 */
function tableWrites(table: 'hint_slices' | 'hint_foreign_slices' | 'hint_services', cluster: string, c: RowChanges<EndpointSlice | Service> | undefined, go: RawBuilder<boolean>) {
  const { upserts, deletes } = finalRows(c);
  const withService = table !== 'hint_services';
  const service = withService ? sql.raw(', service') : sql.raw('');
  const rows = JSON.stringify(upserts.map((s) => ({ namespace: s.metadata.namespace ?? '', name: s.metadata.name, ...(withService ? { service: s.metadata.labels?.[LABEL_SERVICE_NAME] ?? '' } : {}), body: s })));
  return {
    gone: sql`delete from ${sql.table(table)} h using json_to_recordset(${JSON.stringify(deletes)}::json) as d(namespace text, name text)
    where ${go} and h.cluster = ${cluster} and h.namespace = d.namespace and h.name = d.name`,
    put: sql`insert into ${sql.table(table)} (cluster, namespace, name${service}, body)
    select ${cluster}, namespace, name${service}, body from json_to_recordset(${rows}::json) as s(namespace text, name text${withService ? sql.raw(', service text') : sql.raw('')}, body json) where ${go}
    on conflict (cluster, namespace, name) do update set ${withService ? sql.raw('service = excluded.service, ') : sql.raw('')}body = excluded.body`,
  };
}

/**
 * One statement: `held` is whether every claim of `fence` holds, `fresh` whether `seq` is past
 * the consumer's stored offset; the rows and the offset are written only when both are true.
 * The writes are data-modifying CTEs, which run whether or not the final select reads them.
 */
export function hintsIngestStatement(cluster: string, consumer: string, seq: number, rows: HintsIngestStatementRows, fence: readonly LeaseClaim[]) {
  const go = sql<boolean>`(select held and fresh from checks)`;
  const slices = tableWrites('hint_slices', cluster, rows.slices, go);
  const foreign = tableWrites('hint_foreign_slices', cluster, rows.foreignSlices, go);
  const services = tableWrites('hint_services', cluster, rows.services, go);
  return sql<{ held: boolean; fresh: boolean }>`with
  checks as (select ${fenceHolds(fence)} as held, ${seq}::bigint > coalesce((select last_seq from consumer_offsets where consumer = ${consumer}), 0) as fresh),
  slices_gone as (${slices.gone}),
  slices_put as (${slices.put}),
  foreign_gone as (${foreign.gone}),
  foreign_put as (${foreign.put}),
  services_gone as (${services.gone}),
  services_put as (${services.put}),
  moved as (insert into consumer_offsets (consumer, last_seq) select ${consumer}, ${seq} where ${go}
    on conflict (consumer) do update set last_seq = excluded.last_seq where consumer_offsets.last_seq < excluded.last_seq)
select held, fresh from checks`;
}
