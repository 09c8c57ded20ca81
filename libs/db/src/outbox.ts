// Messages to publish, written in the same transaction as the state they announce. The relay
// (outbox-relay.ts) publishes them after commit; a message exists if and only if its state does.

import { sql } from 'kysely';
import type { Db, Trx } from './schema.ts';

export interface OutboxMessage {
  readonly subject: string;
  /**
   * The publish de-duplication id. A function receives the row's id (allocated before the insert),
   * for ids such as `<cluster>/outbox/<id>`; `{ prefix }` means prefix + id, which a single
   * statement can compute in Postgres.
   */
  readonly msgId: string | ((id: number) => string) | { readonly prefix: string };
  readonly payload: unknown;
}

export interface AppendedOutboxRow {
  readonly id: number;
  readonly msgId: string;
}

/**
 * Appends messages in one INSERT and returns their ids and msgIds in input order; [] for [].
 * Ids come from the outbox sequence; when any msgId is a function they are reserved first
 * (one extra round trip) so the id can appear in the msgId.
 */
export async function appendOutbox(trx: Trx, rows: readonly OutboxMessage[]): Promise<readonly AppendedOutboxRow[]> {
  if (rows.length === 0) return [];
  const ids = rows.some((r) => typeof r.msgId !== 'string') ? await reserveOutboxIds(trx, rows.length) : undefined;
  const values = rows.map((r, i) => {
    const id = ids?.[i];
    const msgId = typeof r.msgId === 'function' ? r.msgId(id as number) : typeof r.msgId === 'string' ? r.msgId : `${r.msgId.prefix}${id as number}`;
    return { ...(id !== undefined ? { id } : {}), subject: r.subject, msg_id: msgId, payload: JSON.stringify(r.payload) };
  });
  const out = await trx.insertInto('outbox').values(values).returning(['id', 'msg_id']).execute();
  return out.map((r) => ({ id: Number(r.id), msgId: r.msg_id }));
}

async function reserveOutboxIds(trx: Trx, count: number): Promise<number[]> {
  const res = await sql<{ id: string }>`select nextval(pg_get_serial_sequence('outbox', 'id')) as id from generate_series(1, ${count}::int)`.execute(trx);
  return res.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/** The payloads queued on `subject` (or any of several), oldest first (the replay compares them with its own). */
export async function loadOutboxPayloads(db: Db, subject: string | readonly string[]): Promise<unknown[]> {
  const subjects = typeof subject === 'string' ? [subject] : [...subject];
  if (subjects.length === 0) return [];
  const rows = await db.selectFrom('outbox').select('payload').where('subject', 'in', subjects).orderBy('id').execute();
  return rows.map((r) => r.payload);
}
