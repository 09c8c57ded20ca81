import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { KubeObjectRow } from './object-store.ts';
import { buildUpsertObjects, loadNamespaceObjects, loadNodes, loadObject, loadService, upsertObjects } from './object-store.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

let clusterSeq = 0;
const freshCluster = (): string => `c${++clusterSeq}`;

function podRow(cluster: string, name: string, rv: string, o: { deleted?: boolean; seq?: number; ip?: string } = {}): KubeObjectRow {
  return deepFreeze({
    cluster, kind: 'Pod', namespace: 'default', name, uid: `uid-${name}`, resourceVersion: rv,
    deleted: o.deleted ?? false, body: makePod(name, { ips: [o.ip ?? '10.0.0.1'] }), kubeSeq: o.seq ?? 1,
  });
}

describe('buildUpsertObjects', () => {
  it('compiles to one upsert of a JSON batch guarded by the newer-version rule', () => {
    const c = buildUpsertObjects([podRow('c', 'a', '10', { seq: 7 }), podRow('c', 'b', '11', { seq: 8 })]).compile(t.db);
    expect(c.sql).toMatch(/^insert into kube_objects \(cluster, kind, namespace, name, uid, resource_version, deleted, body, kube_seq\)\s+select [\s\S]*\sfrom jsonb_to_recordset\(\$1::jsonb\)/);
    expect(c.sql).toContain("then excluded.resource_version::numeric > kube_objects.resource_version::numeric");
    expect(c.sql).toMatch(/returning cluster, kind, namespace, name$/);
    expect(c.parameters).toHaveLength(1);
    expect(JSON.parse(c.parameters[0] as string)[0]).toEqual({
      cluster: 'c', kind: 'Pod', namespace: 'default', name: 'a', uid: 'uid-a', resource_version: '10', deleted: false, body: makePod('a'), kube_seq: 7,
    });
  });
});

describe('upsertObjects version guard (real round-trip)', () => {
  interface Case {
    name: string;
    first: { rv: string; deleted?: boolean; ip?: string };
    second: { rv: string; deleted?: boolean; ip?: string };
    applied: boolean;
    want: { rv: string; deleted: boolean; ip: string };
  }
  const cases: Case[] = [
    { name: 'a newer integer version replaces the row', first: { rv: '9' }, second: { rv: '10', ip: '10.0.0.2' }, applied: true, want: { rv: '10', deleted: false, ip: '10.0.0.2' } },
    { name: 'a stale duplicate (older version) never regresses the row', first: { rv: '10', ip: '10.0.0.2' }, second: { rv: '9' }, applied: false, want: { rv: '10', deleted: false, ip: '10.0.0.2' } },
    { name: 'the same version again is a no-op', first: { rv: '10' }, second: { rv: '10', ip: '10.0.0.9' }, applied: false, want: { rv: '10', deleted: false, ip: '10.0.0.1' } },
    { name: 'a delete at a newer version writes a tombstone', first: { rv: '10' }, second: { rv: '11', deleted: true }, applied: true, want: { rv: '11', deleted: true, ip: '10.0.0.1' } },
    { name: 'a delete at the live version (relist) still writes the tombstone', first: { rv: '10' }, second: { rv: '10', deleted: true }, applied: true, want: { rv: '10', deleted: true, ip: '10.0.0.1' } },
    { name: 'a stale upsert never resurrects a tombstone', first: { rv: '11', deleted: true }, second: { rv: '10', ip: '10.0.0.3' }, applied: false, want: { rv: '11', deleted: true, ip: '10.0.0.1' } },
    { name: 'an upsert at the tombstone version does not resurrect it', first: { rv: '11', deleted: true }, second: { rv: '11' }, applied: false, want: { rv: '11', deleted: true, ip: '10.0.0.1' } },
    { name: 'a recreated object (newer version) replaces the tombstone', first: { rv: '11', deleted: true }, second: { rv: '12', ip: '10.0.0.4' }, applied: true, want: { rv: '12', deleted: false, ip: '10.0.0.4' } },
    { name: 'opaque versions: a different value is applied', first: { rv: 'abc' }, second: { rv: 'abd', ip: '10.0.0.5' }, applied: true, want: { rv: 'abd', deleted: false, ip: '10.0.0.5' } },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const cluster = freshCluster();
      const first = podRow(cluster, 'p', tc.first.rv, { deleted: tc.first.deleted, ip: tc.first.ip, seq: 1 });
      const second = podRow(cluster, 'p', tc.second.rv, { deleted: tc.second.deleted, ip: tc.second.ip, seq: 2 });
      const a1 = await t.db.transaction().execute((trx) => upsertObjects(trx, [first]));
      expect(a1).toEqual([{ cluster, kind: 'Pod', namespace: 'default', name: 'p' }]);
      const a2 = await t.db.transaction().execute((trx) => upsertObjects(trx, [second]));
      expect(a2).toHaveLength(tc.applied ? 1 : 0);
      const row = await loadObject(t.db, { cluster, kind: 'Pod', namespace: 'default', name: 'p' });
      expect(row?.resourceVersion).toBe(tc.want.rv);
      expect(row?.deleted).toBe(tc.want.deleted);
      expect((row?.body as { status: { podIP: string } }).status.podIP).toBe(tc.want.ip);
      expect(row?.kubeSeq).toBe(tc.applied ? 2 : 1);
    });
  }

  it('duplicates inside one batch collapse to the newest (Postgres rejects a key twice per statement)', async () => {
    const cluster = freshCluster();
    const applied = await t.db.transaction().execute((trx) => upsertObjects(trx, [
      podRow(cluster, 'p', '12', { ip: '10.0.0.12' }), podRow(cluster, 'p', '9'), podRow(cluster, 'p', '11'),
    ]));
    expect(applied).toHaveLength(1);
    expect((await loadObject(t.db, { cluster, kind: 'Pod', namespace: 'default', name: 'p' }))?.resourceVersion).toBe('12');
  });

  it('writes more rows than one batch holds (1203 rows → 3 statements)', async () => {
    const cluster = freshCluster();
    const rows = Array.from({ length: 1203 }, (_, i) => podRow(cluster, `p${String(i).padStart(4, '0')}`, String(i + 1)));
    const applied = await t.db.transaction().execute((trx) => upsertObjects(trx, rows));
    expect(applied).toHaveLength(1203);
    const { pods } = await loadNamespaceObjects(t.db, cluster, 'default');
    expect(pods).toHaveLength(1203);
  });

  it('[] writes nothing and returns []', async () => {
    expect(await t.db.transaction().execute((trx) => upsertObjects(trx, []))).toEqual([]);
  });
});

describe('loaders', () => {
  it('loadNamespaceObjects returns live services, pods and endpoints of the namespace, sorted by name', async () => {
    const cluster = freshCluster();
    const rows: KubeObjectRow[] = [
      { cluster, kind: 'Service', namespace: 'default', name: 'web', uid: 's1', resourceVersion: '1', deleted: false, body: makeService('web'), kubeSeq: 1 },
      { cluster, kind: 'Service', namespace: 'default', name: 'gone', uid: 's2', resourceVersion: '2', deleted: true, body: makeService('gone'), kubeSeq: 2 },
      { cluster, kind: 'Service', namespace: 'other', name: 'api', uid: 's3', resourceVersion: '3', deleted: false, body: makeService('api', { namespace: 'other' }), kubeSeq: 3 },
      { cluster, kind: 'Endpoints', namespace: 'default', name: 'web', uid: 'e1', resourceVersion: '4', deleted: false, body: { kind: 'Endpoints', metadata: { name: 'web', namespace: 'default' } }, kubeSeq: 4 },
      podRow(cluster, 'z-pod', '5'),
      podRow(cluster, 'a-pod', '6'),
      { cluster, kind: 'Node', namespace: '', name: 'n2', uid: 'n2', resourceVersion: '7', deleted: false, body: makeNode('n2'), kubeSeq: 7 },
      { cluster, kind: 'Node', namespace: '', name: 'n1', uid: 'n1', resourceVersion: '8', deleted: false, body: makeNode('n1'), kubeSeq: 8 },
      { cluster, kind: 'Node', namespace: '', name: 'n0', uid: 'n0', resourceVersion: '9', deleted: true, body: makeNode('n0'), kubeSeq: 9 },
    ];
    await t.db.transaction().execute((trx) => upsertObjects(trx, deepFreeze(rows)));
    const got = await loadNamespaceObjects(t.db, cluster, 'default');
    expect(got.services.map((s) => s.metadata.name)).toEqual(['web']);
    expect(got.pods.map((p) => p.metadata.name)).toEqual(['a-pod', 'z-pod']);
    expect(got.endpoints.map((e) => e.metadata.name)).toEqual(['web']);
    expect((await loadNodes(t.db, cluster)).map((n) => n.metadata.name)).toEqual(['n1', 'n2']);
    expect(await loadService(t.db, cluster, 'default', 'web')).toEqual(makeService('web'));
    expect(await loadService(t.db, cluster, 'default', 'gone')).toBeUndefined();
    expect(await loadService(t.db, cluster, 'default', 'never')).toBeUndefined();
  });

  it('an empty namespace loads as empty lists, a cluster without nodes as []', async () => {
    const cluster = freshCluster();
    expect(await loadNamespaceObjects(t.db, cluster, 'empty')).toEqual({ services: [], pods: [], endpoints: [] });
    expect(await loadNodes(t.db, cluster)).toEqual([]);
  });
});
