import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { makePod, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { LeaseClaim } from './leases.ts';
import { FencedError, acquireLease, leaseHeartbeat, readLeases, releaseLeases, renewLeases } from './leases.ts';
import { loadRelayPosition, saveRelayPosition } from './outbox-relay.ts';
import { commitIngestBatch, commitSliceWrites, loadSlicerSnapshot } from './slicer-store.ts';
import { getOffset } from './offsets.ts';

let t: TestDb;
beforeEach(async () => {
  t = await withTestDb();
});
afterEach(async () => {
  await t?.close();
});

const G = 'slicer/c1';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const podRow = (name: string, seq: number) => ({ cluster: 'c1', kind: 'Pod' as const, namespace: 'default', name, uid: `u-${name}`, resourceVersion: String(seq), deleted: false, body: makePod(name), kubeSeq: seq });

/** a holds partition 0 with a short lease, lets it expire, b takes it over: a's claim is deposed. */
async function deposed(): Promise<{ old: LeaseClaim; current: LeaseClaim }> {
  await leaseHeartbeat(t.db, G, 'a', 'i-a', 300, 2);
  const old = await acquireLease(t.db, G, 0, 'a', 300);
  expect(old).not.toBeNull();
  await pause(400);
  const current = await acquireLease(t.db, G, 0, 'b', 5000);
  expect(current).not.toBeNull();
  return { old: old as LeaseClaim, current: current as LeaseClaim };
}

describe('partition leases', () => {
  it('one holder at a time: a live lease is refused to another member, each acquisition gets a larger token', async () => {
    const round = await leaseHeartbeat(t.db, G, 'a', 'i-a', 5000, 3);
    expect(round.members).toEqual(['a']);
    expect(round.leases.map((l) => [l.partition, l.holder, l.live])).toEqual([[0, null, false], [1, null, false], [2, null, false]]);
    const a = await acquireLease(t.db, G, 1, 'a', 5000);
    expect(a).toMatchObject({ partition: 1, holder: 'a', token: 1 });
    expect(await acquireLease(t.db, G, 1, 'b', 5000)).toBeNull();
    // The same member (a restart under its name) takes it back at once, with a new token.
    expect(await acquireLease(t.db, G, 1, 'a', 5000)).toMatchObject({ token: 2 });
    await releaseLeases(t.db, [{ group: G, partition: 1, holder: 'a', token: 2 }]);
    expect(await acquireLease(t.db, G, 1, 'b', 5000)).toMatchObject({ holder: 'b', token: 3 });
    expect((await readLeases(t.db, G)).find((l) => l.partition === 1)).toMatchObject({ holder: 'b', live: true });
  });

  it('an expired lease goes to the next member, and the old holder can no longer renew it', async () => {
    const { old, current } = await deposed();
    expect(current.token).toBe(old.token + 1);
    expect([...(await renewLeases(t.db, [old], 5000))]).toEqual([]);
    expect([...(await renewLeases(t.db, [current], 5000))]).toEqual([0]);
  });

  it('a second live process under the same member name is reported', async () => {
    await leaseHeartbeat(t.db, G, 'a', 'first', 5000, 1);
    expect((await leaseHeartbeat(t.db, G, 'a', 'second', 5000, 1)).nameClash).toBe(true);
    expect((await leaseHeartbeat(t.db, G, 'a', 'second', 5000, 1)).nameClash).toBe(false);
  });
});

describe('fencing: a deposed owner\'s late write is refused, not applied', () => {
  it('an ingest batch with a deposed claim writes neither objects nor offset', async () => {
    const { old, current } = await deposed();
    await expect(commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 7, rows: [podRow('late', 7)], fence: [old] })).rejects.toBeInstanceOf(FencedError);
    expect(await getOffset(t.db, 'KUBE/p0')).toBe(0);
    expect((await loadSlicerSnapshot(t.db, 'c1', [])).objects).toEqual([]);
    await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 8, rows: [podRow('now', 8)], fence: [current] });
    expect(await getOffset(t.db, 'KUBE/p0')).toBe(8);
  });

  it('a large ingest batch (the transaction path) with a deposed claim is refused too', async () => {
    const { old } = await deposed();
    const rows = Array.from({ length: 2100 }, (_, i) => podRow(`p${i}`, i + 1));
    await expect(commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 2100, rows, fence: [old] })).rejects.toBeInstanceOf(FencedError);
    expect(await getOffset(t.db, 'KUBE/p0')).toBe(0);
  });

  it('a batch of slice writes refuses the whole batch when one of its partitions was lost', async () => {
    const { old } = await deposed();
    await leaseHeartbeat(t.db, G, 'a', 'i-a', 5000, 2);
    const p1 = (await acquireLease(t.db, G, 1, 'a', 5000)) as LeaseClaim;
    const slice = { ...makeSlice('web-abc', [], { service: 'web' }), metadata: { ...makeSlice('web-abc', [], { service: 'web' }).metadata, namespace: 'default', uid: 'u1', generation: 1 } };
    const writes = {
      cluster: 'c1',
      upserts: [slice],
      deletes: [],
      outbox: [{ subject: 'slices.c1.default.web', msgId: 'm1', payload: { v: 1 } }],
      records: [{ cluster: 'c1', namespace: 'default', service: 'web', kubeSeqFrom: 1, kubeSeqTo: 2, reconcileId: 'r1', created: 1, updated: 0, deleted: 0 }],
    };
    await expect(commitSliceWrites(t.db, { ...writes, fence: [old, p1] })).rejects.toBeInstanceOf(FencedError);
    const counts = await sql<{ slices: string; outbox: string; reconciles: string }>`select (select count(*) from endpoint_slices) as slices, (select count(*) from outbox) as outbox, (select count(*) from reconciles) as reconciles`.execute(t.db);
    expect(counts.rows[0]).toEqual({ slices: '0', outbox: '0', reconciles: '0' });
    await commitSliceWrites(t.db, { ...writes, fence: [p1] });
    const after = await sql<{ slices: string }>`select count(*) as slices from endpoint_slices`.execute(t.db);
    expect(after.rows[0]?.slices).toBe('1');
  });

  it("a deposed relay cannot move the relay's position", async () => {
    const { old, current } = await deposed();
    await expect(saveRelayPosition(t.db, 'slicer', { txid: '10', id: 5 }, [old])).rejects.toBeInstanceOf(FencedError);
    expect(await loadRelayPosition(t.db, 'slicer')).toBeNull();
    await saveRelayPosition(t.db, 'slicer', { txid: '10', id: 5 }, [current]);
    expect(await loadRelayPosition(t.db, 'slicer')).toEqual({ txid: '10', id: 5 });
  });

  it("the holder's renewal does not wait for its own fenced transaction that is writing", async () => {
    await leaseHeartbeat(t.db, G, 'a', 'i-a', 5000, 1);
    const a = (await acquireLease(t.db, G, 0, 'a', 5000)) as LeaseClaim;
    let renewedAt = 0;
    const closedAt = await t.db.transaction().execute(async (trx) => {
      await commitIngestBatch(trx, { consumer: 'KUBE/p0', offset: 4, rows: [podRow('y', 4)], fence: [a] });
      const renewing = renewLeases(t.db, [a], 5000).then((r) => {
        renewedAt = Date.now();
        return r;
      });
      // Renewed while the writer still holds its fence: a renewal queued behind writes lets a
      // busy holder's lease lapse.
      expect(await Promise.race([renewing, pause(2000).then(() => 'still waiting after 2 s')])).toEqual(new Set([0]));
      return Date.now();
    });
    expect(renewedAt).toBeGreaterThan(0);
    expect(renewedAt).toBeLessThanOrEqual(closedAt);
    expect(await getOffset(t.db, 'KUBE/p0')).toBe(4);
  });

  it('a takeover waits for the fenced transaction that is writing, then deposes it', async () => {
    await leaseHeartbeat(t.db, G, 'a', 'i-a', 5000, 1);
    const a = (await acquireLease(t.db, G, 0, 'a', 400)) as LeaseClaim;
    let takenAt = 0;
    const committedAt = await t.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await commitIngestBatch(trx, { consumer: 'KUBE/p0', offset: 3, rows: [podRow('x', 3)], fence: [a] });
      // The lease expires while this transaction still runs; b's takeover must wait for it.
      await pause(500);
      const taking = acquireLease(t.db, G, 0, 'b', 5000).then((c) => {
        takenAt = Date.now();
        return c;
      });
      await pause(200);
      expect(takenAt).toBe(0);
      return { at: Date.now(), taking };
    });
    expect(await committedAt.taking).toMatchObject({ holder: 'b', token: a.token + 1 });
    expect(takenAt).toBeGreaterThanOrEqual(committedAt.at);
    expect(await getOffset(t.db, 'KUBE/p0')).toBe(3);
  });
});
