// Publishes outbox rows in commit-safe order. Ids and transaction ids are handed out before
// commit, so a transaction that started early can commit after later ones: reading "id > last"
// would step over its rows for good. The relay therefore only reads rows of transactions older
// than the oldest one still running (txid < xmin of the current snapshot) - those are final - in
// (txid, id) order, and remembers its position as (txid, id). Every row of a still-open
// transaction has txid ≥ xmin, so it sorts after the stored position once it commits.
// The cost: a transaction left open anywhere on the server (even idle in transaction) holds
// publishing back until it ends.
// Publishing is injected; re-publishing after a crash before the position was saved is harmless
// because publishes carry the row's msgId.

import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from './schema.ts';
import type { LeaseClaim } from './leases.ts';
import { FencedError, fenceHolds } from './leases.ts';

export interface RelayPosition {
  /** xid8 as decimal text. */
  readonly txid: string;
  readonly id: number;
}

export interface OutboxRecord {
  readonly id: number;
  readonly txid: string;
  readonly subject: string;
  readonly msgId: string;
  /** The message as the JSON text the writer stored: published as it is. */
  readonly payload: string;
}

export interface ReadOutboxOptions {
  /** Exclusive start; null reads from the beginning. */
  readonly after: RelayPosition | null;
  readonly limit: number;
}

/** The gated read: committed-for-good rows after `after`, in (txid, id) order. */
export function buildReadOutboxBatch(db: Db, opts: ReadOutboxOptions) {
  let q = db
    .selectFrom('outbox')
    .select(['id', 'txid', 'subject', 'msg_id', sql<string>`payload::text`.as('payload')])
    .where(sql<boolean>`txid < pg_snapshot_xmin(pg_current_snapshot())`);
  if (opts.after !== null) {
    q = q.where(sql<boolean>`(txid, id) > (${opts.after.txid}::xid8, ${opts.after.id}::bigint)`);
  }
  return q.orderBy('txid').orderBy('id').limit(opts.limit);
}

/** Up to `limit` rows after the position; [] when nothing new is safe to publish yet. */
export async function readOutboxBatch(db: Db, opts: ReadOutboxOptions): Promise<readonly OutboxRecord[]> {
  const rows = await buildReadOutboxBatch(db, opts).execute();
  return rows.map((r) => ({ id: Number(r.id), txid: r.txid, subject: r.subject, msgId: r.msg_id, payload: r.payload }));
}

/** The stored position of relay `name`; null when it has not published anything yet. */
export async function loadRelayPosition(db: Db, name: string): Promise<RelayPosition | null> {
  const r = await db.selectFrom('relay_positions').select([sql<string>`txid::text`.as('txid'), 'id']).where('name', '=', name).executeTakeFirst();
  return r === undefined ? null : { txid: r.txid, id: Number(r.id) };
}

/** Stores the relay's position; with `fence`, only while those leases hold (else FencedError, nothing stored). */
export async function saveRelayPosition(db: Db, name: string, pos: RelayPosition, fence: readonly LeaseClaim[] = []): Promise<void> {
  const r = await sql<{ name: string }>`insert into relay_positions (name, txid, id) select ${name}, ${pos.txid}::xid8, ${pos.id} where ${fenceHolds(fence)}
    on conflict (name) do update set txid = excluded.txid, id = excluded.id returning name`.execute(db);
  if (r.rows.length === 0) throw new FencedError(fence);
}

export interface OutboxRelayOptions {
  readonly db: Db;
  /** Position key in relay_positions; one running relay per name. */
  readonly name: string;
  /** Publishes one row (with row.msgId as the de-duplication id); rejects to retry from this row. */
  readonly publish: (row: OutboxRecord) => Promise<void>;
  readonly signal: AbortSignal;
  /** Pause when caught up or after an error. Defaults to 200 ms. */
  readonly pollMs?: number;
  /** Rows per read. Defaults to 500. */
  readonly batchSize?: number;
  /** Reports read, publish and save failures; the loop retries after pollMs. Defaults to ignoring them. */
  readonly onError?: (err: unknown) => void;
  /** Ends a caught-up pause early when the writer says it committed rows (saves up to pollMs). */
  readonly waker?: RelayWaker;
  /** The relay's lease: its position is stored only while the lease holds (one relay per name). */
  readonly fence?: readonly LeaseClaim[];
}

/** Lets a writer wake the relay right after it commits outbox rows. */
export class RelayWaker {
  #pending = false;
  #resolve: (() => void) | undefined;

  /** Wakes a waiting relay, or makes its next wait return at once. */
  wake(): void {
    this.#pending = true;
    this.#resolve?.();
  }

  /** Waits up to `ms`, less if woken (or already woken since the last wait) or aborted. */
  async wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#pending || signal.aborted) {
      this.#pending = false;
      return;
    }
    // One timer and one abort listener per wait, both gone when it ends however it ends: a
    // relay woken after every commit must not pile up listeners on the shared signal.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.#resolve = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.#resolve = done;
    });
    this.#pending = false;
  }
}

/**
 * Runs until `signal` aborts: read a batch, publish row by row, save the position after the last
 * published row. A full batch is followed immediately by the next read. Resolves after abort.
 */
export async function runOutboxRelay(opts: OutboxRelayOptions): Promise<void> {
  const { db, name, publish, signal } = opts;
  const pollMs = opts.pollMs ?? 200;
  const batchSize = opts.batchSize ?? 500;
  let pos: RelayPosition | null | undefined;
  while (!signal.aborted) {
    let full = false;
    try {
      if (pos === undefined) pos = await loadRelayPosition(db, name);
      const batch = await readOutboxBatch(db, { after: pos, limit: batchSize });
      full = batch.length === batchSize;
      let done: RelayPosition | null = pos;
      try {
        // Published concurrently (one connection keeps their order on the stream); the position
        // moves past the longest prefix that succeeded, and a failure retries from there.
        const results = signal.aborted ? [] : await Promise.allSettled(batch.map((row) => publish(row)));
        for (const [i, r] of results.entries()) {
          const row = batch[i];
          if (r.status === 'rejected' || row === undefined) {
            if (r.status === 'rejected') throw r.reason;
            break;
          }
          done = { txid: row.txid, id: row.id };
        }
      } finally {
        if (done !== pos && done !== null) {
          await saveRelayPosition(db, name, done, opts.fence);
          pos = done;
        }
      }
    } catch (err) {
      full = false;
      opts.onError?.(err);
      // Another relay holds the name now: this one stops rather than fight over the position.
      if (err instanceof FencedError) return;
    }
    if (!full) await (opts.waker ? opts.waker.wait(pollMs, signal) : pause(pollMs, signal));
  }
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal });
  } catch (err) {
    if (!signal.aborted) throw err;
  }
}

/**
 * Outbox rows not yet published by relay `name`: those after its position in the relay's own
 * (txid, id) order. Counting by id alone would count, for ever, a row of a transaction that
 * took its txid first and its id last: published before the position's row, but with a
 * higher id. For the outbox lag gauge and for waiting until the outbox is published.
 */
export async function outboxBacklog(db: Db, name: string): Promise<number> {
  const pos = await loadRelayPosition(db, name);
  let q = db.selectFrom('outbox').select((eb) => eb.fn.countAll<string>().as('n'));
  if (pos !== null) q = q.where(sql<boolean>`(txid, id) > (${pos.txid}::xid8, ${pos.id}::bigint)`);
  const row = await q.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A transaction holding the relays' horizon back: it has a transaction id and is still open. */
export interface OpenTransaction {
  readonly pid: number;
  readonly database: string | null;
  readonly ageMs: number;
  readonly state: string | null;
  readonly query: string;
}

/**
 * The oldest open transactions with a transaction id on the whole server, oldest first: every
 * relay publishes only rows older than the oldest of them (pg_snapshot_xmin), so one left open
 * anywhere (any database, any schema) is why an outbox stays unpublished.
 */
export async function oldestOpenTransactions(db: Db, limit = 3): Promise<OpenTransaction[]> {
  const r = await sql<{ pid: number; datname: string | null; age_ms: string; state: string | null; query: string }>`
    select pid, datname, (extract(epoch from clock_timestamp() - xact_start) * 1000)::bigint::text as age_ms, state, left(query, 120) as query
    from pg_stat_activity where backend_xid is not null and pid <> pg_backend_pid()
    order by xact_start limit ${limit}`.execute(db);
  return r.rows.map((x) => ({ pid: x.pid, database: x.datname, ageMs: Number(x.age_ms), state: x.state, query: x.query }));
}
