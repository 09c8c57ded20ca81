// What the `log` commands read from Postgres: the settings the slicer last reconciled with (the
// settings in force, written into an export), and where each reconcile record sits in the log,
// so a replay reconciles when live did.

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

/** One reconcile record's place in the log: the Service, its partition offset and reconcile id. */
export interface ReconcilePoint {
  readonly namespace: string;
  readonly service: string;
  readonly kubeSeqTo: number;
  readonly reconcileId: string;
}

/** Every reconcile record of the cluster in the order they were made (id order). */
export async function loadReconcilePoints(db: Db, cluster: string): Promise<readonly ReconcilePoint[]> {
  const rows = await db.selectFrom('reconciles').select(['namespace', 'service', 'kube_seq_to', 'reconcile_id']).where('cluster', '=', cluster).orderBy('id').execute();
  return rows.map((r) => ({ namespace: r.namespace, service: r.service, kubeSeqTo: Number(r.kube_seq_to), reconcileId: r.reconcile_id }));
}
