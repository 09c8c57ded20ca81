// What the `log` commands read from Postgres: the settings the slicer last reconciled with (the
// settings in force, written into an export), and the reconcile records of one Service.

import type { Db } from './schema.ts';

/** The `settings` of the cluster's newest reconcile record that kept them; null when none did. */
export async function latestReconcileSettings(db: Db, cluster: string): Promise<unknown> {
  const row = await db
    .selectFrom('reconciles')
    .select('settings')
    .where('cluster', '=', cluster)
    .where('settings', 'is not', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.settings ?? null;
}
