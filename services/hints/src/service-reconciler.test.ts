import { describe, expect, it } from 'vitest';
import type { HintDecision } from '@slicemesh/db';
import type { EndpointSlice, Node } from '@slicemesh/model';
import { hintedKey, parseViewKey, svcKey, viewKey } from '@slicemesh/nats';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { FakeClock } from '@slicemesh/runtime';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { REASON_HINTS_DISABLED, TopologyCache } from '@slicemesh/topology';
import { hintedKeyIndex, svcKeyIndex, viewKeyIndex } from './published-index.ts';
import type { ServiceReconcilerDeps } from './service-reconciler.ts';
import { decisionsDiffer, reconcileMemo, reconcileService } from './service-reconciler.ts';
import { FakeKv, FakeStore, autoService, ep, readerOf, threeZoneNodes, threeZoneSlice } from './test-fixtures.ts';
import { digestOf } from './view-plan.ts';

const KEY = 'default/web';
const vk = (zone: string, slice = 'web-abc') => viewKey({ cluster: 'c1', zone, namespace: 'default', service: 'web', slice });

function harness(nodes: readonly Node[] = threeZoneNodes()) {
  const journal: string[] = [];
  const store = new FakeStore(journal);
  const views = new FakeKv('views', journal);
  const svc = new FakeKv('svc', journal);
  const hinted = new FakeKv('hinted', journal);
  let current = deepFreeze([...nodes]);
  const cache = new TopologyCache();
  cache.setNodes(current);
  const deps: ServiceReconcilerDeps = {
    cluster: 'c1', state: readerOf(store), records: store, views, svc, hinted, cache, nodes: () => current, viewIndex: viewKeyIndex(), svcIndex: svcKeyIndex(), hintedIndex: hintedKeyIndex(),
    preferSameTrafficDistribution: true, clock: new FakeClock(Date.UTC(2026, 0, 1)), memo: reconcileMemo(),
  };
  return {
    journal, store, views, svc, hinted, deps,
    run: () => reconcileService(deps, KEY),
    setNodes(next: readonly Node[]) {
      current = deepFreeze([...next]);
      cache.setNodes(current);
    },
    /** A restarted process: same store and buckets, fresh memory loaded from the record and audited against KV. */
    restart() {
      const viewIndex = viewKeyIndex();
      for (const r of store.published.values()) viewIndex.set(r.key, { revision: r.revision, digest: r.revision > 0 ? r.digest : null });
      viewIndex.auditAgainst(new Map([...views.values].map(([key, v]) => [key, v.revision])));
      const svcIndex = svcKeyIndex();
      for (const k of svc.values.keys()) svcIndex.set(k, { revision: 1, digest: digestOf(svc.json(k)) });
      const hintedIndex = hintedKeyIndex();
      for (const k of hinted.values.keys()) hintedIndex.set(k, { revision: 1, digest: digestOf(hinted.json(k)) });
      const fresh = new TopologyCache();
      fresh.setNodes(current);
      Object.assign(deps, { viewIndex, svcIndex, hintedIndex, cache: fresh, memo: reconcileMemo() });
    },
  };
}

/** Zone -> endpoint IPs of each view entry in the bucket. */
function bucketViews(kv: FakeKv): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const key of [...kv.values.keys()].sort()) {
    const a = parseViewKey(key);
    out[`${a.zone}/${a.slice}`] = (kv.json(key) as EndpointSlice).endpoints.map((e) => e.addresses[0] ?? '');
  }
  return out;
}

/** The recovery invariant: what KV holds is exactly what is recorded, all confirmed. */
function expectConverged(h: ReturnType<typeof harness>): void {
  expect([...h.store.published.keys()].sort()).toEqual([...h.views.values.keys()].sort());
  for (const [key, rec] of h.store.published) expect(rec.revision).toBe(h.views.values.get(key)?.revision);
}

/** A harness whose Auto Service with the three-zone slice has been reconciled once. */
async function publishedAuto(): Promise<ReturnType<typeof harness>> {
  const h = harness();
  h.store.setService(autoService());
  h.store.setSlices(threeZoneSlice());
  await h.run();
  return h;
}

/** The three-zone slice with zone-c's endpoint replaced (10.0.0.3 → 10.0.0.9). */
const zoneCMoved = () => makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.9', 'zone-c', 'n-c')]);

const ALL = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];

describe('reconcileService', () => {
  it('publishes per-zone views, the spec and the decision for an Auto service, recording intent before KV and confirmation after', async () => {
    const h = harness();
    h.store.setService(autoService());
    h.store.setSlices(threeZoneSlice());
    const r = await h.run();
    expect(bucketViews(h.views)).toEqual({
      'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL,
    });
    expect(h.svc.json(svcKey({ cluster: 'c1', namespace: 'default', name: 'web' }))).toEqual(autoService());
    expect(h.store.decisions.get(KEY)?.map((d) => [d.addressType, d.enabled, d.mode])).toEqual([['IPv4', true, 'Auto']]);
    expect(h.store.decisions.get(KEY)?.[0]?.reason).toMatch(/topology-mode="Auto"/);
    // Intent first, the spec before its views, confirmation last; the hinted slice goes alongside the views.
    expect(h.journal[0]).toBe('db.intent');
    expect(h.journal.at(-1)).toBe('db.published');
    expect(h.journal.indexOf('svc.put')).toBeLessThan(h.journal.indexOf('views.put'));
    expect([...h.journal].sort()).toEqual(['db.intent', 'db.published', 'hinted.put', 'svc.put', 'views.put', 'views.put', 'views.put', 'views.put']);
    expect([r.viewPuts, r.viewDeletes, r.svc, r.decisionsChanged, r.gone, r.hintedPuts]).toEqual([4, 0, 'put', true, false, 1]);
    // The hinted bucket holds the whole slice with its zone hints: what the publisher writes to the API.
    const written = h.hinted.json(hintedKey({ cluster: 'c1', namespace: 'default', service: 'web', slice: 'web-abc' })) as EndpointSlice;
    expect(written.endpoints.map((e) => [e.addresses[0], e.hints?.forZones?.map((z) => z.name)])).toEqual([['10.0.0.1', ['zone-a']], ['10.0.0.2', ['zone-b']], ['10.0.0.3', ['zone-c']]]);
    expect(r.viewBytes).toBe([...h.views.values.values()].reduce((n, v) => n + Buffer.byteLength(v.text), 0));
    expectConverged(h);
  });

  it('habit 2: a second reconcile with nothing changed writes nothing', async () => {
    const h = await publishedAuto();
    const before = h.journal.length;
    const r = await h.run();
    expect(h.journal.length).toBe(before);
    expect([r.viewPuts, r.viewDeletes, r.svc, r.decisionsChanged]).toEqual([0, 0, 'unchanged', false]);
    // The stored row keeps the event of the transition; the repeat records none (C.3.7).
    expect(r.decisions[0]?.event).toBeNull();
    expect(h.store.decisions.get(KEY)?.[0]?.event?.reason).toBe('TopologyAwareHintsEnabled');
  });

  it('C.3.1 insufficient node information: the refusal reason is stored and every zone gets every endpoint', async () => {
    const h = harness([...threeZoneNodes(), makeNode('n-x')]);
    h.store.setService(autoService());
    h.store.setSlices(threeZoneSlice());
    await h.run();
    const [d] = h.store.decisions.get(KEY) ?? [];
    expect([d?.enabled, d?.event?.reason]).toEqual([false, REASON_HINTS_DISABLED]);
    expect(d?.event?.message).toMatch(/^Insufficient Node information/);
    expect(d?.reason).toMatch(/insufficient/);
    expect(bucketViews(h.views)).toEqual({ 'zone-a/web-abc': ALL, 'zone-b/web-abc': ALL, 'zone-c/web-abc': ALL, [`${UNZONED_VIEW}/web-abc`]: ALL });
  });

  const shrinkCases: { name: string; slices: EndpointSlice[]; want: Record<string, string[]> }[] = [
    {
      name: 'removing an endpoint deletes the view key of the zone that only held it',
      slices: [makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b')])],
      // Auto refuses (2 endpoints, 3 zones): unfiltered, so every zone keeps both.
      want: { 'zone-a/web-abc': ['10.0.0.1', '10.0.0.2'], 'zone-b/web-abc': ['10.0.0.1', '10.0.0.2'], 'zone-c/web-abc': ['10.0.0.1', '10.0.0.2'], [`${UNZONED_VIEW}/web-abc`]: ['10.0.0.1', '10.0.0.2'] },
    },
    { name: 'an emptied slice deletes every view key of it', slices: [makeSlice('web-abc', [])], want: {} },
    { name: 'a deleted slice deletes every view key of it', slices: [], want: {} },
  ];
  for (const tc of shrinkCases) {
    it(tc.name, async () => {
      const h = harness();
      h.store.setService(autoService());
      h.store.setSlices(threeZoneSlice());
      await h.run();
      h.store.slices.clear();
      h.store.setSlices(...tc.slices);
      await h.run();
      expect(bucketViews(h.views)).toEqual(tc.want);
      expectConverged(h);
    });
  }

  it('C.5 PreferClose: a zone left without an endpoint hinted for it falls back to every endpoint, no key deleted', async () => {
    const h = harness();
    h.store.setService(makeService('web', { spec: { trafficDistribution: 'PreferClose' } }));
    h.store.setSlices(threeZoneSlice());
    await h.run();
    expect(bucketViews(h.views)['zone-c/web-abc']).toEqual(['10.0.0.3']);
    h.store.setSlices(makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b')]));
    await h.run();
    // PreferClose: zone-c has no endpoint hinted for it, so its nodes fall back to all; zone-a/b keep their own.
    expect(bucketViews(h.views)).toEqual({
      'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.1', '10.0.0.2'], [`${UNZONED_VIEW}/web-abc`]: ['10.0.0.1', '10.0.0.2'],
    });
    expect(h.views.ops.filter((o) => o.startsWith('delete'))).toEqual([]);
  });

  it('a deleted Service loses its views, spec and decisions; gone once its slices are gone too', async () => {
    const h = await publishedAuto();
    h.store.services.clear();
    const r = await h.run();
    expect([h.views.values.size, h.svc.values.size, h.store.decisions.get(KEY)]).toEqual([0, 0, []]);
    expect([r.exists, r.svc, r.gone, r.hintedPuts]).toEqual([false, 'delete', false, 0]);
    expect(h.journal.slice(-3)).toEqual(['views.delete', 'svc.delete', 'db.published']);
    // The slice in the API keeps its hints until the slicer deletes it.
    expect(h.hinted.values.size).toBe(1);
    h.store.slices.clear();
    const last = await h.run();
    expect([last.gone, last.hintedDeletes, h.hinted.values.size]).toEqual([true, 1, 0]);
    expectConverged(h);
  });

  it('a node changing zone recomputes the views (zone-c is gone, its endpoint now serves zone-a)', async () => {
    const h = harness();
    h.store.setService(makeService('web', { spec: { trafficDistribution: 'PreferClose' } }));
    h.store.setSlices(threeZoneSlice());
    await h.run();
    h.setNodes([makeNode('n-a', { zone: 'zone-a' }), makeNode('n-b', { zone: 'zone-b' }), makeNode('n-c', { zone: 'zone-a' })]);
    await h.run();
    expect(bucketViews(h.views)).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], [`${UNZONED_VIEW}/web-abc`]: ALL });
    expectConverged(h);
  });

  it('a KV put failure leaves the record a superset of KV; the retry converges', async () => {
    const h = harness();
    h.store.setService(autoService());
    h.store.setSlices(threeZoneSlice());
    h.views.failOn = (op, key) => op === 'put' && key === vk('zone-b');
    await expect(h.run()).rejects.toThrow(/put .* failed/);
    expect(h.store.published.get(vk('zone-b'))?.revision).toBe(0);
    for (const key of h.views.values.keys()) expect(h.store.published.has(key)).toBe(true);
    h.views.failOn = undefined;
    await h.run();
    expectConverged(h);
  });

  const crashCases: { name: string; fail: 'published' | 'intent'; then: (h: ReturnType<typeof harness>) => void; want: Record<string, string[]> }[] = [
    {
      name: 'a crash after the KV writes, before their confirmation: the restart re-puts and keeps nothing stale',
      fail: 'published',
      then: () => {},
      want: { 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL },
    },
    {
      name: 'a crash after the KV writes, then the slice is deleted: the unconfirmed keys are deleted, none orphaned',
      fail: 'published',
      then: (h) => h.store.slices.clear(),
      want: {},
    },
    {
      name: 'a crash before any KV write: nothing in KV, the restart publishes',
      fail: 'intent',
      then: () => {},
      want: { 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL },
    },
  ];
  for (const tc of crashCases) {
    it(tc.name, async () => {
      const h = harness();
      h.store.setService(autoService());
      h.store.setSlices(threeZoneSlice());
      h.store.failOn = (op) => op === tc.fail;
      await expect(h.run()).rejects.toThrow();
      h.store.failOn = undefined;
      h.restart();
      tc.then(h);
      await h.run();
      expect(bucketViews(h.views)).toEqual(tc.want);
      expectConverged(h);
    });
  }

  it('rewriting keys the record holds confirmed writes no intent: KV, then the confirmation', async () => {
    const h = await publishedAuto();
    const before = h.journal.length;
    h.store.setSlices(zoneCMoved());
    const r = await h.run();
    expect(r.viewPuts).toBe(2); // zone-c's view and the unzoned one
    expect(h.journal.slice(before).filter((j) => j.startsWith('db.'))).toEqual(['db.published']);
    expectConverged(h);
  });

  it('a crash after rewriting a confirmed key, before its confirmation, then the change undone: the restart re-puts the old value', async () => {
    const h = await publishedAuto();
    h.store.setSlices(zoneCMoved());
    h.store.failOn = (op) => op === 'published';
    await expect(h.run()).rejects.toThrow();
    h.store.failOn = undefined;
    expect(bucketViews(h.views)['zone-c/web-abc']).toEqual(['10.0.0.9']);
    // The record still vouches for the old digest of zone-c's view, which the old slice has again.
    h.restart();
    h.store.setSlices(threeZoneSlice());
    await h.run();
    expect(bucketViews(h.views)).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL });
    expectConverged(h);
  });

  it('an orphan view key found in the bucket at startup is deleted by the reconcile', async () => {
    const h = await publishedAuto();
    await h.views.put(vk('zone-a', 'web-old'), '{}');
    h.restart();
    await h.run();
    expect(h.views.values.has(vk('zone-a', 'web-old'))).toBe(false);
    expectConverged(h);
  });
});

describe('decisionsDiffer', () => {
  const d: HintDecision = { namespace: 'default', service: 'web', addressType: 'IPv4', enabled: true, mode: 'Auto', event: null, reason: 'r', decidedAt: new Date(0) };
  const cases: { name: string; a: HintDecision[]; b: HintDecision[]; differ: boolean }[] = [
    { name: 'the same decision made later does not differ', a: [d], b: [{ ...d, decidedAt: new Date(1) }], differ: false },
    { name: 'another reason differs', a: [d], b: [{ ...d, reason: 'x' }], differ: true },
    { name: 'only the event differs: the same outcome', a: [d], b: [{ ...d, event: { type: 'Normal', reason: 'TopologyAwareHintsEnabled', message: 'm' } }], differ: false },
    { name: 'enabled flipping differs', a: [d], b: [{ ...d, enabled: false }], differ: true },
    { name: 'an added address type differs', a: [d], b: [d, { ...d, addressType: 'IPv6' }], differ: true },
    { name: 'no decisions vs none: equal', a: [], b: [], differ: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(decisionsDiffer(tc.a, tc.b)).toBe(tc.differ));
});

describe("D.2.9 reconcileService: other controllers' slices", () => {
  const IMPORTER = 'mcs-importer.example.com';
  /** A foreign slice of web whose hints send each endpoint to another zone than its own. */
  const imported = (): EndpointSlice =>
    deepFreeze(makeSlice('imported-1', [
      ep('10.0.1.1', 'zone-a', 'n-a', { forZones: ['zone-b'] }),
      ep('10.0.1.2', 'zone-b', 'n-b', { forZones: ['zone-a'] }),
      ep('10.0.1.3', 'zone-c', 'n-c', { forZones: ['zone-c'] }),
    ], { managedBy: IMPORTER }));

  it("joins the views with the hints its controller gave it; only our slices are hinted, and decided on", async () => {
    const h = harness();
    h.store.setService(autoService());
    h.store.setSlices(threeZoneSlice());
    h.store.setForeignSlices(imported());
    const r = await h.run();
    expect([r.slices, r.foreignSlices, r.notProxied]).toEqual([1, 1, null]);
    expect(bucketViews(h.views)).toEqual({
      'zone-a/imported-1': ['10.0.1.2'], 'zone-a/web-abc': ['10.0.0.1'],
      'zone-b/imported-1': ['10.0.1.1'], 'zone-b/web-abc': ['10.0.0.2'],
      'zone-c/imported-1': ['10.0.1.3'], 'zone-c/web-abc': ['10.0.0.3'],
      [`${UNZONED_VIEW}/imported-1`]: ['10.0.1.1', '10.0.1.2', '10.0.1.3'], [`${UNZONED_VIEW}/web-abc`]: ALL,
    });
    // Published with the hints its controller gave it (as proxies read a slice: no manager label).
    const unzoned = h.views.json(vk(UNZONED_VIEW, 'imported-1')) as EndpointSlice;
    expect(unzoned.metadata.labels).toEqual({ 'kubernetes.io/service-name': 'web' });
    expect(unzoned.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name))).toEqual([['zone-b'], ['zone-a'], ['zone-c']]);
    expect(h.store.decisions.get(KEY)?.map((d) => [d.addressType, d.enabled])).toEqual([['IPv4', true]]);
  });

  it('a selectorless Service with only a foreign slice: its spec and unfiltered views, no decision', async () => {
    const h = harness();
    h.store.setService(makeService('web', { selector: null }));
    h.store.setForeignSlices(makeSlice('imported-1', [ep('10.0.1.1', 'zone-a', 'n-a'), ep('10.0.1.2', 'zone-b', 'n-b')], { managedBy: IMPORTER }));
    const r = await h.run();
    expect(r.svc).toBe('put');
    expect(bucketViews(h.views)).toEqual({
      'zone-a/imported-1': ['10.0.1.1', '10.0.1.2'], 'zone-b/imported-1': ['10.0.1.1', '10.0.1.2'], 'zone-c/imported-1': ['10.0.1.1', '10.0.1.2'],
      [`${UNZONED_VIEW}/imported-1`]: ['10.0.1.1', '10.0.1.2'],
    });
    expect(h.store.decisions.get(KEY) ?? []).toEqual([]);
  });

  it('a foreign slice named like one of ours (our own, seen through the API) never replaces ours', async () => {
    const h = harness();
    h.store.setService(autoService());
    h.store.setSlices(threeZoneSlice());
    h.store.setForeignSlices(makeSlice('web-abc', [ep('10.9.9.9', 'zone-a', 'n-a')], { managedBy: IMPORTER }));
    await h.run();
    expect(bucketViews(h.views)[`${UNZONED_VIEW}/web-abc`]).toEqual(ALL);
  });

  it('the foreign slice going away removes its views', async () => {
    const h = harness();
    h.store.setService(makeService('web', { selector: null }));
    h.store.setForeignSlices(imported());
    await h.run();
    h.store.foreign.clear();
    const r = await h.run();
    expect(r.viewDeletes).toBe(4);
    expect(h.views.values.size).toBe(0);
    expectConverged(h);
  });
});

describe('D.2.10 reconcileService: a Service meant for another proxy (service.kubernetes.io/service-proxy-name)', () => {
  const relabelled = () => ({ ...autoService(), metadata: { ...autoService().metadata, labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' } } });

  it('gets no spec and no views, and what was published is withdrawn when the label appears; decisions are still made', async () => {
    const h = await publishedAuto();
    expect([h.views.values.size, h.svc.values.size]).toEqual([4, 1]);
    h.store.setService(relabelled());
    const r = await h.run();
    expect(r.notProxied).toMatch(/service-proxy-name="other-proxy".*another proxy/);
    expect([r.svc, r.viewDeletes, h.views.values.size, h.svc.values.size]).toEqual(['delete', 4, 0, 0]);
    expect(r.decisions.map((d) => d.enabled)).toEqual([true]);
    expect(r.gone).toBe(false);
    expectConverged(h);
    // The label removed: published again.
    h.store.setService(autoService());
    const back = await h.run();
    expect([back.notProxied, back.svc, h.views.values.size]).toEqual([null, 'put', 4]);
  });

  it('publishes nothing when the label is there from the start', async () => {
    const h = harness();
    h.store.setService(relabelled());
    h.store.setSlices(threeZoneSlice());
    const r = await h.run();
    expect([r.svc, r.viewPuts, h.views.values.size, h.svc.values.size]).toEqual(['unchanged', 0, 0, 0]);
  });
});

describe('reconcileService: the hinted bucket (what the publisher writes to the API)', () => {
  const hk = hintedKey({ cluster: 'c1', namespace: 'default', service: 'web', slice: 'web-abc' });
  const zonesOf = (h: ReturnType<typeof harness>) => (h.hinted.json(hk) as EndpointSlice).endpoints.map((e) => e.hints?.forZones?.map((z) => z.name) ?? null);
  const table = [
    {
      name: 'a Service without topology settings: the slice as the slicer made it, no hints',
      service: () => makeService('web'),
      zones: [null, null, null],
    },
    {
      name: 'trafficDistribution PreferClose: every endpoint hinted for its own zone',
      service: () => makeService('web', { spec: { trafficDistribution: 'PreferClose' } }),
      zones: [['zone-a'], ['zone-b'], ['zone-c']],
    },
    {
      name: 'a Service meant for another proxy (D.2.10) still gets its slices written, with hints',
      service: () => ({ ...autoService(), metadata: { ...autoService().metadata, labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' } } }),
      zones: [['zone-a'], ['zone-b'], ['zone-c']],
    },
  ];
  for (const tc of table) {
    it(tc.name, async () => {
      const h = harness();
      h.store.setService(tc.service());
      h.store.setSlices(threeZoneSlice());
      await h.run();
      expect(zonesOf(h)).toEqual(tc.zones);
    });
  }

  it('removing the Auto annotation rewrites the slice without hints; a restart with the same state writes nothing', async () => {
    const h = await publishedAuto();
    h.store.setService(makeService('web'));
    const off = await h.run();
    expect([off.hintedPuts, zonesOf(h)]).toEqual([1, [null, null, null]]);
    h.restart();
    const before = h.journal.length;
    const again = await h.run();
    expect([again.hintedPuts, again.hintedDeletes]).toEqual([0, 0]);
    expect(h.journal.slice(before).filter((op) => op.startsWith('hinted'))).toEqual([]);
  });

  it('a Service deleted before its slices were ever written still gets them written once', async () => {
    const h = harness();
    h.store.setSlices(threeZoneSlice());
    const r = await h.run();
    expect([r.exists, r.hintedPuts, zonesOf(h)]).toEqual([false, 1, [null, null, null]]);
  });
});
