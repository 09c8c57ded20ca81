// The replay record: which KUBE sequence range each reconcile consumed and what it changed.
// Replaying the log must reproduce the same rows (the reconcile id aside, if it is random).

import type { Db, Trx } from './schema.ts';

export interface ReconcileRecord {
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  readonly kubeSeqFrom: number;
  readonly kubeSeqTo: number;
  readonly reconcileId: string;
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  /** Defaults to the transaction's now(). */
  readonly at?: Date;
}

export interface StoredReconcile extends Required<ReconcileRecord> {
  readonly id: number;
}

/** Appends one record in the caller's transaction; returns its id. */
export async function recordReconcile(trx: Trx, rec: ReconcileRecord): Promise<number> {
  const row = await trx
    .insertInto('reconciles')
    .values({
      cluster: rec.cluster,
      namespace: rec.namespace,
      service: rec.service,
      kube_seq_from: rec.kubeSeqFrom,
      kube_seq_to: rec.kubeSeqTo,
      reconcile_id: rec.reconcileId,
      created: rec.created,
      updated: rec.updated,
      deleted: rec.deleted,
      ...(rec.at !== undefined ? { at: rec.at } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Records of one service in id order; [] when it was never reconciled. */
export async function loadReconciles(db: Db, cluster: string, namespace: string, service: string): Promise<readonly StoredReconcile[]> {
  const rows = await db
    .selectFrom('reconciles')
    .selectAll()
    .where('cluster', '=', cluster)
    .where('namespace', '=', namespace)
    .where('service', '=', service)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    cluster: r.cluster,
    namespace: r.namespace,
    service: r.service,
    kubeSeqFrom: Number(r.kube_seq_from),
    kubeSeqTo: Number(r.kube_seq_to),
    reconcileId: r.reconcile_id,
    created: r.created,
    updated: r.updated,
    deleted: r.deleted,
    at: r.at,
  }));
}
