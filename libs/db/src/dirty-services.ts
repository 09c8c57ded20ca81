// The slicer's work list: services whose inputs changed, written in the same transaction as the
// projection change so a crash between "object stored" and "service reconciled" loses nothing.
// Workers claim rows with a lease (FOR UPDATE SKIP LOCKED, so concurrent claimers never block on
// or double-claim a row) and clear a row only up to the sequence they reconciled: a mark that
// arrived meanwhile survives the clear and the service is reconciled again.

import { sql } from 'kysely';
import type { Db, Trx } from './schema.ts';

export interface ServiceKey {
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
}

export interface DirtyService extends ServiceKey {
  /** First KUBE sequence that marked it since its last reconcile (the replay range start). */
  readonly sinceSeq: number;
  /** Newest KUBE sequence that marked it: reconcile, then clear up to this value. */
  readonly lastSeq: number;
}

export interface ClaimOptions {
  /** How long a claim keeps other workers away. Defaults to 30 000 ms. */
  readonly leaseMs?: number;
  /** Recorded in claimed_by for diagnosis. Defaults to ''. */
  readonly owner?: string;
}

export const DEFAULT_CLAIM_LEASE_MS = 30_000;

function uniqueKeys(keys: readonly ServiceKey[]): ServiceKey[] {
  const seen = new Map<string, ServiceKey>();
  for (const k of keys) seen.set(JSON.stringify([k.cluster, k.namespace, k.name]), k);
  return [...seen.values()];
}

/**
 * Marks services dirty as of `seq` in one statement. An existing mark keeps its since_seq (the
 * smaller one) and its claim, and its last_seq moves up to `seq`. No-op for [].
 */
export async function markDirty(trx: Trx, keys: readonly ServiceKey[], seq: number): Promise<void> {
  const rows = uniqueKeys(keys);
  if (rows.length === 0) return;
  await trx
    .insertInto('dirty_services')
    .values(rows.map((k) => ({ cluster: k.cluster, namespace: k.namespace, name: k.name, since_seq: seq, last_seq: seq })))
    .onConflict((oc) => oc
      .columns(['cluster', 'namespace', 'name'])
      .doUpdateSet({
        since_seq: sql`least(dirty_services.since_seq, excluded.since_seq)`,
        last_seq: sql`greatest(dirty_services.last_seq, excluded.last_seq)`,
      }))
    .execute();
}

/** The claim statement: lock up to `limit` unclaimed (or lease-expired) rows, oldest marks first, skipping rows others hold. */
export function buildClaimDirty(db: Db, limit: number, opts: ClaimOptions = {}) {
  const leaseSeconds = (opts.leaseMs ?? DEFAULT_CLAIM_LEASE_MS) / 1000;
  return db
    .with('picked', (qb) => qb
      .selectFrom('dirty_services')
      .select(['cluster', 'namespace', 'name'])
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', sql<Date>`now()`)]))
      .orderBy('since_seq')
      .orderBy('cluster')
      .orderBy('namespace')
      .orderBy('name')
      .limit(limit)
      .forUpdate()
      .skipLocked())
    .updateTable('dirty_services')
    .from('picked')
    .set({
      claimed_by: opts.owner ?? '',
      claimed_until: sql<Date>`now() + make_interval(secs => ${leaseSeconds})`,
    })
    .whereRef('dirty_services.cluster', '=', 'picked.cluster')
    .whereRef('dirty_services.namespace', '=', 'picked.namespace')
    .whereRef('dirty_services.name', '=', 'picked.name')
    .returning(['dirty_services.cluster', 'dirty_services.namespace', 'dirty_services.name', 'dirty_services.since_seq', 'dirty_services.last_seq']);
}

/**
 * Claims up to `limit` dirty services for `leaseMs` and returns them ordered by sinceSeq, then key.
 * [] when nothing is claimable. Given a transaction, the rows also stay locked until it ends.
 */
export async function claimDirty(db: Db, limit: number, opts: ClaimOptions = {}): Promise<readonly DirtyService[]> {
  const rows = await buildClaimDirty(db, limit, opts).execute();
  return rows
    .map((r) => ({ cluster: r.cluster, namespace: r.namespace, name: r.name, sinceSeq: Number(r.since_seq), lastSeq: Number(r.last_seq) }))
    .sort((a, b) => a.sinceSeq - b.sinceSeq || cmp(a.cluster, b.cluster) || cmp(a.namespace, b.namespace) || cmp(a.name, b.name));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Clears the mark if no mark newer than `upToSeq` arrived and returns true. Otherwise keeps the
 * row, releases its claim so it is picked up again, moves since_seq past `upToSeq`, returns false.
 * false as well when the row does not exist.
 */
export async function clearDirty(trx: Trx, key: ServiceKey, upToSeq: number): Promise<boolean> {
  const deleted = await trx
    .deleteFrom('dirty_services')
    .where('cluster', '=', key.cluster)
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .where('last_seq', '<=', String(upToSeq))
    .returning('name')
    .execute();
  if (deleted.length > 0) return true;
  await trx
    .updateTable('dirty_services')
    .set({
      claimed_by: null,
      claimed_until: null,
      since_seq: sql`greatest(since_seq, ${upToSeq + 1}::bigint)`,
    })
    .where('cluster', '=', key.cluster)
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name)
    .execute();
  return false;
}

/** Drops claims without clearing (after a failed reconcile), so the keys are claimable at once. */
export async function releaseDirty(db: Db, keys: readonly ServiceKey[]): Promise<void> {
  for (const k of uniqueKeys(keys)) {
    await db
      .updateTable('dirty_services')
      .set({ claimed_by: null, claimed_until: null })
      .where('cluster', '=', k.cluster)
      .where('namespace', '=', k.namespace)
      .where('name', '=', k.name)
      .execute();
  }
}

/** Every mark, claimed or not, ordered by key (diagnostics and tests). */
export async function listDirty(db: Db): Promise<readonly DirtyService[]> {
  const rows = await db.selectFrom('dirty_services').selectAll().orderBy('cluster').orderBy('namespace').orderBy('name').execute();
  return rows.map((r) => ({ cluster: r.cluster, namespace: r.namespace, name: r.name, sinceSeq: Number(r.since_seq), lastSeq: Number(r.last_seq) }));
}
