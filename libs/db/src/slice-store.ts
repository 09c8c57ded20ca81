// The slicer's EndpointSlices. Postgres plays the API server's part for generations: a created
// slice starts at generation 1 and every write of an existing one increments it, both in the
// column and in body.metadata.generation, so readers (and the hints service, via the outbox)
// can recognise the slicer's own writes.

import { sql } from 'kysely';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, deterministicSliceUid } from '@slicemesh/model';
import type { EndpointSlice } from '@slicemesh/model';
import type { Db, Trx } from './schema.ts';

export interface SliceChanges {
  readonly cluster: string;
  readonly create: readonly EndpointSlice[];
  readonly update: readonly EndpointSlice[];
  readonly delete: readonly EndpointSlice[];
}

export interface AppliedSliceChanges {
  /** The slices as written (uid filled in, generation set), sorted by namespace/name. */
  readonly created: readonly EndpointSlice[];
  readonly updated: readonly EndpointSlice[];
  /** The stored bodies of the slices that existed and were removed, sorted by namespace/name. */
  readonly deleted: readonly EndpointSlice[];
}

/** Slices of one service (every managed-by value), sorted by name; [] when none. */
export async function loadSlices(db: Db, cluster: string, namespace: string, service: string): Promise<readonly EndpointSlice[]> {
  const rows = await db
    .selectFrom('endpoint_slices')
    .select('body')
    .where('cluster', '=', cluster)
    .where('namespace', '=', namespace)
    .where('service', '=', service)
    .orderBy('name')
    .execute();
  return rows.map((r) => r.body);
}

export { deterministicSliceUid };

interface SliceRow {
  readonly namespace: string;
  readonly name: string;
  readonly service: string;
  readonly managedBy: string;
  readonly slice: EndpointSlice;
}

function toRow(cluster: string, s: EndpointSlice): SliceRow {
  const { name, namespace } = s.metadata;
  const where = `EndpointSlice ${namespace ?? '?'}/${name || '?'}`;
  if (!name) throw new Error(`${where}: metadata.name is empty (finalize the plan before storing it)`);
  if (!namespace) throw new Error(`${where}: metadata.namespace is missing`);
  const service = s.metadata.labels?.[LABEL_SERVICE_NAME];
  if (!service) throw new Error(`${where}: label ${LABEL_SERVICE_NAME} is missing`);
  const slice: EndpointSlice = {
    ...s,
    metadata: { ...s.metadata, uid: s.metadata.uid || deterministicSliceUid(cluster, namespace, name), generation: 1 },
  };
  return { namespace, name, service, managedBy: s.metadata.labels?.[LABEL_MANAGED_BY] ?? '', slice };
}

const byNamespaceName = (a: EndpointSlice, b: EndpointSlice): number => {
  const ka = `${a.metadata.namespace ?? ''}\u0000${a.metadata.name}`;
  const kb = `${b.metadata.namespace ?? ''}\u0000${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/**
 * Applies one reconcile's slice changes: deletes first, then one multi-row upsert for creates and
 * updates. A created slice gets generation 1 (or stored + 1 if the name already exists, e.g. a
 * replay); an updated slice gets stored + 1 (1 if it was missing). Returns what was written.
 * Throws when a slice lacks name, namespace or service label, or appears twice.
 */
export async function applySliceChanges(trx: Trx, changes: SliceChanges): Promise<AppliedSliceChanges> {
  const { cluster } = changes;
  const deleted: EndpointSlice[] = [];
  for (const s of changes.delete) {
    const out = await trx
      .deleteFrom('endpoint_slices')
      .where('cluster', '=', cluster)
      .where('namespace', '=', s.metadata.namespace ?? '')
      .where('name', '=', s.metadata.name)
      .returning('body')
      .execute();
    deleted.push(...out.map((r) => r.body));
  }

  const rows = [...changes.create, ...changes.update].map((s) => toRow(cluster, s));
  const seen = new Set<string>();
  for (const r of rows) {
    const k = `${r.namespace}/${r.name}`;
    if (seen.has(k)) throw new Error(`EndpointSlice ${k} appears twice in one change set`);
    seen.add(k);
  }
  const written = rows.length === 0 ? [] : await buildUpsertSlices(trx, cluster, rows).execute();
  const createdKeys = new Set(changes.create.map((s) => `${s.metadata.namespace ?? ''}/${s.metadata.name}`));
  const created: EndpointSlice[] = [];
  const updated: EndpointSlice[] = [];
  for (const w of written) (createdKeys.has(`${w.namespace}/${w.name}`) ? created : updated).push(w.body);
  return { created: created.sort(byNamespaceName), updated: updated.sort(byNamespaceName), deleted: deleted.sort(byNamespaceName) };
}

function buildUpsertSlices(db: Db, cluster: string, rows: readonly SliceRow[]) {
  return db
    .insertInto('endpoint_slices')
    .values(rows.map((r) => ({
      cluster,
      namespace: r.namespace,
      name: r.name,
      service: r.service,
      address_type: r.slice.addressType,
      managed_by: r.managedBy,
      generation: 1,
      body: JSON.stringify(r.slice),
    })))
    .onConflict((oc) => oc
      .columns(['cluster', 'namespace', 'name'])
      .doUpdateSet((eb) => ({
        service: eb.ref('excluded.service'),
        address_type: eb.ref('excluded.address_type'),
        managed_by: eb.ref('excluded.managed_by'),
        generation: sql<number>`endpoint_slices.generation + 1`,
        body: sql<string>`jsonb_set(excluded.body, '{metadata,generation}', to_jsonb(endpoint_slices.generation + 1))`,
      })))
    .returning(['namespace', 'name', 'generation', 'body']);
}
