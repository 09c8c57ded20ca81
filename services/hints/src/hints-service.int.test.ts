import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestDb } from '@slicemesh/db/testing';
import { refuseWrites, withTestDb } from '@slicemesh/db/testing';
import { loadHintDecisions, loadPublishedViews } from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { validateEndpointSlice, validateService } from '@slicemesh/model';
import type { DeadLetterBody } from '@slicemesh/nats';
import { dlqSubject, ensureStreams, kubeNodeSubject, kubeObjectSubject, openKv, parseViewKey, partitionOf, publishAcked, slicesSubject, svcKey, viewKey } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { UNZONED_VIEW, zoneViews } from '@slicemesh/proxy-state';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { REASON_HINTS_DISABLED, REASON_HINTS_ENABLED, TopologyCache } from '@slicemesh/topology';
import type { HintsConfig } from './config.ts';
import { hintsConfigWith } from './config.ts';
import { hintService } from '@slicemesh/core';
import type { HintsHandle } from './hints-service.ts';
import { startHints } from './hints-service.ts';
import { readBucket } from './kv-port.ts';
import { autoService, ep, threeZoneNodes, threeZoneSlice } from './test-fixtures.ts';

const CLUSTER = 'c1';

let f: JetStreamFixture;
let tdb: TestDb;
let config: HintsConfig;
const handles: HintsHandle[] = [];
let outboxId = 0;

beforeEach(async () => {
  f = await withJetStream();
  tdb = await withTestDb();
  await ensureStreams(f.jsm, f.names);
  config = hintsConfigWith({
    natsUrl: f.url, partitions: 4, databaseUrl: tdb.url, dbSchema: tdb.schema, cluster: CLUSTER,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, eventsStream: f.names.events ?? 'EVENTS', subjectPrefix: f.names.prefix,
    svcBucket: f.names.svc, viewsBucket: f.names.views, hintedBucket: f.names.hinted, durablePrefix: `hints${f.id}`,
    // HINTS_TEST_LOG=debug shows the service's log while debugging a test.
    batchPeriod: 10, drainPollInterval: 20, logLevel: (process.env['HINTS_TEST_LOG'] ?? 'silent') as 'silent', workers: 2,
  });
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await f.cleanup();
  await tdb.close();
});

async function start(): Promise<HintsHandle> {
  const h = startHints(config);
  handles.push(h);
  await h.ready;
  return h;
}

async function stop(h: HintsHandle): Promise<void> {
  handles.splice(handles.indexOf(h), 1);
  await h.close();
}

// KUBE objects always carry a resourceVersion (the KUBE contract requires it); newer each time.
let rvCounter = 1000;
function versioned<T extends Node | Service>(o: T): T {
  return { ...o, metadata: { ...o.metadata, resourceVersion: o.metadata.resourceVersion ?? String(++rvCounter) } };
}

function publishNode(node: Node, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1') {
  const body = { type, cluster: CLUSTER, kind: 'Node', object: versioned(node), observedAt: '2026-01-01T00:00:00Z' };
  return publishAcked(f.js, kubeNodeSubject({ cluster: CLUSTER, name: node.metadata.name }, f.names), body, { msgID: `${CLUSTER}/${node.metadata.name}/${++outboxId}` });
}

function publishService(svc: Service, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1') {
  const ns = svc.metadata.namespace ?? 'default';
  const subject = kubeObjectSubject({ cluster: CLUSTER, partition: partitionOf(ns, 4), kind: 'Service', namespace: ns, name: svc.metadata.name }, f.names);
  return publishAcked(f.js, subject, { type, cluster: CLUSTER, kind: 'Service', object: versioned(svc), observedAt: '2026-01-01T00:00:00Z' }, { msgID: `${CLUSTER}/svc/${++outboxId}` });
}

function publishSlices(upserts: readonly EndpointSlice[], deletes: readonly string[] = [], service = 'web') {
  const body = { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service, upserts, deletes, kubeSeq: { from: 1, to: 1 }, reconcileID: 'r' };
  return publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), namespace: 'default', service }, f.names), body, { msgID: `${CLUSTER}/outbox/${++outboxId}` });
}

async function bucket(name: string): Promise<Map<string, unknown>> {
  const entries = await readBucket(await openKv(f.nc, name), `${CLUSTER}.>`);
  return new Map([...entries].map(([k, e]) => [k, e.value]));
}

/** Zone -> endpoint IPs, per view key in the bucket (slice names included). */
async function viewEndpoints(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of await bucket(f.names.views)) {
    const a = parseViewKey(key);
    out[`${a.zone}/${a.slice}`] = (value as EndpointSlice).endpoints.map((e) => e.addresses[0] ?? '');
  }
  return out;
}

async function eventually(check: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** KV views and the published_views record hold the same keys at the same revisions (the record's confirmations are written behind: wrap in eventually). */
async function expectRecordMatchesBucket(): Promise<void> {
  const kv = await openKv(f.nc, f.names.views);
  const recorded = await loadPublishedViews(tdb.db, CLUSTER);
  const keys = (await bucket(f.names.views)).keys();
  expect(recorded.map((r) => r.key)).toEqual([...keys].sort());
  for (const r of recorded) expect(r.revision).toBe((await kv.get(r.key))?.revision);
}

const ALL = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];

describe('hints service', () => {
  it('from a backlog of 3 zone nodes, an Auto service and its slices: per-zone views equal zoneViews() of the hinted slices, the spec and the decision', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(autoService());
    await publishSlices([threeZoneSlice()]);
    const h = await start();
    expect(h.readiness()).toEqual({ ready: true });

    // The expectation, computed from the pure cores on the same (validated) inputs.
    const svc = validateService(autoService(), 'svc');
    const cache = new TopologyCache();
    cache.setNodes(threeZoneNodes());
    const hinted = hintService({ service: svc, slices: [validateEndpointSlice(threeZoneSlice(), 's')], cache, preferSameTrafficDistribution: true }).slices;
    const expected = zoneViews({ services: [svc], slices: hinted, nodes: threeZoneNodes() });
    const views = await bucket(f.names.views);
    expect([...views.keys()].map((k) => parseViewKey(k).zone).sort()).toEqual([UNZONED_VIEW, 'zone-a', 'zone-b', 'zone-c']);
    for (const [key, value] of views) {
      const a = parseViewKey(key);
      const entry = [...expected.entries.values()].find((e) => e.zone === a.zone && e.sliceName === a.slice);
      expect(value).toEqual(entry?.slice);
    }
    expect(await viewEndpoints()).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL });

    expect((await bucket(f.names.svc)).get(svcKey({ cluster: CLUSTER, namespace: 'default', name: 'web' }))).toEqual({ ...svc, metadata: { ...svc.metadata, resourceVersion: expect.any(String) } });
    const decisions = await loadHintDecisions(tdb.db, CLUSTER);
    expect(decisions.map((d) => [d.service, d.addressType, d.enabled, d.mode, d.event?.reason])).toEqual([['web', 'IPv4', true, 'Auto', REASON_HINTS_ENABLED]]);
    expect(decisions[0]?.reason).toMatch(/topology-mode="Auto"/);
    await eventually(expectRecordMatchesBucket);
    const metrics = await h.metrics.registry.metrics();
    expect(metrics).toMatch(/slicemesh_hints_kv_puts_total\{bucket="views",component="hints"\} 4/);
    expect(metrics).toMatch(/slicemesh_hints_decisions_total\{address_type="IPv4",mode="Auto",enabled="true",reason="enabled",component="hints"\} 1/);
  });

  it('A.1.2 and C.5 live: a Service without a selector keeps its slices\' hints; PreferClose stays enabled without zones', async () => {
    await start();
    for (const n of threeZoneNodes()) await publishNode(n);
    // A Service the EndpointSlice controller does not sync (no selector): its slice's hints
    // (here one for another zone) must reach the views as they are.
    await publishService(makeService('web', { selector: null, spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices([makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-b'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] })])]);
    await eventually(async () => {
      const [d] = await loadHintDecisions(tdb.db, CLUSTER);
      expect([d?.enabled, d?.event ?? null]).toEqual([false, null]);
      expect(d?.reason).toMatch(/does not sync Service default\/web \(it has no selector\)/);
      const unzoned = (await bucket(f.names.views)).get(viewKey({ cluster: CLUSTER, zone: UNZONED_VIEW, namespace: 'default', service: 'web', slice: 'web-abc' })) as EndpointSlice | undefined;
      expect(unzoned?.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name))).toEqual([['zone-b'], ['zone-b']]); // kept, not recomputed
    });
    // A PreferClose Service whose ready endpoints carry no zone: the mode is on, nothing hinted.
    await publishService(makeService('api', { spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices([makeSlice('api-1', [ep('10.0.1.1', undefined, 'n-a')], { service: 'api' })], [], 'api');
    await eventually(async () => {
      const d = (await loadHintDecisions(tdb.db, CLUSTER)).find((x) => x.service === 'api');
      expect([d?.enabled, d?.mode]).toEqual([true, 'PreferClose']);
      expect(d?.reason).toMatch(/none of the 1 ready endpoint knows their own zone/);
    });
  });

  it('C.3.1 with nodes in one zone only, the refusal reason is stored and every view holds every endpoint', async () => {
    await start();
    await publishNode(makeNode('n-a', { zone: 'zone-a' }));
    await publishService(autoService());
    await publishSlices([threeZoneSlice()]);
    await eventually(async () => {
      const [d] = await loadHintDecisions(tdb.db, CLUSTER);
      expect([d?.enabled, d?.event?.reason]).toEqual([false, REASON_HINTS_DISABLED]);
      expect(d?.event?.message).toMatch(/^Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4$/);
      expect(d?.reason).toMatch(/insufficient|fewer than 2 zones|one zone/i);
    });
    await eventually(async () => expect(await viewEndpoints()).toEqual({ 'zone-a/web-abc': ALL, [`${UNZONED_VIEW}/web-abc`]: ALL }));
  });

  it('deleting endpoints and slices deletes their view keys; deleting the Service deletes its spec', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(makeService('web', { spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices([threeZoneSlice()]);
    await start();
    expect(Object.keys(await viewEndpoints())).toHaveLength(4);

    // Endpoint 10.0.0.1 goes: zone-a has no hinted endpoint left and falls back to all.
    await publishSlices([makeSlice('web-abc', [ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.3', 'zone-c', 'n-c')])]);
    await eventually(async () => expect((await viewEndpoints())['zone-b/web-abc']).toEqual(['10.0.0.2']));
    await eventually(async () => expect((await viewEndpoints())['zone-a/web-abc']).toEqual(['10.0.0.2', '10.0.0.3']));

    await publishSlices([], ['web-abc']);
    await eventually(async () => expect(await viewEndpoints()).toEqual({}));
    // The keys leave KV before the record forgets them (the record is a superset meanwhile).
    await eventually(expectRecordMatchesBucket);
    expect((await bucket(f.names.svc)).size).toBe(1);

    await publishService(makeService('web'), 'Deleted.v1');
    await eventually(async () => expect((await bucket(f.names.svc)).size).toBe(0));
    await eventually(async () => expect(await loadHintDecisions(tdb.db, CLUSTER)).toEqual([]));
  });

  it('a node changing zone recomputes the views of every service', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(makeService('web', { spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices([threeZoneSlice()]);
    await start();
    await publishNode(makeNode('n-c', { zone: 'zone-a' }));
    await eventually(async () =>
      expect(await viewEndpoints()).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], [`${UNZONED_VIEW}/web-abc`]: ALL }),
    );
    await eventually(expectRecordMatchesBucket);
  });

  it('restart (close + start): no key lost, duplicated or rewritten, and changes made while down are applied', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(autoService());
    await publishSlices([threeZoneSlice(), makeSlice('web-x', [ep('10.0.0.9', 'zone-a', 'n-a')])]);
    const first = await start();
    const kv = await openKv(f.nc, f.names.views);
    const before = new Map<string, number | undefined>();
    for (const key of (await bucket(f.names.views)).keys()) before.set(key, (await kv.get(key))?.revision);
    expect(before.size).toBe(8);
    await stop(first);

    await start();
    const after = new Map<string, number | undefined>();
    for (const key of (await bucket(f.names.views)).keys()) after.set(key, (await kv.get(key))?.revision);
    expect(after).toEqual(before); // same keys at the same revisions: nothing re-put

    const second = handles[0] as HintsHandle;
    await stop(second);
    await publishSlices([], ['web-x']);
    await start();
    expect(Object.keys(await viewEndpoints()).sort()).toEqual([`${UNZONED_VIEW}/web-abc`, 'zone-a/web-abc', 'zone-b/web-abc', 'zone-c/web-abc']);
    await eventually(expectRecordMatchesBucket);
  });

  it('confirmations the record refuses: not ready while they fail; a restart after such a stop finds the bucket ahead, re-puts those keys and converges, also for a change undone meanwhile', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(autoService());
    await publishSlices([threeZoneSlice()]);
    const first = await start();
    await eventually(expectRecordMatchesBucket);

    // The record stops taking confirmations (upserts of existing keys); the views move on.
    const allow = await refuseWrites(tdb.db, tdb.schema, 'published_views', 'update', 'confirmations refused by the test');
    await publishSlices([makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.9', 'zone-c', 'n-c')])]);
    await eventually(async () => expect((await viewEndpoints())['zone-c/web-abc']).toEqual(['10.0.0.9']));
    await eventually(async () => expect(first.readiness()).toEqual({ ready: false, reason: expect.stringMatching(/the published-views record is failing: .*confirmations refused by the test/) }));
    const kv = await openKv(f.nc, f.names.views);
    const behind: string[] = [];
    for (const r of await loadPublishedViews(tdb.db, CLUSTER)) if (r.revision !== (await kv.get(r.key))?.revision) behind.push(parseViewKey(r.key).zone);
    expect(behind.sort()).toEqual([UNZONED_VIEW, 'zone-c'].sort());
    await stop(first); // its last confirmations cannot be written: the record stays behind the bucket

    // While it is down the change is undone: the record's digest for zone-c's view is that of
    // the old slice again, but the bucket holds the newer value.
    await allow();
    await publishSlices([threeZoneSlice()]);
    const second = await start();
    expect(second.readiness()).toEqual({ ready: true });
    expect(await viewEndpoints()).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL });
    await eventually(expectRecordMatchesBucket);
  });

  it('SLICES messages in the older subject form (no partition token) ahead at start are read through the broad filter; the next start, with them behind, reads its partition only', async () => {
    for (const n of threeZoneNodes()) await publishNode(n);
    await publishService(autoService());
    const older = slicesSubject({ cluster: CLUSTER, partition: null, namespace: 'default', service: 'web' }, f.names);
    const body = { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service: 'web', upserts: [threeZoneSlice()], deletes: [], kubeSeq: { from: 1, to: 1 }, reconcileID: 'r' };
    await publishAcked(f.js, older, body, { msgID: `${CLUSTER}/outbox/${++outboxId}` });
    const durable = `${config.durablePrefix}-${CLUSTER}-p${partitionOf('default', 4)}-slices`;
    const filter = async () => (await f.jsm.consumers.info(f.names.slices, durable)).config.filter_subject;

    const h = await start();
    expect(await filter()).toBe(`${f.names.prefix}slices.${CLUSTER}.>`);
    expect(await viewEndpoints()).toEqual({ 'zone-a/web-abc': ['10.0.0.1'], 'zone-b/web-abc': ['10.0.0.2'], 'zone-c/web-abc': ['10.0.0.3'], [`${UNZONED_VIEW}/web-abc`]: ALL });
    await stop(h);

    // A current-form change while down; the older message is behind the stored offset now.
    await publishSlices([makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b')])]);
    await start();
    expect(await filter()).toBe(`${f.names.prefix}slices.${CLUSTER}.${partitionOf('default', 4)}.>`);
    await eventually(async () => expect((await viewEndpoints())[`${UNZONED_VIEW}/web-abc`]).toEqual(['10.0.0.1', '10.0.0.2']));
  });

  it('a malformed message is dead-lettered to dlq.<cluster>.hints with its reason, and consuming goes on', async () => {
    await start();
    await publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), namespace: 'default', service: 'web' }, f.names), { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service: 'web', upserts: [{ kind: 'EndpointSlice' }] }, { msgID: 'bad-1' });
    const subject = dlqSubject(CLUSTER, 'hints', f.names);
    let letter: DeadLetterBody | undefined;
    await eventually(async () => {
      letter = (await f.jsm.streams.getMessage(f.names.dlq, { last_by_subj: subject }))?.json<DeadLetterBody>();
      expect(letter).toBeDefined();
    });
    expect(letter?.field).toMatch(/^upserts\[0\]\./);
    expect(letter?.reason.length).toBeGreaterThan(0);
    expect(letter?.subject).toBe(slicesSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), namespace: 'default', service: 'web' }, f.names));

    await publishService(autoService());
    await eventually(async () => expect((await bucket(f.names.svc)).size).toBe(1));
  });
});
