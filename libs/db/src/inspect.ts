// Read-only questions an operator's tools ask of a deployment's schema (the stack's status line,
// the replay check). Kept here so no service writes SQL.

import type { EndpointSlice } from '@slicemesh/model';
import type { Db } from './schema.ts';

/** Every Service of `cluster` that has slices or replay records, sorted by namespace and name. */
export async function reconciledServiceKeys(db: Db, cluster: string): Promise<{ namespace: string; name: string }[]> {
  const [a, b] = await Promise.all([
    db.selectFrom('endpoint_slices').select(['namespace', 'service']).distinct().where('cluster', '=', cluster).execute(),
    db.selectFrom('reconciles').select(['namespace', 'service']).distinct().where('cluster', '=', cluster).execute(),
  ]);
  const keys = new Set([...a, ...b].map((r) => JSON.stringify([r.namespace, r.service])));
  return [...keys].sort().map((k) => {
    const [namespace, name] = JSON.parse(k) as [string, string];
    return { namespace, name };
  });
}

/** Every stored slice of `cluster`, keyed `<namespace>/<name>`, in key order. */
export async function loadClusterSlices(db: Db, cluster: string): Promise<Map<string, EndpointSlice>> {
  const rows = await db.selectFrom('endpoint_slices').select(['namespace', 'name', 'body']).where('cluster', '=', cluster).orderBy('namespace').orderBy('name').execute();
  return new Map(rows.map((r) => [`${r.namespace}/${r.name}`, r.body]));
}

/** How many slices `cluster` has stored. */
export async function countSlices(db: Db, cluster: string): Promise<number> {
  const row = await db.selectFrom('endpoint_slices').select((eb) => eb.fn.countAll<string>().as('n')).where('cluster', '=', cluster).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The hints decisions of `cluster`: which Service, and whether hints are on. */
export async function loadDecisionFlags(db: Db, cluster: string): Promise<{ namespace: string; service: string; enabled: boolean }[]> {
  return db.selectFrom('hint_decisions').select(['namespace', 'service', 'enabled']).where('cluster', '=', cluster).execute();
}
