// The hints service's state: its copies of slices, nodes and services (as last received), the
// decision per service and address type, and what it last put in the views KV bucket, so a view
// that disappears from the computed set can be deleted from KV.

import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { EndpointSlice, KubeEvent, Node, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import { chunks } from './batches.ts';
import type { Db, Trx } from './schema.ts';

export interface HintDecision {
  readonly namespace: string;
  readonly service: string;
  readonly addressType: string;
  readonly enabled: boolean;
  /** The topology mode / traffic distribution the decision was made under, e.g. 'Auto'. */
  readonly mode: string;
  readonly event: KubeEvent | null;
  readonly reason: string;
  readonly decidedAt: Date;
}

export interface PublishedView {
  readonly key: string;
  readonly revision: number;
  /** sha256 (hex) of the JSON text put; null when unknown. */
  readonly digest: string | null;
}

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

// ---- slices: ours (hint_slices) and other controllers' (hint_foreign_slices), same columns ----

type SliceTable = 'hint_slices' | 'hint_foreign_slices';

async function upsertSlicesInto(trx: Trx, table: SliceTable, cluster: string, slices: readonly EndpointSlice[]): Promise<void> {
  for (const part of chunks(slices)) {
    await trx
      .insertInto(table)
      .values(part.map((s) => ({
        cluster,
        namespace: s.metadata.namespace ?? '',
        name: s.metadata.name,
        service: s.metadata.labels?.[LABEL_SERVICE_NAME] ?? '',
        body: JSON.stringify(s),
      })))
      .onConflict((oc) => oc.columns(['cluster', 'namespace', 'name']).doUpdateSet((eb) => ({ service: eb.ref('excluded.service'), body: eb.ref('excluded.body') })))
      .execute();
  }
}

async function deleteSlicesFrom(trx: Trx, table: SliceTable, cluster: string, namespace: string, names: readonly string[]): Promise<void> {
  for (const part of chunks(names)) {
    await trx.deleteFrom(table).where('cluster', '=', cluster).where('namespace', '=', namespace).where('name', 'in', part).execute();
  }
}

/** Stores slices as received (keyed by namespace/name); the service comes from the service-name label. */
export function upsertHintSlices(trx: Trx, cluster: string, slices: readonly EndpointSlice[]): Promise<void> {
  return upsertSlicesInto(trx, 'hint_slices', cluster, slices);
}

export function deleteHintSlices(trx: Trx, cluster: string, namespace: string, names: readonly string[]): Promise<void> {
  return deleteSlicesFrom(trx, 'hint_slices', cluster, namespace, names);
}

/** Slices of a cluster, optionally narrowed to a namespace and service, sorted by namespace/name; [] when none. */
export async function loadHintSlices(db: Db, cluster: string, filter: { readonly namespace?: string; readonly service?: string } = {}): Promise<readonly EndpointSlice[]> {
  let q = db.selectFrom('hint_slices').select('body').where('cluster', '=', cluster);
  if (filter.namespace !== undefined) q = q.where('namespace', '=', filter.namespace);
  if (filter.service !== undefined) q = q.where('service', '=', filter.service);
  const rows = await q.orderBy('namespace').orderBy('name').execute();
  return rows.map((r) => r.body);
}

/** Stores other controllers' slices as received (keyed by namespace/name); the service comes from the service-name label. */
export function upsertHintForeignSlices(trx: Trx, cluster: string, slices: readonly EndpointSlice[]): Promise<void> {
  return upsertSlicesInto(trx, 'hint_foreign_slices', cluster, slices);
}

export function deleteHintForeignSlices(trx: Trx, cluster: string, namespace: string, names: readonly string[]): Promise<void> {
  return deleteSlicesFrom(trx, 'hint_foreign_slices', cluster, namespace, names);
}

/** Other controllers' slices of a cluster, sorted by namespace/name; [] when none. */
export async function loadHintForeignSlices(db: Db, cluster: string): Promise<readonly EndpointSlice[]> {
  const rows = await db.selectFrom('hint_foreign_slices').select('body').where('cluster', '=', cluster).orderBy('namespace').orderBy('name').execute();
  return rows.map((r) => r.body);
}

// ---- decisions ----

export async function saveHintDecisions(trx: Trx, cluster: string, decisions: readonly HintDecision[]): Promise<void> {
  for (const part of chunks(decisions)) {
    await trx
      .insertInto('hint_decisions')
      .values(part.map((d) => ({
        cluster,
        namespace: d.namespace,
        service: d.service,
        address_type: d.addressType,
        enabled: d.enabled,
        mode: d.mode,
        event: d.event === null ? null : JSON.stringify(d.event),
        reason: d.reason,
        decided_at: d.decidedAt,
      })))
      .onConflict((oc) => oc.columns(['cluster', 'namespace', 'service', 'address_type']).doUpdateSet((eb) => ({
        enabled: eb.ref('excluded.enabled'),
        mode: eb.ref('excluded.mode'),
        event: eb.ref('excluded.event'),
        reason: eb.ref('excluded.reason'),
        decided_at: eb.ref('excluded.decided_at'),
      })))
      .execute();
  }
}

/** Removes the decisions of several Services in one statement per chunk. */
export async function deleteHintDecisionsOf(trx: Trx, cluster: string, keys: readonly { readonly namespace: string; readonly service: string }[]): Promise<void> {
  for (const part of chunks(keys)) {
    const pairs = sql.join(part.map((k) => sql`(${k.namespace}, ${k.service})`));
    await sql`delete from hint_decisions where cluster = ${cluster} and (namespace, service) in (${pairs})`.execute(trx);
  }
}

/** Removes every decision of a service (all address types). */
export async function deleteHintDecisions(trx: Trx, cluster: string, namespace: string, service: string): Promise<void> {
  await deleteHintDecisionsOf(trx, cluster, [{ namespace, service }]);
}

/** Decisions sorted by namespace, service, address type; [] when none. */
export async function loadHintDecisions(db: Db, cluster: string, filter: { readonly namespace?: string; readonly service?: string } = {}): Promise<readonly HintDecision[]> {
  let q = db.selectFrom('hint_decisions').selectAll().where('cluster', '=', cluster);
  if (filter.namespace !== undefined) q = q.where('namespace', '=', filter.namespace);
  if (filter.service !== undefined) q = q.where('service', '=', filter.service);
  const rows = await q.orderBy('namespace').orderBy('service').orderBy('address_type').execute();
  return rows.map((r) => ({
    namespace: r.namespace,
    service: r.service,
    addressType: r.address_type,
    enabled: r.enabled,
    mode: r.mode,
    event: r.event,
    reason: r.reason,
    decidedAt: r.decided_at,
  }));
}

// ---- nodes ----
//
// Node rows are shared: every partition's node consumer (of any hints replica) writes them, each
// at its own position in the same log. The writes are therefore guarded by resourceVersion, as
// the projection in memory is: an upsert older than the stored node changes nothing, and a
// delete removes the node only when it is not older than the stored one. Versions are ordered as
// the API server's integers; anything else is taken as it comes (stream order is all we know).

/** SQL: the integer resourceVersion `a` is older than `b` (false unless both are integers). */
function olderVersion(a: RawBuilder<unknown>, b: RawBuilder<unknown>): RawBuilder<boolean> {
  // coalesce: a missing version (null) compares as "not older", never as unknown, which would
  // make `where not …` skip the update.
  return sql<boolean>`coalesce(${a} ~ '^[0-9]+$' and ${b} ~ '^[0-9]+$' and ${a}::numeric < ${b}::numeric, false)`;
}

/** Upserts nodes; a node older than the stored one (by resourceVersion) leaves the row as it is. */
export async function upsertHintNodes(trx: Trx, cluster: string, nodes: readonly Node[]): Promise<void> {
  for (const part of chunks(nodes)) {
    const stored = sql`(hint_nodes.body->'metadata'->>'resourceVersion')`;
    const incoming = sql`(excluded.body->'metadata'->>'resourceVersion')`;
    await sql`insert into hint_nodes (cluster, name, body)
      select ${cluster}, n.value->'metadata'->>'name', n.value from jsonb_array_elements(${JSON.stringify(part)}::jsonb) as n(value)
      on conflict (cluster, name) do update set body = excluded.body where not ${olderVersion(incoming, stored)}`.execute(trx);
  }
}

/**
 * Deletes nodes by name. With `versions` (name -> the delete's resourceVersion), a stored node
 * newer than its delete stays (it was recreated, and another consumer already stored that).
 */
export async function deleteHintNodes(trx: Trx, cluster: string, names: readonly string[], versions: Readonly<Record<string, string>> = {}): Promise<void> {
  for (const part of chunks(names)) {
    const rows = JSON.stringify(part.map((name) => ({ name, rv: versions[name] ?? '' })));
    await sql`delete from hint_nodes h using jsonb_to_recordset(${rows}::jsonb) as d(name text, rv text)
      where h.cluster = ${cluster} and h.name = d.name and not ${olderVersion(sql`d.rv`, sql`(h.body->'metadata'->>'resourceVersion')`)}`.execute(trx);
  }
}

/** Nodes sorted by name; [] when none. */
export async function loadHintNodes(db: Db, cluster: string): Promise<readonly Node[]> {
  const rows = await db.selectFrom('hint_nodes').select('body').where('cluster', '=', cluster).orderBy('name').execute();
  return rows.map((r) => r.body as Node);
}

// ---- services ----

export async function upsertHintServices(trx: Trx, cluster: string, services: readonly Service[]): Promise<void> {
  for (const part of chunks(services)) {
    await trx
      .insertInto('hint_services')
      .values(part.map((s) => ({ cluster, namespace: s.metadata.namespace ?? '', name: s.metadata.name, body: JSON.stringify(s) })))
      .onConflict((oc) => oc.columns(['cluster', 'namespace', 'name']).doUpdateSet((eb) => ({ body: eb.ref('excluded.body') })))
      .execute();
  }
}

export async function deleteHintServices(trx: Trx, cluster: string, keys: readonly NamespacedName[]): Promise<void> {
  for (const k of keys) {
    await trx.deleteFrom('hint_services').where('cluster', '=', cluster).where('namespace', '=', k.namespace).where('name', '=', k.name).execute();
  }
}

/** Services (optionally of one namespace) sorted by namespace/name; [] when none. */
export async function loadHintServices(db: Db, cluster: string, namespace?: string): Promise<readonly Service[]> {
  let q = db.selectFrom('hint_services').select('body').where('cluster', '=', cluster);
  if (namespace !== undefined) q = q.where('namespace', '=', namespace);
  const rows = await q.orderBy('namespace').orderBy('name').execute();
  return rows.map((r) => r.body as Service);
}

// ---- published views ----

/** Every view last published for the cluster, sorted by key; [] when none. */
export async function loadPublishedViews(db: Db, cluster: string): Promise<readonly PublishedView[]> {
  const rows = await db.selectFrom('published_views').select(['key', 'revision', 'digest']).where('cluster', '=', cluster).orderBy('key').execute();
  return rows.map((r) => ({ key: r.key, revision: Number(r.revision), digest: r.digest }));
}
