import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { makeNode, makePod, makeService } from '@slicemesh/testing';
import { listDirty, loadReconciles, loadSlices, markDirty, upsertObjects } from '@slicemesh/db';
import type { KubeObjectRow } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import { ingestMessage } from './ingest.ts';
import { buildLoadDirty, buildPodsOnNode, buildSelectPods, buildServicesInNamespace, isRetryableTxError, pgStores } from './pg-store.ts';
import { reconcileService } from './reconcile.ts';
import type { IngestStore, ReconcileStore } from './ports.ts';
import { MemoryStore } from './testing/memory-store.ts';
import type { WatchedObject } from './testing/kube-events.ts';
import { atVersion, kubeMessage } from './testing/kube-events.ts';

let t: TestDb;
beforeEach(async () => {
  t = await withTestDb();
});
afterEach(async () => {
  await t.close();
});

const row = (obj: WatchedObject, seq: number, deleted = false): KubeObjectRow => ({
  cluster: 'c1',
  kind: obj.kind,
  namespace: obj.kind === 'Node' ? '' : (obj.metadata.namespace ?? 'default'),
  name: obj.metadata.name,
  uid: obj.metadata.uid ?? '',
  resourceVersion: String(seq),
  deleted,
  body: obj,
  kubeSeq: seq,
});

describe('slicer queries', () => {
  it('podsOnNode: jsonb containment on spec.nodeName, live pods only, sorted by namespace/name', async () => {
    const q = buildPodsOnNode(t.db, 'c1', 'node-1').compile();
    expect(q.sql).toBe(
      'select "body" from "kube_objects" where "cluster" = $1 and "kind" = $2 and "deleted" = $3 and "body" @> $4 order by "namespace", "name"',
    );
    expect(q.parameters).toEqual(['c1', 'Pod', false, '{"spec":{"nodeName":"node-1"}}']);

    await t.db.transaction().execute((trx) =>
      upsertObjects(trx, [
        row(makePod('b', { namespace: 'ns1', nodeName: 'node-1' }), 1),
        row(makePod('a', { namespace: 'ns2', nodeName: 'node-1' }), 2),
        row(makePod('c', { namespace: 'ns1', nodeName: 'node-2' }), 3),
        row(makePod('gone', { namespace: 'ns1', nodeName: 'node-1' }), 4, true),
        row(makeNode('node-1'), 5),
      ]),
    );
    const pods = await buildPodsOnNode(t.db, 'c1', 'node-1').execute();
    expect(pods.map((r) => (r.body as { metadata: { namespace: string; name: string } }).metadata)).toMatchObject([
      { namespace: 'ns1', name: 'b' },
      { namespace: 'ns2', name: 'a' },
    ]);
  });

  it('servicesInNamespace: live Services of one namespace, sorted by name', async () => {
    const q = buildServicesInNamespace(t.db, 'c1', 'ns1').compile();
    expect(q.sql).toBe('select "body" from "kube_objects" where "cluster" = $1 and "namespace" = $2 and "kind" = $3 and "deleted" = $4 order by "name"');
    await t.db.transaction().execute((trx) =>
      upsertObjects(trx, [row(makeService('z', { namespace: 'ns1' }), 1), row(makeService('a', { namespace: 'ns1' }), 2), row(makeService('x', { namespace: 'ns2' }), 3), row(makeService('d', { namespace: 'ns1' }), 4, true)]),
    );
    const names = (await buildServicesInNamespace(t.db, 'c1', 'ns1').execute()).map((r) => (r.body as { metadata: { name: string } }).metadata.name);
    expect(names).toEqual(['a', 'z']);
  });

  it('selectPods: A.1.1 equality selector as jsonb containment on labels, live pods of one namespace', async () => {
    const q = buildSelectPods(t.db, 'c1', 'ns1', { app: 'web' }).compile();
    expect(q.sql).toBe(
      'select "body" from "kube_objects" where "cluster" = $1 and "namespace" = $2 and "kind" = $3 and "deleted" = $4 and "body" @> $5 order by "name"',
    );
    expect(q.parameters).toEqual(['c1', 'ns1', 'Pod', false, '{"metadata":{"labels":{"app":"web"}}}']);
    await t.db.transaction().execute((trx) =>
      upsertObjects(trx, [
        row(makePod('extra-labels', { namespace: 'ns1', labels: { app: 'web', tier: 'fe' } }), 1),
        row(makePod('other-app', { namespace: 'ns1', labels: { app: 'api' } }), 2),
        row(makePod('other-ns', { namespace: 'ns2', labels: { app: 'web' } }), 3),
        row(makePod('deleted', { namespace: 'ns1', labels: { app: 'web' } }), 4, true),
        row(makePod('a-match', { namespace: 'ns1', labels: { app: 'web' } }), 5),
      ]),
    );
    const names = (await buildSelectPods(t.db, 'c1', 'ns1', { app: 'web' }).execute()).map((r) => (r.body as { metadata: { name: string } }).metadata.name);
    expect(names).toEqual(['a-match', 'extra-labels']);
  });

  it('loadDirty reads one mark by key', () => {
    const q = buildLoadDirty(t.db, { cluster: 'c1', namespace: 'ns', name: 'web' }).compile();
    expect(q.sql).toBe('select "cluster", "namespace", "name", "since_seq", "last_seq" from "dirty_services" where "cluster" = $1 and "namespace" = $2 and "name" = $3');
  });
});

describe('pgStores', () => {
  const cases = [
    { name: 'serialization_failure is retried', err: { code: '40001' }, want: true },
    { name: 'deadlock_detected is retried', err: { code: '40P01' }, want: true },
    { name: 'a unique violation is not', err: { code: '23505' }, want: false },
    { name: 'a plain error is not', err: new Error('x'), want: false },
    { name: 'null is not', err: null, want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(isRetryableTxError(tc.err)).toBe(tc.want));

  it('a snapshot that loses a mark to a concurrent ingest is rerun and sees the newer mark', async () => {
    const { reconcile } = pgStores(t.db);
    const key = { cluster: 'c1', namespace: 'ns', name: 'web' };
    await t.db.transaction().execute((trx) => markDirty(trx, [key], 5));
    const seen: number[] = [];
    const cleared = await reconcile.snapshot(async (tx) => {
      const d = await tx.loadDirty(key);
      seen.push(d?.lastSeq ?? -1);
      // An ingest commits a newer mark after this snapshot was taken, on another connection.
      if (seen.length === 1) await t.db.transaction().execute((trx) => markDirty(trx, [key], 9));
      return tx.clearDirty(key, d?.lastSeq ?? 0);
    });
    expect(seen).toEqual([5, 9]);
    expect(cleared).toBe(true);
    expect(await listDirty(t.db)).toEqual([]);
  });

  it('the in-memory fake used by unit tests behaves like Postgres for a scripted run', async () => {
    type Stores = { ingest: IngestStore; reconcile: ReconcileStore };
    const script = async (stores: Stores) => {
      const ingestDeps = { store: stores.ingest, deadLetters: { publish: async () => {} }, cluster: 'c1', partitions: 1, prefix: '', ownsPartition: () => true, batchPeriodMs: 0 };
      let ids = 0;
      const deps = {
        store: stores.reconcile,
        cluster: 'c1',
        partitions: 1,
        prefix: '',
        managedBy: MANAGED_BY_CONTROLLER,
        maxEndpointsPerSlice: 2,
        partitionConsumer: () => 'part',
        nodesConsumer: 'nodes',
        triggerTimes: new TriggerTimeTracker(),
        randomId: () => String(++ids),
      };
      let seq = 0;
      const put = async (obj: WatchedObject, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1', rv?: number) =>
        (await ingestMessage(obj.kind === 'Node' ? 'nodes' : 'part', kubeMessage(++seq, atVersion(obj, rv ?? seq), { type }), ingestDeps)).result;
      const web = { namespace: 'default', name: 'web' };
      const results: unknown[] = [];
      results.push(await put(makeNode('node-1', { zone: 'a' })), await put(makeService('web', { selector: { app: 'web' } })));
      for (let i = 1; i <= 5; i++) results.push(await put(makePod(`p${i}`, { labels: { app: 'web' }, ips: [`10.0.0.${i}`] })));
      results.push(await put(makePod('p1', { labels: { app: 'web' }, ips: ['10.0.0.9'] }), 'Upserted.v1', 1)); // older version: stale
      results.push(await reconcileService(web, deps));
      results.push(await put(makePod('p2', { labels: { app: 'web' }, ips: ['10.0.0.2'] }), 'Deleted.v1'));
      results.push(await put(makePod('p3', { labels: { app: 'web' }, ips: ['10.0.0.3'], ready: false })));
      results.push(await put(makePod('p6', { labels: { app: 'web' }, ips: ['10.0.0.6'], nodeName: 'ghost' })));
      results.push(await reconcileService(web, deps), await reconcileService(web, deps));
      results.push(await put(makeService('web', { selector: { app: 'web' } }), 'Deleted.v1'));
      results.push(await reconcileService(web, deps));
      return { results, dirty: await stores.reconcile.listDirty() };
    };
    const memory = new MemoryStore();
    const onMemory = await script(memory);
    const onPg = await script(pgStores(t.db));
    expect(onPg).toEqual(onMemory);
    const pgSlices = await t.db.selectFrom('endpoint_slices').select('body').orderBy('name').execute();
    expect(pgSlices.map((r) => r.body)).toEqual(memory.slicesOf('c1'));
    const pgOutbox = await t.db.selectFrom('outbox').select('payload').orderBy('id').execute();
    expect(pgOutbox.map((r) => r.payload)).toEqual(memory.outbox.map((r) => JSON.parse(JSON.stringify(r.payload)) as unknown));
    expect(onMemory.results).toContain('stale');
  });

  it('ingest and reconcile on Postgres: slices, outbox row with its msgId, replay record, cleared mark', async () => {
    const stores = pgStores(t.db);
    const ingestDeps = { store: stores.ingest, deadLetters: { publish: async () => {} }, cluster: 'c1', partitions: 1, prefix: '', ownsPartition: () => true, batchPeriodMs: 0 };
    let seq = 0;
    await ingestMessage('nodes', kubeMessage(++seq, atVersion(makeNode('node-1'), 1)), ingestDeps);
    for (const obj of [makeService('web', { selector: { app: 'web' } }), makePod('p1', { labels: { app: 'web' } })]) {
      await ingestMessage('part', kubeMessage(++seq, atVersion(obj, seq)), ingestDeps);
    }
    const out = await reconcileService(
      { namespace: 'default', name: 'web' },
      {
        store: stores.reconcile,
        cluster: 'c1',
        partitions: 1,
        prefix: '',
        managedBy: MANAGED_BY_CONTROLLER,
        maxEndpointsPerSlice: 100,
        partitionConsumer: () => 'part',
        nodesConsumer: 'nodes',
        triggerTimes: new TriggerTimeTracker(),
      },
    );
    expect(out).toMatchObject({ result: 'changed', created: 1, kubeSeq: { from: 2, to: 3, nodesTo: 1 }, cleared: true });
    expect(out.reconcileID).toMatch(/^p3n1-[0-9a-f]{8}$/);
    const slices = await loadSlices(t.db, 'c1', 'default', 'web');
    expect(slices).toHaveLength(1);
    const outbox = await t.db.selectFrom('outbox').select(['id', 'subject', 'msg_id', 'payload']).execute();
    expect(outbox).toHaveLength(1);
    expect(outbox[0]?.msg_id).toBe(`c1/outbox/${outbox[0]?.id}`);
    expect(outbox[0]?.subject).toBe('slices.c1.default.web');
    expect((outbox[0]?.payload as { upserts: unknown[] }).upserts).toEqual(slices);
    expect(await loadReconciles(t.db, 'c1', 'default', 'web')).toMatchObject([{ kubeSeqFrom: 2, kubeSeqTo: 3, reconcileId: out.reconcileID, created: 1 }]);
    expect(await listDirty(t.db)).toEqual([]);
  });
});
