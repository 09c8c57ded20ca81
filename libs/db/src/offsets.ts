// Applied-sequence bookkeeping for durable consumers. The offset is written in the same
// transaction as the projection it guards, so "applied" and "recorded" cannot disagree after a
// crash: a message at or below the offset is a redelivery and is acked without effect.
// This assumes one in-order processor per consumer name (a skipped-ahead offset would otherwise
// swallow an earlier message that was still in flight).

import type { Db, Trx } from './schema.ts';

/** The last applied stream sequence of `consumer`; 0 when it never applied anything. */
export async function getOffset(db: Db, consumer: string): Promise<number> {
  const row = await db.selectFrom('consumer_offsets').select('last_seq').where('consumer', '=', consumer).executeTakeFirst();
  return row === undefined ? 0 : Number(row.last_seq);
}

/** true when `seq` was already applied by `consumer` (seq ≤ its offset). */
export async function isApplied(db: Db, consumer: string, seq: number): Promise<boolean> {
  return seq <= (await getOffset(db, consumer));
}

/**
 * Moves the offset forward to `seq`; never backwards. Returns true when it moved, false when the
 * stored offset was already ≥ seq.
 */
export async function advanceOffset(trx: Trx, consumer: string, seq: number): Promise<boolean> {
  const out = await trx
    .insertInto('consumer_offsets')
    .values({ consumer, last_seq: seq })
    .onConflict((oc) => oc
      .column('consumer')
      .doUpdateSet((eb) => ({ last_seq: eb.ref('excluded.last_seq') }))
      .whereRef('consumer_offsets.last_seq', '<', 'excluded.last_seq'))
    .returning('consumer')
    .execute();
  return out.length > 0;
}
