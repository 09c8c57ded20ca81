import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { HintDecision } from './hints-store.ts';
import { loadHintDecisions, loadHintNodes, loadHintServices, loadHintSlices, loadPublishedViews } from './hints-store.ts';
import { HintsProjectionStore } from './hints-projection-store.ts';
import { getOffset } from './offsets.ts';
import { FencedError, acquireLease, leaseHeartbeat, releaseLeases } from './leases.ts';

let t: TestDb;
beforeAll(async () => { t = await withTestDb(); });
afterAll(async () => { await t?.close(); });

const ep = (ip: string) => ({ addresses: [ip], conditions: { ready: true } });
const decision = (service: string, o: Partial<HintDecision> = {}): HintDecision => ({
  namespace: 'default', service, addressType: 'IPv4', enabled: true, mode: 'Auto', event: null, reason: 'r', decidedAt: new Date('2026-01-01T00:00:00Z'), ...o,
});

describe('HintsProjectionStore.commitIngest', () => {
  it('writes the rows of a batch with the offset in one transaction, deletes before upserts', async () => {
    const store = new HintsProjectionStore(t.db, 'i1');
    const a = makeSlice('web-a', [ep('10.0.0.1')]);
    expect(await store.commitIngest('c-slices', 3, { slices: { upserts: deepFreeze([a, makeSlice('web-b', [])]), deletes: [] } })).toBe(true);
    expect(await store.commitIngest('c-slices', 5, { slices: { upserts: [makeSlice('web-a', [ep('10.0.0.9')])], deletes: [{ namespace: 'default', name: 'web-b' }] } })).toBe(true);
    expect((await loadHintSlices(t.db, 'i1')).map((s) => [s.metadata.name, s.endpoints[0]?.addresses[0]])).toEqual([['web-a', '10.0.0.9']]);
    expect(await getOffset(t.db, 'c-slices')).toBe(5);
  });

  const kinds: { name: string; rows: Parameters<HintsProjectionStore['commitIngest']>[2]; check: (db: TestDb['db']) => Promise<unknown>; want: unknown }[] = [
    {
      name: 'nodes: upserted and deleted by name',
      rows: { nodes: { upserts: [makeNode('n1', { zone: 'zone-a' })], deletes: ['n0'] } },
      check: async (db) => (await loadHintNodes(db, 'i2')).map((n) => n.metadata.name),
      want: ['n1'],
    },
    {
      name: 'services: upserted and deleted by namespace/name',
      rows: { services: { upserts: [makeService('api')], deletes: [{ namespace: 'default', name: 'web' }] } },
      check: async (db) => (await loadHintServices(db, 'i2')).map((s) => s.metadata.name),
      want: ['api'],
    },
  ];
  for (const tc of kinds) {
    it(tc.name, async () => {
      const store = new HintsProjectionStore(t.db, 'i2');
      await store.commitIngest(`c-${tc.name}`, 1, { nodes: { upserts: [makeNode('n0')], deletes: [] }, services: { upserts: [makeService('web')], deletes: [] } });
      await store.commitIngest(`c-${tc.name}`, 2, tc.rows);
      expect(await tc.check(t.db)).toEqual(tc.want);
    });
  }

  it("other controllers' slices: kept apart from the slicer's (same name allowed), deleted by namespace/name, and loaded back by the snapshot", async () => {
    const store = new HintsProjectionStore(t.db, 'i5');
    const imported = makeSlice('imported-1', [ep('10.0.1.1')], { service: 'db', managedBy: 'mcs-importer' });
    await store.commitIngest('c5-slices', 1, { slices: { upserts: [makeSlice('web-a', [])], deletes: [] } });
    await store.commitIngest('c5-eps', 1, { foreignSlices: { upserts: [imported, makeSlice('web-a', [], { managedBy: 'x' }), makeSlice('gone', [], { managedBy: 'x' })], deletes: [] } });
    await store.commitIngest('c5-eps', 2, { foreignSlices: { upserts: [], deletes: [{ namespace: 'default', name: 'gone' }] } });
    const snap = await store.loadSnapshot(['c5-slices', 'c5-eps']);
    expect(snap.slices.map((s) => s.metadata.name)).toEqual(['web-a']);
    expect(snap.foreignSlices.map((s) => [s.metadata.name, s.metadata.labels?.['endpointslice.kubernetes.io/managed-by']])).toEqual([['imported-1', 'mcs-importer'], ['web-a', 'x']]);
    expect(snap.foreignSlices[0]).toEqual(imported);
    expect([...snap.offsets]).toEqual([['c5-slices', 1], ['c5-eps', 2]]);
  });

  it('a batch at or below the stored offset writes nothing and says so (its commit was acknowledged late)', async () => {
    const store = new HintsProjectionStore(t.db, 'i3');
    await store.commitIngest('c3', 7, { nodes: { upserts: [makeNode('n1')], deletes: [] } });
    expect(await store.commitIngest('c3', 7, { nodes: { upserts: [makeNode('n2')], deletes: [] } })).toBe(false);
    expect((await loadHintNodes(t.db, 'i3')).map((n) => n.metadata.name)).toEqual(['n1']);
  });
});

describe('HintsProjectionStore.commitIngest as one statement (batches without nodes)', () => {
  // The same batches through the one statement and through the transaction (an empty `nodes`
  // forces it) leave the same rows.
  const batches: Parameters<HintsProjectionStore['commitIngest']>[2][] = [
    { slices: { upserts: [makeSlice('web-a', [ep('10.0.0.1')]), makeSlice('web-b', [])], deletes: [] }, services: { upserts: [makeService('web')], deletes: [] } },
    { slices: { upserts: [makeSlice('web-a', [ep('10.0.0.3')])], deletes: [{ namespace: 'default', name: 'web-b' }] } },
    { slices: { upserts: [makeSlice('web-b', [ep('10.0.0.4')])], deletes: [{ namespace: 'default', name: 'web-b' }, { namespace: 'default', name: 'never' }] } },
    { foreignSlices: { upserts: [makeSlice('imported', [], { managedBy: 'x' })], deletes: [] }, services: { upserts: [], deletes: [{ namespace: 'default', name: 'web' }] } },
  ];
  it('leaves the rows the transaction leaves, a key deleted and upserted in one batch upserted', async () => {
    const one = new HintsProjectionStore(t.db, 'st1');
    const tx = new HintsProjectionStore(t.db, 'st2');
    for (const [i, b] of batches.entries()) {
      expect(await one.commitIngest('st1-c', i + 1, b)).toBe(true);
      expect(await tx.commitIngest('st2-c', i + 1, { ...b, nodes: { upserts: [], deletes: [] } })).toBe(true);
    }
    const [a, b] = [await one.loadSnapshot(['st1-c']), await tx.loadSnapshot(['st2-c'])];
    expect(a.slices).toEqual(b.slices);
    expect(a.foreignSlices).toEqual(b.foreignSlices);
    expect(a.services).toEqual(b.services);
    expect(a.slices.map((x) => [x.metadata.name, x.endpoints[0]?.addresses[0]])).toEqual([['web-a', '10.0.0.3'], ['web-b', '10.0.0.4']]);
    expect([...a.offsets]).toEqual([['st1-c', 4]]);
  });

  it('keeps each body as written, key order included (the restart hashes that text)', async () => {
    const store = new HintsProjectionStore(t.db, 'st3');
    const slice = { ports: [], endpoints: [ep('10.0.0.5')], addressType: 'IPv4', metadata: { name: 'web-z', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } }, kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' } as unknown as ReturnType<typeof makeSlice>;
    await store.commitIngest('st3-c', 1, { slices: { upserts: [slice], deletes: [] } });
    const text = await sql<{ body: string }>`select body::text as body from hint_slices where cluster = 'st3'`.execute(t.db);
    expect(text.rows.map((r) => r.body)).toEqual([JSON.stringify(slice)]);
  });

  it('a batch at or below the stored offset writes nothing and says so', async () => {
    const store = new HintsProjectionStore(t.db, 'st4');
    expect(await store.commitIngest('st4-c', 5, { slices: { upserts: [makeSlice('first', [])], deletes: [] } })).toBe(true);
    expect(await store.commitIngest('st4-c', 5, { slices: { upserts: [makeSlice('again', [])], deletes: [] } })).toBe(false);
    expect(await store.commitIngest('st4-c', 4, { slices: { upserts: [], deletes: [{ namespace: 'default', name: 'first' }] } })).toBe(false);
    expect((await loadHintSlices(t.db, 'st4')).map((x) => x.metadata.name)).toEqual(['first']);
    expect(await getOffset(t.db, 'st4-c')).toBe(5);
  });
});

describe('HintsProjectionStore: node rows are shared by every partition\'s consumer, newer version wins', () => {
  const at = (name: string, rv: string, zone = 'zone-a') => ({ ...makeNode(name, { zone }), metadata: { ...makeNode(name, { zone }).metadata, resourceVersion: rv } });
  const cases: { name: string; first: Parameters<HintsProjectionStore['commitIngest']>[2]; second: Parameters<HintsProjectionStore['commitIngest']>[2]; want: [string, string | undefined][] }[] = [
    { name: 'an older upsert (a lagging consumer) leaves the newer node', first: { nodes: { upserts: [at('n1', '7', 'zone-b')], deletes: [] } }, second: { nodes: { upserts: [at('n1', '5')], deletes: [] } }, want: [['n1', 'zone-b']] },
    { name: 'a newer upsert replaces it', first: { nodes: { upserts: [at('n1', '5')], deletes: [] } }, second: { nodes: { upserts: [at('n1', '7', 'zone-b')], deletes: [] } }, want: [['n1', 'zone-b']] },
    { name: 'a delete older than the stored node (it was recreated) leaves it', first: { nodes: { upserts: [at('n1', '9')], deletes: [] } }, second: { nodes: { upserts: [], deletes: ['n1'], deletedAt: { n1: '6' } } }, want: [['n1', 'zone-a']] },
    { name: 'a delete at or after the stored version removes it', first: { nodes: { upserts: [at('n1', '6')], deletes: [] } }, second: { nodes: { upserts: [], deletes: ['n1'], deletedAt: { n1: '6' } } }, want: [] },
  ];
  for (const [i, tc] of cases.entries()) {
    it(tc.name, async () => {
      const cluster = `nv${i}`;
      const store = new HintsProjectionStore(t.db, cluster);
      await store.commitIngest(`${cluster}-p0-nodes`, 1, tc.first);
      await store.commitIngest(`${cluster}-p1-nodes`, 1, tc.second);
      expect((await loadHintNodes(t.db, cluster)).map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone']])).toEqual(tc.want);
    });
  }
});

describe('HintsProjectionStore: every write carries its leases', () => {
  it('is refused with FencedError, writing nothing, once a lease is taken over; and goes through while held', async () => {
    const group = 'hints/fence-test';
    await leaseHeartbeat(t.db, group, 'a', 'i-a', 60_000, 1);
    const claim = await acquireLease(t.db, group, 0, 'a', 60_000);
    const fence = claim === null ? [] : [claim];
    const store = new HintsProjectionStore(t.db, 'f1');
    await store.commitIngest('f1-services', 1, { services: { upserts: [makeService('held')], deletes: [] } }, fence);
    await store.recordIntents([{ namespace: 'default', name: 'held', decisions: [decision('held')], pending: [{ key: 'f1.a.default.held.h1' }] }], fence);
    await store.recordPublished([{ key: 'f1.a.default.held.h1', revision: 3, digest: 'd' }], [], fence);

    await releaseLeases(t.db, fence);
    await acquireLease(t.db, group, 0, 'b', 60_000);
    const writes: { name: string; write: () => Promise<unknown> }[] = [
      { name: 'commitIngest', write: () => store.commitIngest('f1-services', 2, { services: { upserts: [makeService('late')], deletes: [] } }, fence) },
      { name: 'recordIntents', write: () => store.recordIntents([{ namespace: 'default', name: 'held', decisions: [], pending: [{ key: 'f1.a.default.held.h2' }] }], fence) },
      { name: 'recordPublished', write: () => store.recordPublished([], ['f1.a.default.held.h1'], fence) },
    ];
    for (const w of writes) await expect(w.write(), w.name).rejects.toBeInstanceOf(FencedError);
    expect((await loadHintServices(t.db, 'f1')).map((s) => s.metadata.name)).toEqual(['held']);
    expect(await getOffset(t.db, 'f1-services')).toBe(1);
    expect((await loadHintDecisions(t.db, 'f1')).map((d) => d.service)).toEqual(['held']);
    expect(await loadPublishedViews(t.db, 'f1')).toEqual([{ key: 'f1.a.default.held.h1', revision: 3, digest: 'd' }]);
  });
});

describe('HintsProjectionStore publishing records', () => {
  it('records the intents of several services in one call, then their confirmations and deletions', async () => {
    const store = new HintsProjectionStore(t.db, 'i4');
    await store.recordIntents([
      { namespace: 'default', name: 'web', decisions: [decision('web')], pending: [{ key: 'i4.a.default.web.w1' }] },
      { namespace: 'default', name: 'api', pending: [{ key: 'i4.a.default.api.a1' }] },
    ]);
    expect((await loadPublishedViews(t.db, 'i4')).map((v) => [v.key, v.revision])).toEqual([['i4.a.default.api.a1', 0], ['i4.a.default.web.w1', 0]]);
    expect((await loadHintDecisions(t.db, 'i4')).map((d) => d.service)).toEqual(['web']);

    await store.recordPublished([{ key: 'i4.a.default.web.w1', revision: 11, digest: 'd1' }], ['i4.a.default.api.a1']);
    expect(await loadPublishedViews(t.db, 'i4')).toEqual([{ key: 'i4.a.default.web.w1', revision: 11, digest: 'd1' }]);

    // decisions: [] removes a service's decisions; omitted leaves them.
    await store.recordIntents([{ namespace: 'default', name: 'web', decisions: [], pending: [] }]);
    expect(await loadHintDecisions(t.db, 'i4')).toEqual([]);
  });

  it('replacing decisions drops the address types no longer decided, updates the others, and leaves other services alone', async () => {
    const store = new HintsProjectionStore(t.db, 'i7');
    const v6 = (name: string): HintDecision => ({ ...decision(name), addressType: 'IPv6' });
    await store.recordIntents([
      { namespace: 'default', name: 'web', decisions: [decision('web'), v6('web')], pending: [] },
      { namespace: 'default', name: 'api', decisions: [decision('api')], pending: [] },
    ]);
    await store.recordIntents([{ namespace: 'default', name: 'web', decisions: [{ ...decision('web'), enabled: false, reason: 'off now' }], pending: [] }]);
    expect((await loadHintDecisions(t.db, 'i7')).map((d) => [d.service, d.addressType, d.enabled, d.reason])).toEqual([
      ['api', 'IPv4', decision('api').enabled, decision('api').reason],
      ['web', 'IPv4', false, 'off now'],
    ]);
  });

  it('loadSnapshot of a scope holds only the namespaces and view keys of the scope, and every node', async () => {
    const store = new HintsProjectionStore(t.db, 'i6');
    await store.commitIngest('i6-s', 1, { services: { upserts: [makeService('web', { namespace: 'mine' }), makeService('web', { namespace: 'theirs' })], deletes: [] }, nodes: { upserts: [makeNode('n1')], deletes: [] } });
    await store.commitIngest('i6-sl', 1, { slices: { upserts: [makeSlice('web-a', [], { namespace: 'mine' }), makeSlice('web-b', [], { namespace: 'theirs' })], deletes: [] } });
    await store.recordIntents([
      { namespace: 'mine', name: 'web', decisions: [decision('web', { namespace: 'mine' })], pending: [{ key: 'i6.a.mine.web.web-a' }] },
      { namespace: 'theirs', name: 'web', decisions: [decision('web', { namespace: 'theirs' })], pending: [{ key: 'i6.a.theirs.web.web-b' }] },
    ]);
    const snap = await store.loadSnapshot([], { namespace: (ns) => ns === 'mine', viewKey: (k) => k.split('.')[2] === 'mine' });
    expect({
      services: snap.services.map((s) => s.metadata.namespace),
      slices: snap.slices.map((s) => s.metadata.name),
      nodes: snap.nodes.map((n) => n.metadata.name),
      decisions: snap.decisions.map((d) => d.namespace),
      views: snap.publishedViews.map((v) => v.key),
    }).toEqual({ services: ['mine'], slices: ['web-a'], nodes: ['n1'], decisions: ['mine'], views: ['i6.a.mine.web.web-a'] });
  });

  it('loadSnapshot returns every row of the cluster and the offsets asked for (0 when unknown)', async () => {
    const store = new HintsProjectionStore(t.db, 'i5');
    await store.commitIngest('i5-slices', 4, { slices: { upserts: [makeSlice('web-b', []), makeSlice('web-a', [])], deletes: [] } });
    await store.commitIngest('i5-nodes', 2, { nodes: { upserts: [makeNode('n1')], deletes: [] } });
    await store.commitIngest('i5-services', 9, { services: { upserts: [makeService('web')], deletes: [] } });
    await store.recordIntents([{ namespace: 'default', name: 'web', decisions: [decision('web')], pending: [{ key: 'k1' }] }]);
    const snap = await store.loadSnapshot(['i5-slices', 'i5-nodes', 'i5-services', 'i5-never']);
    expect({
      services: snap.services.map((s) => s.metadata.name),
      slices: snap.slices.map((s) => s.metadata.name),
      nodes: snap.nodes.map((n) => n.metadata.name),
      decisions: snap.decisions.map((d) => d.service),
      views: snap.publishedViews.map((v) => v.key),
      offsets: [...snap.offsets],
    }).toEqual({
      services: ['web'], slices: ['web-a', 'web-b'], nodes: ['n1'], decisions: ['web'], views: ['k1'],
      offsets: [['i5-slices', 4], ['i5-nodes', 2], ['i5-services', 9], ['i5-never', 0]],
    });
  });
});
