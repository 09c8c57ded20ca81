import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { ServiceKey } from './dirty-services.ts';
import { buildClaimDirty, claimDirty, clearDirty, listDirty, markDirty, releaseDirty } from './dirty-services.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

// Every case works on its own table contents.
async function reset(): Promise<void> {
  await t.db.deleteFrom('dirty_services').execute();
}

const key = (name: string, namespace = 'default'): ServiceKey => ({ cluster: 'c', namespace, name });
const mark = (keys: readonly ServiceKey[], seq: number): Promise<void> => t.db.transaction().execute((trx) => markDirty(trx, keys, seq));

describe('buildClaimDirty', () => {
  it('compiles to one statement that locks with FOR UPDATE SKIP LOCKED and leases what it locked', () => {
    const c = buildClaimDirty(t.db, 5, { leaseMs: 1500, owner: 'w1' }).compile();
    expect(c.sql).toBe(
      'with "picked" as (select "cluster", "namespace", "name" from "dirty_services" ' +
      'where ("claimed_until" is null or "claimed_until" < now()) ' +
      'order by "since_seq", "cluster", "namespace", "name" limit $1 for update skip locked) ' +
      'update "dirty_services" set "claimed_by" = $2, "claimed_until" = now() + make_interval(secs => $3) from "picked" ' +
      'where "dirty_services"."cluster" = "picked"."cluster" and "dirty_services"."namespace" = "picked"."namespace" ' +
      'and "dirty_services"."name" = "picked"."name" ' +
      'returning "dirty_services"."cluster", "dirty_services"."namespace", "dirty_services"."name", "dirty_services"."since_seq", "dirty_services"."last_seq"',
    );
    expect(c.parameters).toEqual([5, 'w1', 1.5]);
  });
});

describe('markDirty', () => {
  it('keeps the first since_seq and raises last_seq on repeated marks; duplicates in one call collapse', async () => {
    await reset();
    await mark([key('a'), key('a'), key('b')], 10);
    await mark([key('a')], 12);
    await mark([key('a')], 11);
    expect(await listDirty(t.db)).toEqual([
      { ...key('a'), sinceSeq: 10, lastSeq: 12 },
      { ...key('b'), sinceSeq: 10, lastSeq: 10 },
    ]);
  });

  it('[] is a no-op', async () => {
    await reset();
    await mark([], 3);
    expect(await listDirty(t.db)).toEqual([]);
  });
});

describe('claimDirty (real round-trip)', () => {
  it('claims oldest marks first, up to the limit, and a second claimer gets the rest', async () => {
    await reset();
    await mark([key('late')], 30);
    await mark([key('early')], 10);
    await mark([key('middle')], 20);
    const first = await claimDirty(t.db, 2, { owner: 'w1' });
    expect(first.map((d) => d.name)).toEqual(['early', 'middle']);
    const second = await claimDirty(t.db, 10, { owner: 'w2' });
    expect(second.map((d) => d.name)).toEqual(['late']);
    expect(await claimDirty(t.db, 10)).toEqual([]);
  });

  it('skips rows locked by a claimer still in its transaction instead of waiting for it', async () => {
    await reset();
    await mark([key('x'), key('y'), key('z')], 5);
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let inTrx!: readonly string[];
    let claimed!: () => void;
    const claimedInTrx = new Promise<void>((r) => { claimed = r; });
    const holder = t.db.transaction().execute(async (trx) => {
      inTrx = (await claimDirty(trx, 1, { owner: 'holder' })).map((d) => d.name);
      claimed();
      await held;
    });
    await claimedInTrx;
    // The holder's lease is not committed yet, so only the row lock keeps the other claimer off 'x'.
    const other = await Promise.race([
      claimDirty(t.db, 10, { owner: 'other' }),
      delay(5_000).then(() => 'blocked' as const),
    ]);
    release();
    await holder;
    expect(inTrx).toEqual(['x']);
    expect(other === 'blocked' ? other : other.map((d) => d.name)).toEqual(['y', 'z']);
  });

  it('a lease that expired makes the row claimable again', async () => {
    await reset();
    await mark([key('s')], 1);
    expect(await claimDirty(t.db, 1, { leaseMs: 1 })).toHaveLength(1);
    await delay(20);
    expect((await claimDirty(t.db, 1)).map((d) => d.name)).toEqual(['s']);
  });

  it('releaseDirty makes claimed rows claimable at once', async () => {
    await reset();
    await mark([key('r')], 1);
    await claimDirty(t.db, 1);
    expect(await claimDirty(t.db, 1)).toEqual([]);
    await releaseDirty(t.db, [key('r')]);
    expect(await claimDirty(t.db, 1)).toHaveLength(1);
  });
});

describe('clearDirty', () => {
  it('clears a row reconciled up to its newest mark', async () => {
    await reset();
    await mark([key('a')], 7);
    const [c] = await claimDirty(t.db, 1);
    expect(await t.db.transaction().execute((trx) => clearDirty(trx, key('a'), c!.lastSeq))).toBe(true);
    expect(await listDirty(t.db)).toEqual([]);
  });

  it('keeps a row that got a newer mark during the reconcile, unclaimed, with since_seq past the cleared range', async () => {
    await reset();
    await mark([key('a')], 7);
    const [c] = await claimDirty(t.db, 1, { leaseMs: 60_000 });
    await mark([key('a')], 9); // arrives while "reconciling"
    expect(await t.db.transaction().execute((trx) => clearDirty(trx, key('a'), c!.lastSeq))).toBe(false);
    expect(await listDirty(t.db)).toEqual([{ ...key('a'), sinceSeq: 8, lastSeq: 9 }]);
    const again = await claimDirty(t.db, 1);
    expect(again.map((d) => [d.name, d.sinceSeq, d.lastSeq])).toEqual([['a', 8, 9]]);
  });

  it('returns false for a key that is not dirty', async () => {
    await reset();
    expect(await t.db.transaction().execute((trx) => clearDirty(trx, key('nope'), 100))).toBe(false);
    const n = await sql<{ n: string }>`select count(*) as n from dirty_services`.execute(t.db);
    expect(n.rows[0]?.n).toBe('0');
  });
});
