import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import { appendOutbox } from './outbox.ts';
import type { OutboxRecord, RelayPosition } from './outbox-relay.ts';
import { buildReadOutboxBatch, loadRelayPosition, oldestOpenTransactions, outboxBacklog, readOutboxBatch, runOutboxRelay, saveRelayPosition } from './outbox-relay.ts';
import type { Trx } from './schema.ts';

// Each test gets its own schema: outbox positions are global to a schema.
let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });
async function reset(): Promise<void> {
  await t.db.deleteFrom('outbox').execute();
  await t.db.deleteFrom('relay_positions').execute();
}

/** Opens a transaction that stays open until the returned `commit` is called. */
async function openTransaction(work: (trx: Trx) => Promise<void>): Promise<{ commit: () => Promise<void> }> {
  let finish!: () => void;
  const gate = new Promise<void>((r) => { finish = r; });
  let started!: () => void;
  const ready = new Promise<void>((r) => { started = r; });
  let failed: unknown;
  const done = t.db.transaction().execute(async (trx) => {
    try { await work(trx); } catch (err) { failed = err; } finally { started(); }
    if (failed !== undefined) throw failed;
    await gate;
  });
  await ready;
  if (failed !== undefined) throw failed;
  return { commit: async () => { finish(); await done; } };
}

const msg = (subject: string) => ({ subject, msgId: `m-${subject}`, payload: { subject } });

async function readAll(after: RelayPosition | null): Promise<OutboxRecord[]> {
  return [...(await readOutboxBatch(t.db, { after, limit: 100 }))];
}

/**
 * Reads until at least `n` rows are visible. Any transaction open on the server (other test files,
 * other projects) holds the gate back for a moment, so positive reads poll; "not yet" reads do not.
 */
async function readAtLeast(after: RelayPosition | null, n: number): Promise<OutboxRecord[]> {
  const deadline = performance.now() + 10_000;
  for (;;) {
    const rows = await readAll(after);
    if (rows.length >= n || performance.now() > deadline) return rows;
    await delay(10);
  }
}

describe('buildReadOutboxBatch', () => {
  const cases = [
    {
      name: 'from the start: only rows of transactions older than the oldest running one, in (txid, id) order',
      after: null,
      sql: 'select "id", "txid", "subject", "msg_id", payload::text as "payload" from "outbox" where txid < pg_snapshot_xmin(pg_current_snapshot()) order by "txid", "id" limit $1',
      parameters: [50],
    },
    {
      name: 'after a position: strictly after (txid, id)',
      after: { txid: '900', id: 4 },
      sql: 'select "id", "txid", "subject", "msg_id", payload::text as "payload" from "outbox" where txid < pg_snapshot_xmin(pg_current_snapshot()) and (txid, id) > ($1::xid8, $2::bigint) order by "txid", "id" limit $3',
      parameters: ['900', 4, 50],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const c = buildReadOutboxBatch(t.db, { after: tc.after, limit: 50 }).compile();
      expect(c.sql).toBe(tc.sql);
      expect(c.parameters).toEqual(tc.parameters);
    });
  }
});

describe('readOutboxBatch (real round-trip)', () => {
  it('returns committed rows in (txid, id) order and nothing after the last position', async () => {
    await reset();
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('a'), msg('b')]));
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('c')]));
    const rows = await readAtLeast(null, 3);
    expect(rows.map((r) => r.subject)).toEqual(['a', 'b', 'c']);
    expect(rows.map((r) => r.msgId)).toEqual(['m-a', 'm-b', 'm-c']);
    // The text as written, to be published as it is.
    expect(rows[0]?.payload).toBe(JSON.stringify({ subject: 'a' }));
    expect(rows[0]?.txid).toBe(rows[1]?.txid);
    const last = rows[2]!;
    expect(await readAll({ txid: last.txid, id: last.id })).toEqual([]);
    expect((await readAtLeast({ txid: rows[0]!.txid, id: rows[0]!.id }, 2)).map((r) => r.subject)).toEqual(['b', 'c']);
  });

  it('never skips the row of a transaction that commits after a later one (long-open transaction)', async () => {
    await reset();
    // The early transaction gets its txid (and the lower id) first, then stays open.
    const early = await openTransaction(async (trx) => { await appendOutbox(trx, [msg('early')]); });
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('late')]));

    // While 'early' is open, the committed 'late' row is not yet safe to hand out: reading it now
    // would move the position past 'early' for good.
    const whileOpen = await readAll(null);
    expect(whileOpen).toEqual([]);
    // The diagnostic names it among the open transactions that hold every relay back.
    const open = await oldestOpenTransactions(t.db, 100);
    expect(open.some((o) => o.query.includes('outbox') && o.ageMs >= 0 && o.state === 'idle in transaction')).toBe(true);

    await early.commit();
    const after = await readAtLeast(null, 2);
    expect(after.map((r) => r.subject)).toEqual(['early', 'late']);
  });

  it("the backlog counts in the relay's (txid, id) order: a row with the lower txid and the higher id, once passed, is not counted", async () => {
    await reset();
    // 'first' takes its txid before 'second' does, and its outbox id after 'second' committed.
    let proceed!: () => void;
    const gate = new Promise<void>((r) => (proceed = r));
    let hasTxid!: () => void;
    const txidTaken = new Promise<void>((r) => (hasTxid = r));
    const first = t.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx);
      hasTxid();
      await gate;
      await appendOutbox(trx, [msg('first')]);
    });
    await txidTaken;
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('second')]));
    proceed();
    await first;

    const rows = await readAtLeast(null, 2);
    expect(rows.map((r) => r.subject)).toEqual(['first', 'second']);
    expect(rows[0]!.id).toBeGreaterThan(rows[1]!.id);
    const name = 'backlog-order';
    expect(await outboxBacklog(t.db, name)).toBe(2);
    await saveRelayPosition(t.db, name, { txid: rows[0]!.txid, id: rows[0]!.id });
    expect(await outboxBacklog(t.db, name)).toBe(1);
    // Both published: by id alone, 'first' (the higher id) would stay counted for ever.
    await saveRelayPosition(t.db, name, { txid: rows[1]!.txid, id: rows[1]!.id });
    expect(await outboxBacklog(t.db, name)).toBe(0);
  });

  it('rows of a rolled-back transaction never appear', async () => {
    await reset();
    await t.db.transaction().execute(async (trx) => {
      await appendOutbox(trx, [msg('ghost')]);
      throw new Error('rollback');
    }).catch(() => {});
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('real')]));
    expect((await readAtLeast(null, 1)).map((r) => r.subject)).toEqual(['real']);
  });
});

describe('appendOutbox', () => {
  it('a msgId function receives the row id, allocated before the insert; results keep input order', async () => {
    await reset();
    const out = await t.db.transaction().execute((trx) => appendOutbox(trx, [
      { subject: 's1', msgId: (id) => `c1/outbox/${id}`, payload: [1, 2] },
      { subject: 's2', msgId: 'fixed', payload: { x: 1 } },
    ]));
    expect(out[0]?.msgId).toBe(`c1/outbox/${out[0]?.id}`);
    expect(out[1]).toEqual({ id: out[0]!.id + 1, msgId: 'fixed' });
    const rows = await readAtLeast(null, 2);
    expect(rows.map((r) => [r.id, r.msgId, r.payload])).toEqual([[out[0]!.id, out[0]!.msgId, '[1,2]'], [out[1]!.id, 'fixed', '{"x":1}']]);
  });

  it('[] inserts nothing', async () => {
    await reset();
    expect(await t.db.transaction().execute((trx) => appendOutbox(trx, []))).toEqual([]);
    expect(await readAll(null)).toEqual([]);
  });
});

describe('relay positions', () => {
  it('load is null before the first save and returns the last saved position', async () => {
    await reset();
    expect(await loadRelayPosition(t.db, 'r')).toBeNull();
    await saveRelayPosition(t.db, 'r', { txid: '123', id: 4 });
    await saveRelayPosition(t.db, 'r', { txid: '125', id: 9 });
    expect(await loadRelayPosition(t.db, 'r')).toEqual({ txid: '125', id: 9 });
  });
});

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(10);
  }
}

describe('runOutboxRelay', () => {
  it('publishes the late-committing row once it commits, in order, and saves its position', async () => {
    await reset();
    const published: string[] = [];
    const ac = new AbortController();
    const early = await openTransaction(async (trx) => { await appendOutbox(trx, [msg('early')]); });
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('late')]));
    const loop = runOutboxRelay({ db: t.db, name: 'relay-a', signal: ac.signal, pollMs: 10, publish: async (r) => { published.push(r.subject); } });
    await delay(100);
    expect(published).toEqual([]);
    await early.commit();
    await until(() => published.length === 2, 'two publishes');
    ac.abort();
    await loop;
    expect(published).toEqual(['early', 'late']);
    const rows = await readAtLeast(null, 2);
    expect(await loadRelayPosition(t.db, 'relay-a')).toEqual({ txid: rows[1]!.txid, id: rows[1]!.id });
  });

  it('retries a failed publish from the failed row, reports the error, and resumes after a restart without repeats', async () => {
    await reset();
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('1'), msg('2'), msg('3')]));
    const published: string[] = [];
    const errors: unknown[] = [];
    let failOnce = true;
    const ac = new AbortController();
    const loop = runOutboxRelay({
      db: t.db, name: 'relay-b', signal: ac.signal, pollMs: 10, batchSize: 2,
      onError: (e) => errors.push(e),
      publish: async (r) => {
        if (r.subject === '2' && failOnce) { failOnce = false; throw new Error('nats down'); }
        published.push(r.subject);
      },
    });
    await until(() => published.length === 3, 'three publishes');
    ac.abort();
    await loop;
    expect(published).toEqual(['1', '2', '3']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['nats down']);

    // A restarted relay continues from the saved position: only new rows go out.
    await t.db.transaction().execute((trx) => appendOutbox(trx, [msg('4')]));
    const again: string[] = [];
    const ac2 = new AbortController();
    const loop2 = runOutboxRelay({ db: t.db, name: 'relay-b', signal: ac2.signal, pollMs: 10, publish: async (r) => { again.push(r.subject); } });
    await until(() => again.length === 1, 'one publish');
    await delay(50);
    ac2.abort();
    await loop2;
    expect(again).toEqual(['4']);
  });

  it('resolves promptly when aborted while idle', async () => {
    await reset();
    const ac = new AbortController();
    const loop = runOutboxRelay({ db: t.db, name: 'relay-c', signal: ac.signal, pollMs: 60_000, publish: async () => {} });
    await delay(50);
    const t0 = performance.now();
    ac.abort();
    await loop;
    expect(performance.now() - t0).toBeLessThan(1_000);
  });
});
