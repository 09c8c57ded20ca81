// Several hints replicas on one schema and one set of buckets: they share the KUBE partitions
// through leases (group hints/<cluster>), publish for the services of every partition exactly what
// one hints service publishes, hand a partition over when a replica leaves, and an engine whose
// lease was taken cannot write to Postgres any more. The reference is a single replica on its own
// schema and buckets, reading the same streams.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TestDb } from '@slicemesh/db/testing';
import { withTestDb } from '@slicemesh/db/testing';
import type { DbHandle, LeaseClaim } from '@slicemesh/db';
import {
  FencedError, HintsProjectionStore, acquireLease, createDb, getOffset, leaseHeartbeat, loadHintDecisions, loadHintServices, loadPublishedViews, migrateToLatest, readLeases, releaseLeases,
} from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { ensureKv, ensureStreams, kubeNodeSubject, kubeObjectSubject, openKv, parseHintedKey, parseSvcKey, parseViewKey, partitionOf, publishAcked, slicesSubject } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import type { HintsConfig } from './config.ts';
import { hintsConfigWith, hintsLeaseGroup } from './config.ts';
import { consumerSpecs } from './consumers.ts';
import { startHintsEngine } from './engine.ts';
import { hintsEvents } from './hints-events.ts';
import { hintsMetrics } from './hints-metrics.ts';
import type { HintsHandle } from './hints-service.ts';
import { startHints } from './hints-service.ts';
import { readBucket } from './kv-port.ts';
import { ep } from './test-fixtures.ts';

const CLUSTER = 'c1';
const P = 2;
const LOG = (process.env['HINTS_TEST_LOG'] ?? 'silent') as 'silent';

let f: JetStreamFixture;
/** Only its bucket names are used: the reference replica's buckets. */
let g: JetStreamFixture;
let dbs: TestDb[] = [];
const running = new Set<HintsHandle>();
const handles: DbHandle[] = [];
let msgId = 0;
let rv = 1000;

beforeEach(async () => {
  f = await withJetStream();
  g = await withJetStream();
  dbs = [await withTestDb(), await withTestDb()];
  await ensureStreams(f.jsm, f.names);
});

afterEach(async () => {
  for (const h of running) await h.close();
  running.clear();
  for (const h of handles.splice(0)) await h.close().catch(() => {});
  await f.cleanup();
  await g.cleanup();
  for (const d of dbs) await d.close();
});

/** which 0: the replicas' schema and buckets; 1: the reference's. */
function configFor(replicaId: string, which: 0 | 1, o: Partial<HintsConfig> = {}): HintsConfig {
  const db = dbs[which] as TestDb;
  const buckets = which === 0 ? f.names : g.names;
  return hintsConfigWith({
    natsUrl: f.url, databaseUrl: db.url, dbSchema: db.schema, cluster: CLUSTER, partitions: P, replicaId, leaseTtl: 2000,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, eventsStream: f.names.events ?? 'EVENTS', subjectPrefix: f.names.prefix,
    svcBucket: buckets.svc, viewsBucket: buckets.views, hintedBucket: buckets.hinted, durablePrefix: `h${which}${f.id}`,
    drainPollInterval: 20, logLevel: LOG, workers: 4, ingestBatch: 16, ...o,
  });
}

function replica(id: string, which: 0 | 1 = 0): HintsHandle {
  const h = startHints(configFor(id, which));
  running.add(h);
  return h;
}

async function stop(h: HintsHandle): Promise<void> {
  running.delete(h);
  await h.close();
}

/** A namespace whose KUBE partition (of P) is `p`. */
function namespaceIn(p: number): string {
  for (let i = 0; ; i++) if (partitionOf(`ns${i}`, P) === p) return `ns${i}`;
}
const NS = [namespaceIn(0), namespaceIn(1)] as const;

// ---- publishing, as the watcher and the slicer do ----

function publishNode(node: Node) {
  const body = { type: 'Upserted.v1', cluster: CLUSTER, kind: 'Node', object: { ...node, metadata: { ...node.metadata, resourceVersion: String(++rv) } }, observedAt: '2026-01-01T00:00:00Z' };
  return publishAcked(f.js, kubeNodeSubject({ cluster: CLUSTER, name: node.metadata.name }, f.names), body, { msgID: `n/${++msgId}` });
}

function publishService(svc: Service) {
  const ns = svc.metadata.namespace ?? 'default';
  const object = { ...svc, metadata: { ...svc.metadata, resourceVersion: String(++rv) } };
  const subject = kubeObjectSubject({ cluster: CLUSTER, partition: partitionOf(ns, P), kind: 'Service', namespace: ns, name: svc.metadata.name }, f.names);
  return publishAcked(f.js, subject, { type: 'Upserted.v1', cluster: CLUSTER, kind: 'Service', object, observedAt: '2026-01-01T00:00:00Z' }, { msgID: `s/${++msgId}` });
}

function publishSlices(namespace: string, service: string, upserts: readonly EndpointSlice[], deletes: readonly string[] = []) {
  const body = { type: 'SliceChanged.v1', cluster: CLUSTER, namespace, service, upserts, deletes, kubeSeq: { from: 1, to: 1 }, reconcileID: 'r' };
  return publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: partitionOf(namespace, P), namespace, service }, f.names), body, { msgID: `o/${++msgId}` });
}

const auto = (name: string, namespace: string) => makeService(name, { namespace, annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } });
const epsOf = (base: number, n: number, zones: readonly string[]) =>
  Array.from({ length: n }, (_, i) => ep(`10.${base}.0.${i + 1}`, zones[i % zones.length], `n-${(zones[i % zones.length] ?? 'zone-a').slice(-1)}`));

/** Nodes in three zones, and in each partition's namespace an Auto and a PreferClose service with slices. */
async function publishWorld(): Promise<void> {
  await publishNode(makeNode('n-a', { zone: 'zone-a', cpu: '8' }));
  await publishNode(makeNode('n-b', { zone: 'zone-b', cpu: '4' }));
  await publishNode(makeNode('n-c', { zone: 'zone-c', cpu: '2' }));
  for (const [i, ns] of NS.entries()) {
    await publishService(auto('web', ns));
    await publishService(makeService('api', { namespace: ns, spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices(ns, 'web', [makeSlice('web-1', epsOf(10 + i, 9, ['zone-a', 'zone-b', 'zone-c']), { namespace: ns })]);
    await publishSlices(ns, 'api', [makeSlice('api-1', epsOf(20 + i, 4, ['zone-a', 'zone-b']), { namespace: ns, service: 'api' })]);
  }
}

async function bucket(name: string): Promise<Map<string, unknown>> {
  const entries = await readBucket(await openKv(f.nc, name), `${CLUSTER}.>`);
  return new Map([...entries].map(([k, e]) => [k, e.value]));
}

type Kind = 'views' | 'svc' | 'hinted';
const namespaceOf: Record<Kind, (key: string) => string> = {
  views: (k) => parseViewKey(k).namespace,
  svc: (k) => parseSvcKey(k).namespace,
  hinted: (k) => parseHintedKey(k).namespace,
};

/** The replicas' buckets hold what the reference's hold, with keys of both partitions; the record knows the views bucket's keys. */
async function expectSameAsOneService(): Promise<void> {
  await vi.waitFor(async () => {
    for (const kind of ['views', 'svc', 'hinted'] as const) {
      const got = await bucket(f.names[kind]);
      expect(Object.fromEntries(got), kind).toEqual(Object.fromEntries(await bucket(g.names[kind])));
      expect(new Set([...got.keys()].map(namespaceOf[kind])), kind).toEqual(new Set(NS));
    }
  }, { timeout: 20_000, interval: 100 });
  await vi.waitFor(async () => {
    const kv = await openKv(f.nc, f.names.views);
    const recorded = await loadPublishedViews((dbs[0] as TestDb).db, CLUSTER);
    expect(recorded.map((r) => r.key)).toEqual([...(await bucket(f.names.views)).keys()].sort());
    for (const r of recorded) expect(r.revision).toBe((await kv.get(r.key))?.revision);
    const decisions = async (which: 0 | 1) => (await loadHintDecisions((dbs[which] as TestDb).db, CLUSTER)).map((d) => [d.namespace, d.service, d.addressType, d.enabled, d.reason]);
    expect(await decisions(0)).toEqual(await decisions(1));
  }, { timeout: 10_000, interval: 100 });
}

describe('hints replicas', () => {
  it('two replicas split the partitions and publish, for the services of both, exactly what one hints service publishes', async () => {
    await publishWorld();
    const reference = replica('solo', 1);
    const a = replica('a');
    const b = replica('b');
    await Promise.all([reference.ready, a.ready, b.ready]);
    await vi.waitFor(() => expect([a.partitions(), b.partitions()]).toEqual([[0], [1]]), { timeout: 10_000, interval: 100 });
    await vi.waitFor(() => expect([a.readiness(), b.readiness()]).toEqual([{ ready: true }, { ready: true }]), { timeout: 10_000, interval: 100 });
    await expectSameAsOneService();

    // Live changes: a node moves zone (every partition's owner must see it) and slices change in both partitions.
    await publishNode(makeNode('n-c', { zone: 'zone-b', cpu: '2' }));
    for (const [i, ns] of NS.entries()) await publishSlices(ns, 'web', [makeSlice('web-1', epsOf(30 + i, 6, ['zone-c', 'zone-b', 'zone-a']), { namespace: ns })]);
    await expectSameAsOneService();
    const leases = await readLeases((dbs[0] as TestDb).db, hintsLeaseGroup(CLUSTER));
    expect(leases.map((l) => [l.partition, l.holder, l.live])).toEqual([[0, 'a', true], [1, 'b', true]]);
    expect(await a.metrics.registry.metrics()).toMatch(/slicemesh_hints_partitions_held\{component="hints"\} 1/);
  });

  it('a replica closed mid-run: the other takes its partition over, and a later change in that partition is reflected', async () => {
    await publishWorld();
    const reference = replica('solo', 1);
    const a = replica('a');
    const b = replica('b');
    await Promise.all([reference.ready, a.ready, b.ready]);
    await vi.waitFor(() => expect([a.partitions(), b.partitions()]).toEqual([[0], [1]]), { timeout: 10_000, interval: 100 });
    await expectSameAsOneService();

    const closedAt = Date.now();
    await stop(b);
    await vi.waitFor(() => expect(a.partitions()).toEqual([0, 1]), { timeout: 10_000, interval: 50 });
    const takeoverMs = Date.now() - closedAt;
    await vi.waitFor(() => expect(a.readiness()).toEqual({ ready: true }), { timeout: 10_000, interval: 50 });
    const readyMs = Date.now() - closedAt;
    console.log(`hints takeover after a clean close: partition held after ${takeoverMs} ms, its engine ready after ${readyMs} ms`);
    expect(takeoverMs).toBeLessThan(5_000);

    // b's partition (1) changes after it left: a publishes it. a now runs two node consumers; a
    // node change reaches both partitions once.
    await publishNode(makeNode('n-a', { zone: 'zone-c', cpu: '8' }));
    await publishSlices(NS[1], 'web', [makeSlice('web-1', epsOf(40, 3, ['zone-a', 'zone-b', 'zone-c']), { namespace: NS[1] }), makeSlice('web-2', epsOf(41, 3, ['zone-c']), { namespace: NS[1] })]);
    await publishService(makeService('db', { namespace: NS[1], spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices(NS[1], 'db', [makeSlice('db-1', epsOf(42, 2, ['zone-a', 'zone-c']), { namespace: NS[1], service: 'db' })]);
    await vi.waitFor(async () => {
      const views = [...(await bucket(f.names.views)).keys()].map(parseViewKey).filter((v) => v.namespace === NS[1]);
      expect(new Set(views.map((v) => `${v.service}/${v.slice}`))).toEqual(new Set(['web/web-1', 'web/web-2', 'api/api-1', 'db/db-1']));
    }, { timeout: 10_000, interval: 100 });
    await expectSameAsOneService();
  });

  it("a deposed engine's Postgres writes are refused (FencedError): it stops consuming, and nothing of its partition moves", async () => {
    const t = dbs[0] as TestDb;
    const config = configFor('x', 0);
    const dbh = await createDb({ url: t.url, schema: t.schema });
    handles.push(dbh);
    await migrateToLatest(dbh.db, t.schema);
    const group = hintsLeaseGroup(CLUSTER);
    await leaseHeartbeat(dbh.db, group, 'x', 'i1', 60_000, P); // creates the lease rows
    const claim = await acquireLease(dbh.db, group, 0, 'x', 60_000);
    expect(claim).not.toBeNull();
    const claims = [claim as LeaseClaim];
    const record = new HintsProjectionStore(dbh.db, CLUSTER);
    const metrics = createMetrics('hints');
    const log = createLogger({ service: 'hints', level: LOG });
    const buckets = { views: await ensureKv(f.nc, f.names.views), svc: await ensureKv(f.nc, f.names.svc), hinted: await ensureKv(f.nc, f.names.hinted) };
    const events = hintsEvents(f.js, { cluster: CLUSTER, prefix: f.names.prefix, clock: realClock, metrics, log });
    const names = { kube: f.names.kube, slices: f.names.slices, dlq: f.names.dlq, events: f.names.events ?? 'EVENTS', prefix: f.names.prefix, svc: f.names.svc, views: f.names.views, hinted: f.names.hinted };
    const engine = startHintsEngine({ config, names, claims, record, js: f.js, jsm: f.jsm, buckets, events, log, clock: realClock, metrics: hintsMetrics(metrics) });
    try {
      await engine.ready;
      await publishService(makeService('before', { namespace: NS[0] }));
      const servicesOffset = consumerSpecs(CLUSTER, names, config.durablePrefix, 0).find((s) => s.role === 'services')?.offset ?? '';
      await vi.waitFor(async () => expect((await loadHintServices(dbh.db, CLUSTER)).map((s) => s.metadata.name)).toEqual(['before']), { timeout: 10_000, interval: 50 });
      const offsetBefore = await getOffset(dbh.db, servicesOffset);

      // Another replica takes partition 0 over (a new token): x's claim no longer holds.
      await releaseLeases(dbh.db, claims);
      expect(await acquireLease(dbh.db, group, 0, 'y', 60_000)).toMatchObject({ holder: 'y', token: (claim?.token ?? 0) + 1 });

      const writes: { name: string; write: () => Promise<unknown> }[] = [
        { name: 'an ingest commit', write: () => record.commitIngest(servicesOffset, offsetBefore + 100, { services: { upserts: [makeService('late', { namespace: NS[0] })], deletes: [] } }, claims) },
        { name: 'an intent', write: () => record.recordIntents([{ namespace: NS[0], name: 'late', decisions: [], pending: [{ key: `${CLUSTER}.zone-a.${NS[0]}.late.late-1` }] }], claims) },
        { name: 'a confirmation', write: () => record.recordPublished([{ key: `${CLUSTER}.zone-a.${NS[0]}.late.late-1`, revision: 7, digest: 'd' }], [], claims) },
      ];
      for (const w of writes) await expect(w.write(), w.name).rejects.toBeInstanceOf(FencedError);

      // The running engine's next batch is refused too: it stands down and stores nothing.
      await publishService(makeService('after', { namespace: NS[0] }));
      await vi.waitFor(() => expect(engine.readiness()).toMatchObject({ ready: false, reason: expect.stringMatching(/^deposed: lease lost/) }), { timeout: 10_000, interval: 50 });
      expect((await loadHintServices(dbh.db, CLUSTER)).map((s) => s.metadata.name)).toEqual(['before']);
      expect(await getOffset(dbh.db, servicesOffset)).toBe(offsetBefore);
      expect(await loadPublishedViews(dbh.db, CLUSTER)).toEqual([]);
    } finally {
      await engine.close();
      await events.flush();
    }
  });
});
