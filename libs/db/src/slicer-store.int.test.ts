import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { KubeObjectRow } from './object-store.ts';
import { loadReconciles } from './reconcile-log.ts';
import { commitIngestBatch, commitSliceWrites, loadSlicerSnapshot } from './slicer-store.ts';

let t: TestDb;
beforeEach(async () => {
  t = await withTestDb();
});
afterEach(async () => {
  await t?.close();
});

const row = (name: string, rv: string, o: { deleted?: boolean; kind?: KubeObjectRow['kind']; cluster?: string } = {}): KubeObjectRow =>
  deepFreeze({ cluster: o.cluster ?? 'c1', kind: o.kind ?? 'Pod', namespace: 'default', name, uid: `u-${name}`, resourceVersion: rv, deleted: o.deleted ?? false, body: makePod(name), kubeSeq: Number(rv) });
const slice = (name: string, generation: number): EndpointSlice => ({ ...makeSlice(name, [], { service: 'web' }), metadata: { ...makeSlice(name, [], { service: 'web' }).metadata, namespace: 'default', uid: `u-${name}`, generation } });

describe('the slicer store', () => {
  it('an ingest batch stores its objects and its offset together; older versions never win', async () => {
    await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 3, rows: [row('a', '10'), row('b', '11'), row('a', '9')] });
    await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 5, rows: [row('b', '12', { deleted: true }), row('b', '11')] });
    const snap = await loadSlicerSnapshot(t.db, 'c1', ['KUBE/p0', 'KUBE/nodes']);
    expect(Object.fromEntries(snap.offsets)).toEqual({ 'KUBE/p0': 5, 'KUBE/nodes': 0 });
    expect(snap.objects.map((o) => [o.name, o.resourceVersion, o.deleted])).toEqual([['a', '10', false], ['b', '12', true]]);
    expect(snap.objects[0]?.body).toEqual(makePod('a'));
  });

  it('a snapshot read a page at a time holds every object and slice of the cluster, in key order, whatever the page size', async () => {
    const obj = (kind: KubeObjectRow['kind'], namespace: string, name: string, o: { deleted?: boolean; cluster?: string } = {}): KubeObjectRow =>
      deepFreeze({ cluster: o.cluster ?? 'c1', kind, namespace, name, uid: `u-${kind}-${namespace}-${name}`, resourceVersion: '7', deleted: o.deleted ?? false, body: { kind, metadata: { name, namespace } }, kubeSeq: 7 });
    const rows = [
      ...['n1', 'n2', 'n3'].map((n) => obj('Node', '', n)),
      ...['a', 'b', 'c', 'd', 'e'].flatMap((n) => [obj('Pod', 'default', `p-${n}`), obj('Pod', 'kube-system', `p-${n}`)]),
      obj('Pod', 'default', 'gone', { deleted: true }),
      obj('Service', 'default', 'web'),
      obj('Endpoints', 'default', 'web'),
      obj('Pod', 'default', 'other-cluster', { cluster: 'c2' }),
    ];
    await commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 9, rows });
    const slices = ['default', 'kube-system'].flatMap((ns) => ['web-1', 'web-2', 'web-3', 'web-4'].map((n) => ({ ...slice(n, 1), metadata: { ...slice(n, 1).metadata, namespace: ns } })));
    await commitSliceWrites(t.db, { cluster: 'c1', upserts: slices, deletes: [], outbox: [], records: [] });
    await commitSliceWrites(t.db, { cluster: 'c2', upserts: [slice('web-x', 1)], deletes: [], outbox: [], records: [] });

    const whole = await loadSlicerSnapshot(t.db, 'c1', ['KUBE/p0']);
    const key = (o: KubeObjectRow) => `${o.kind}|${o.namespace}|${o.name}`;
    expect(whole.objects.map(key)).toEqual(rows.filter((r) => r.cluster === 'c1').map(key).sort());
    expect(whole.objects.find((o) => o.name === 'gone')?.deleted).toBe(true);
    expect(whole.slices.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)).toEqual(slices.map((s) => `${s.metadata.namespace}/${s.metadata.name}`).sort());
    // Page sizes that divide the counts exactly (a last, empty page) and that do not.
    for (const pageSize of [1, 2, 3, 4, 8, 1000]) {
      const paged = await loadSlicerSnapshot(t.db, 'c1', ['KUBE/p0'], { pageSize });
      expect(paged.objects, `page size ${pageSize}`).toEqual(whole.objects);
      expect(paged.slices, `page size ${pageSize}`).toEqual(whole.slices);
      expect(paged.offsets.get('KUBE/p0')).toBe(9);
    }
    await expect(loadSlicerSnapshot(t.db, 'c1', [], { pageSize: 0 })).rejects.toThrow(/page size must be a positive integer, got 0/);
  });

  it('a batch that fails stores neither objects nor offset', async () => {
    const bad = { ...row('a', '10'), kubeSeq: Number.NaN };
    await expect(commitIngestBatch(t.db, { consumer: 'KUBE/p0', offset: 3, rows: [bad] })).rejects.toThrow();
    const snap = await loadSlicerSnapshot(t.db, 'c1', ['KUBE/p0']);
    expect(snap.offsets.get('KUBE/p0')).toBe(0);
    expect(snap.objects).toEqual([]);
  });

  it('slice writes store bodies as given, delete by name, and append outbox rows and records in one transaction', async () => {
    await commitSliceWrites(t.db, {
      cluster: 'c1',
      upserts: [slice('web-a', 1), slice('web-b', 1)],
      deletes: [],
      outbox: [{ subject: 'slices.c1.default.web', msgId: (id) => `c1/outbox/${id}`, payload: { n: 1 } }],
      records: [{ cluster: 'c1', namespace: 'default', service: 'web', kubeSeqFrom: 1, kubeSeqTo: 2, reconcileId: 'p2n0-x', created: 2, updated: 0, deleted: 0, settings: { managedBy: 'm', maxEndpointsPerSlice: 7 } }],
    });
    await commitSliceWrites(t.db, { cluster: 'c1', upserts: [slice('web-b', 2)], deletes: [{ namespace: 'default', name: 'web-a' }], outbox: [], records: [] });
    const snap = await loadSlicerSnapshot(t.db, 'c1', []);
    expect(snap.slices.map((s) => [s.metadata.name, s.metadata.generation])).toEqual([['web-b', 2]]);
    const recs = await loadReconciles(t.db, 'c1', 'default', 'web');
    expect(recs.map((r) => r.settings)).toEqual([{ managedBy: 'm', maxEndpointsPerSlice: 7 }]);
    const outbox = await t.db.selectFrom('outbox').select(['msg_id', 'payload']).execute();
    expect(outbox.map((o) => o.payload)).toEqual([{ n: 1 }]);
    expect(outbox[0]?.msg_id).toMatch(/^c1\/outbox\/\d+$/);
  });

  it('a batch written as one statement (prefixed outbox ids) stores the same as the multi-statement path', async () => {
    const writes = (prefixed: boolean) => ({
      cluster: 'c1',
      upserts: [slice('web-a', 1), slice('web-b', 3)],
      deletes: [],
      outbox: [
        { subject: 'slices.c1.default.web', msgId: prefixed ? { prefix: 'c1/outbox/' } : (id: number) => `c1/outbox/${id}`, payload: { n: 1 } },
        { subject: 'slices.c1.default.api', msgId: 'fixed-id', payload: { n: 2 } },
      ],
      records: [{ cluster: 'c1', namespace: 'default', service: 'web', kubeSeqFrom: 1, kubeSeqTo: 2, reconcileId: 'p2n0-x', created: 2, updated: 0, deleted: 0, settings: { managedBy: 'm', maxEndpointsPerSlice: 7 } }],
    });
    await commitSliceWrites(t.db, writes(true));
    await commitSliceWrites(t.db, { cluster: 'c1', upserts: [slice('web-c', 1)], deletes: [{ namespace: 'default', name: 'web-a' }], outbox: [], records: [] });
    const snap = await loadSlicerSnapshot(t.db, 'c1', []);
    expect(snap.slices.map((s) => [s.metadata.name, s.metadata.generation])).toEqual([['web-b', 3], ['web-c', 1]]);
    const outbox = await t.db.selectFrom('outbox').select(['id', 'msg_id', 'payload']).orderBy('id').execute();
    expect(outbox.map((o) => [o.msg_id, o.payload])).toEqual([[`c1/outbox/${outbox[0]?.id}`, { n: 1 }], ['fixed-id', { n: 2 }]]);
    const recs = await loadReconciles(t.db, 'c1', 'default', 'web');
    expect(recs.map((r) => [r.kubeSeqFrom, r.kubeSeqTo, r.reconcileId, r.created, r.settings])).toEqual([[1, 2, 'p2n0-x', 2, { managedBy: 'm', maxEndpointsPerSlice: 7 }]]);
  });

  it('the outbox keeps each message as the JSON text written, key order included, for the relay to publish as it is', async () => {
    const payload = { type: 'SliceChanged.v1', zeta: 1, alpha: { z: [1, 2], a: null } };
    const one = { cluster: 'c1', upserts: [], deletes: [], records: [], outbox: [{ subject: 'slices.c1.default.web', msgId: { prefix: 'c1/outbox/' }, payload }] };
    const many = { ...one, outbox: [{ subject: 'slices.c1.default.web', msgId: (id: number) => `c1/outbox/${id}`, payload }] };
    await commitSliceWrites(t.db, one); // one statement
    await commitSliceWrites(t.db, many); // the transaction (a msgId function)
    // As the relay reads it (readOutboxBatch selects payload::text), without its commit gate.
    const rows = await sql<{ payload: string }>`select payload::text as payload from outbox order by id`.execute(t.db);
    expect(rows.rows.map((r) => r.payload)).toEqual([JSON.stringify(payload), JSON.stringify(payload)]);
  });

  it('a failing slice write leaves slices, outbox and records as they were', async () => {
    await expect(
      commitSliceWrites(t.db, {
        cluster: 'c1',
        upserts: [slice('web-a', 1), { ...slice('web-z', 1), metadata: { ...slice('web-z', 1).metadata, labels: {} } }],
        deletes: [],
        outbox: [{ subject: 's', msgId: 'm', payload: {} }],
        records: [],
      }),
    ).rejects.toThrow(/kubernetes.io\/service-name are required/);
    expect((await loadSlicerSnapshot(t.db, 'c1', [])).slices).toEqual([]);
    expect(await t.db.selectFrom('outbox').select('id').execute()).toEqual([]);
  });

  it('a snapshot holds only its own cluster', async () => {
    await commitIngestBatch(t.db, { consumer: 'x', offset: 1, rows: [row('a', '1', { cluster: 'c2' }), { ...row('web', '2'), kind: 'Service', body: makeService('web') }] });
    expect((await loadSlicerSnapshot(t.db, 'c1', [])).objects.map((o) => o.name)).toEqual(['web']);
  });
});
