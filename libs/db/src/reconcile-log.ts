// The replay record: which KUBE sequence range each reconcile consumed and what it changed.
// Replaying the log must reproduce the same rows (the reconcile id aside, if it is random).

import { chunks } from './batches.ts';
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
  /** The settings the reconcile ran with (JSON); absent on records made before they were kept. */
  readonly settings?: unknown;
}

export interface StoredReconcile extends Required<Omit<ReconcileRecord, 'settings'>> {
  readonly id: number;
  /** null for records made before settings were kept. */
  readonly settings: unknown;
}

function recordRow(rec: ReconcileRecord) {
  return {
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
    ...(rec.settings !== undefined ? { settings: JSON.stringify(rec.settings) } : {}),
  };
}

/** Appends many records in one statement per chunk, in input order; [] for []. */
export async function recordReconciles(trx: Trx, recs: readonly ReconcileRecord[]): Promise<number[]> {
  const ids: number[] = [];
  for (const part of chunks(recs)) {
    const rows = await trx.insertInto('reconciles').values(part.map(recordRow)).returning('id').execute();
    ids.push(...rows.map((r) => Number(r.id)));
  }
  return ids;
}

/** Appends one record in the caller's transaction; returns its id. */
export async function recordReconcile(trx: Trx, rec: ReconcileRecord): Promise<number> {
  const row = await trx
    .insertInto('reconciles')
    .values(recordRow(rec))
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
    settings: r.settings ?? null,
  }));
}
