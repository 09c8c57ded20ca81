import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { withTestDb } from '../testing/test-db.ts';
import type { TestDb } from '../testing/test-db.ts';
import type { HintDecision } from './hints-store.ts';
import { loadHintDecisions, loadHintNodes, loadHintServices, loadHintSlices, loadPublishedViews } from './hints-store.ts';
import { HintsProjectionStore } from './hints-projection-store.ts';
import { getOffset } from './offsets.ts';

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
