import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { KubeObjectRow } from './object-store.ts';
import { appendOutbox } from './outbox.ts';
import { readOutboxBatch } from './outbox-relay.ts';
import { commitIngestBatch, commitSliceWrites } from './slicer-store.ts';
import { listKubeSnapshots, loadKubeSnapshot, writeKubeSnapshot } from './kube-snapshots.ts';

let t: TestDb;
beforeEach(async () => {
  t = await withTestDb();
});
afterEach(async () => {
  await t?.close();
});

const C = 'c1';
const row = (kind: 'Pod' | 'Service', namespace: string, name: string, seq: number): KubeObjectRow => ({
  cluster: C, kind, namespace, name, uid: `u-${namespace}-${name}`, resourceVersion: String(seq), deleted: false, kubeSeq: seq,
  body: kind === 'Pod' ? makePod(name, { namespace }) : makeService(name, { namespace }),
});
const node: KubeObjectRow = { cluster: C, kind: 'Node', namespace: '', name: 'n1', uid: 'u-n1', resourceVersion: '3', deleted: false, kubeSeq: 3, body: makeNode('n1') };

/** Partition "mine": pods p0..p6 and a Service in it, a pod elsewhere, two slices; offset 20. */
async function seed(): Promise<void> {
  const rows = [...Array.from({ length: 7 }, (_, i) => row('Pod', 'mine', `p${i}`, i + 1)), row('Service', 'mine', 'web', 8), row('Pod', 'other', 'x', 9)];
  await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 20, rows });
  await commitSliceWrites(t.db, { cluster: C, upserts: [makeSlice('web-a', [], { namespace: 'mine' }), makeSlice('web-b', [], { namespace: 'mine' }), makeSlice('x-a', [], { namespace: 'other', service: 'x' })], deletes: [], outbox: [], records: [] });
}

const input = { cluster: C, partition: 0, partitions: 2, consumer: 'KUBE/p0', seq: 20, nodesSeq: 3, nodes: [node], ownsNamespace: (ns: string) => ns === 'mine', fence: [] };

describe('writeKubeSnapshot copies in short transactions from one fixed view', () => {
  it('holds every object of the partition, its nodes and slices, whatever the chunk size', async () => {
    await seed();
    const header = await writeKubeSnapshot(t.db, input, () => {}, { chunkRows: 2 });
    expect([header.objects, header.slices]).toEqual([8 + 1, 2]);
    const snap = await loadKubeSnapshot(t.db, C, 0);
    expect(snap?.rows.map((r) => `${r.kind}/${r.namespace}/${r.name}`)).toEqual(['Node//n1', ...Array.from({ length: 7 }, (_, i) => `Pod/mine/p${i}`), 'Service/mine/web']);
    expect(snap?.sliceBodies.map((s) => s.metadata.name)).toEqual(['web-a', 'web-b']);
  });

  it('reads the state at the committed offset: writes made while it copies are not in it', async () => {
    await seed();
    let wrote = false;
    await writeKubeSnapshot(t.db, input, () => {}, {
      chunkRows: 2,
      onCopied: async () => {
        if (wrote) return;
        wrote = true;
        await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 21, rows: [row('Pod', 'mine', 'p9', 21), { ...row('Pod', 'mine', 'p6', 22), deleted: true }] });
        await commitSliceWrites(t.db, { cluster: C, upserts: [makeSlice('web-c', [], { namespace: 'mine' })], deletes: [], outbox: [], records: [] });
      },
    });
    const snap = await loadKubeSnapshot(t.db, C, 0);
    expect(snap?.rows.filter((r) => r.kind === 'Pod').map((r) => [r.name, r.deleted])).toEqual(Array.from({ length: 7 }, (_, i) => [`p${i}`, false]));
    expect(snap?.sliceBodies.map((s) => s.metadata.name)).toEqual(['web-a', 'web-b']);
  });

  it('does not hold the outbox back while it copies (no transaction of its own stays open with writes)', async () => {
    await seed();
    const seen: number[] = [];
    await writeKubeSnapshot(t.db, input, () => {}, {
      chunkRows: 2,
      onCopied: async (rows) => {
        if (rows !== 2) return;
        await t.db.transaction().execute((trx) => appendOutbox(trx, [{ subject: 's', msgId: 'during-the-copy', payload: {} }]));
        // The relay publishes rows of transactions older than the oldest one writing. Other
        // tests on the server may hold the gate for a moment: poll.
        for (const until = Date.now() + 5000; seen.length === 0 && Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
          seen.push(...(await readOutboxBatch(t.db, { after: null, limit: 10 })).map((r) => r.id));
        }
      },
    });
    expect(seen).toHaveLength(1);
  });

  it('a copy that fails leaves no snapshot behind', async () => {
    await seed();
    await expect(writeKubeSnapshot(t.db, input, () => {}, { chunkRows: 2, onCopied: () => { throw new Error('disk full'); } })).rejects.toThrow('disk full');
    expect(await listKubeSnapshots(t.db, C)).toEqual([]);
    expect(Number((await sql<{ n: string }>`select count(*) as n from kube_snapshot_objects`.execute(t.db)).rows[0]?.n)).toBe(0);
  });
});
