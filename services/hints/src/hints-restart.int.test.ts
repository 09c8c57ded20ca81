// Restart equivalence: a hints service stopped and started again on the same schema and
// streams catches up from its Postgres snapshot and the log tail, and ends with the same KV
// views and specs as a service that ran all along (and as the pure cores compute them from the
// final state). Each service has its own schema, buckets and durables on shared streams.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestDb } from '@slicemesh/db/testing';
import { withTestDb } from '@slicemesh/db/testing';
import { loadPublishedViews } from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, validateEndpointSlice, validateNode, validateService } from '@slicemesh/model';
import { ensureStreams, kubeNodeSubject, kubeObjectSubject, openKv, partitionOf, publishAcked, slicesSubject, svcKey } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { TopologyCache } from '@slicemesh/topology';
import type { HintsConfig } from './config.ts';
import { hintsConfigWith } from './config.ts';
import { hintService } from '@slicemesh/core';
import type { HintsHandle } from './hints-service.ts';
import { startHints } from './hints-service.ts';
import { readBucket } from './kv-port.ts';
import { ep } from './test-fixtures.ts';
import { desiredViews } from './view-plan.ts';
import { withForeign } from './service-reconciler.ts';
import { proxyIgnoresService } from '@slicemesh/proxy-state';

const CLUSTER = 'c1';

let f: JetStreamFixture;
/** Only its bucket names are used: the second service's buckets. */
let g: JetStreamFixture;
let dbs: TestDb[] = [];
const handles = new Set<HintsHandle>();
let msgId = 0;

beforeEach(async () => {
  f = await withJetStream();
  g = await withJetStream();
  dbs = [await withTestDb(), await withTestDb()];
  await ensureStreams(f.jsm, f.names);
});

afterEach(async () => {
  for (const h of handles) await h.close();
  handles.clear();
  await f.cleanup();
  await g.cleanup();
  for (const d of dbs) await d.close();
});

function configFor(which: 0 | 1): HintsConfig {
  const db = dbs[which] as TestDb;
  const buckets = which === 0 ? f.names : g.names;
  return hintsConfigWith({
    natsUrl: f.url, partitions: 4, databaseUrl: db.url, dbSchema: db.schema, cluster: CLUSTER,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, eventsStream: f.names.events ?? 'EVENTS', subjectPrefix: f.names.prefix,
    svcBucket: buckets.svc, viewsBucket: buckets.views, hintedBucket: buckets.hinted, durablePrefix: `h${which}${f.id}`,
    drainPollInterval: 20, logLevel: 'silent', workers: 4, ingestBatch: 8,
  });
}

async function start(which: 0 | 1): Promise<HintsHandle> {
  const h = startHints(configFor(which));
  handles.add(h);
  await h.ready;
  return h;
}

async function stop(h: HintsHandle): Promise<void> {
  handles.delete(h);
  await h.close();
}

// ---- the world, as published and as the final state ----

const nodes = new Map<string, Node>();
const services = new Map<string, Service>();
const slices = new Map<string, EndpointSlice>();
/** Other controllers' slices, as KUBE last said. */
const foreign = new Map<string, EndpointSlice>();

// KUBE objects always carry a resourceVersion (the KUBE contract requires it); newer each time.
let rvCounter = 1000;
function versioned<T extends Node | Service | EndpointSlice>(o: T): T {
  return { ...o, metadata: { ...o.metadata, resourceVersion: o.metadata.resourceVersion ?? String(++rvCounter) } };
}

function publishNode(node: Node) {
  nodes.set(node.metadata.name, node);
  const body = { type: 'Upserted.v1', cluster: CLUSTER, kind: 'Node', object: versioned(node), observedAt: '2026-01-01T00:00:00Z' };
  return publishAcked(f.js, kubeNodeSubject({ cluster: CLUSTER, name: node.metadata.name }, f.names), body, { msgID: `n/${++msgId}` });
}

function publishService(given: Service, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1') {
  const svc = versioned(given);
  const ns = svc.metadata.namespace ?? 'default';
  if (type === 'Deleted.v1') services.delete(svc.metadata.name);
  else services.set(svc.metadata.name, svc);
  const subject = kubeObjectSubject({ cluster: CLUSTER, partition: partitionOf(ns, 4), kind: 'Service', namespace: ns, name: svc.metadata.name }, f.names);
  return publishAcked(f.js, subject, { type, cluster: CLUSTER, kind: 'Service', object: svc, observedAt: '2026-01-01T00:00:00Z' }, { msgID: `s/${++msgId}` });
}

function publishSlices(service: string, upserts: readonly EndpointSlice[], deletes: readonly string[] = []) {
  for (const s of upserts) slices.set(s.metadata.name, s);
  for (const d of deletes) slices.delete(d);
  const body = { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service, upserts, deletes, kubeSeq: { from: 1, to: 1 }, reconcileID: 'r' };
  return publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), namespace: 'default', service }, f.names), body, { msgID: `o/${++msgId}` });
}

/** Another controller's slice, as the watcher publishes it to KUBE. */
function publishForeign(given: EndpointSlice, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1') {
  const slice = { ...given, metadata: { ...given.metadata, resourceVersion: String(++rvCounter) } };
  if (type === 'Deleted.v1') foreign.delete(slice.metadata.name);
  else foreign.set(slice.metadata.name, slice);
  const subject = kubeObjectSubject({ cluster: CLUSTER, partition: partitionOf('default', 4), kind: 'EndpointSlice', namespace: 'default', name: slice.metadata.name }, f.names);
  return publishAcked(f.js, subject, { type, cluster: CLUSTER, kind: 'EndpointSlice', object: slice, observedAt: '2026-01-01T00:00:00Z' }, { msgID: `e/${++msgId}` });
}

/** What the views and specs buckets must hold for the final state, from the pure cores. */
function expected(): { views: Map<string, unknown>; specs: Map<string, unknown> } {
  const nodeList = [...nodes.values()].map((n) => validateNode(n, 'node')).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const cache = new TopologyCache();
  cache.setNodes(nodeList);
  const views = new Map<string, unknown>();
  const specs = new Map<string, unknown>();
  for (const raw of services.values()) {
    const service = validateService(raw, 'svc');
    const own = [...slices.values()]
      .filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === service.metadata.name)
      .map((s) => validateEndpointSlice(s, 's'))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    const hinted = hintService({ service, slices: own, cache, preferSameTrafficDistribution: true }).slices;
    if (proxyIgnoresService(service) !== null) continue; // meant for another proxy: nothing published
    const theirs = [...foreign.values()]
      .filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === service.metadata.name)
      .map((s) => validateEndpointSlice(s, 's'))
      .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
    for (const [k, v] of desiredViews({ cluster: CLUSTER, service, slices: withForeign(hinted, theirs), nodes: nodeList, preferSameNodeGate: true })) views.set(k, v.body);
    specs.set(svcKey({ cluster: CLUSTER, namespace: 'default', name: service.metadata.name }), service);
  }
  return { views, specs };
}

async function bucket(name: string): Promise<Map<string, unknown>> {
  const entries = await readBucket(await openKv(f.nc, name), `${CLUSTER}.>`);
  return new Map([...entries].map(([k, e]) => [k, e.value]));
}

async function eventually(check: () => Promise<void>, timeoutMs = 20_000): Promise<void> {
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

/** Both services' buckets hold exactly what the final state asks for. */
async function expectBothConverged(): Promise<void> {
  await eventually(async () => {
    const want = expected();
    for (const names of [f.names, g.names]) {
      expect(Object.fromEntries(await bucket(names.views))).toEqual(Object.fromEntries(want.views));
      expect(Object.fromEntries(await bucket(names.svc))).toEqual(Object.fromEntries(want.specs));
    }
  });
  // And each record knows exactly the keys its bucket holds, at their revisions.
  for (const [which, names] of [[0, f.names], [1, g.names]] as const) {
    const kv = await openKv(f.nc, names.views);
    const recorded = await loadPublishedViews((dbs[which] as TestDb).db, CLUSTER);
    expect(recorded.map((r) => r.key)).toEqual([...(await bucket(names.views)).keys()].sort());
    for (const r of recorded) expect(r.revision).toBe((await kv.get(r.key))?.revision);
  }
}

const auto = (name: string) => makeService(name, { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } });
const epsOf = (base: number, n: number, zones: readonly string[]) =>
  Array.from({ length: n }, (_, i) => ep(`10.0.${base}.${i + 1}`, zones[i % zones.length], `n-${(zones[i % zones.length] ?? 'zone-a').slice(-1)}`));

describe('hints service restart', () => {
  it('a service stopped and started again catches up from Postgres and the log tail and ends with the same views as one that ran all along', async () => {
    nodes.clear();
    services.clear();
    slices.clear();
    foreign.clear();
    // Unequal CPU, so Auto moves endpoints between zones (balancing depends on every slice).
    await publishNode(makeNode('n-a', { zone: 'zone-a', cpu: '8' }));
    await publishNode(makeNode('n-b', { zone: 'zone-b', cpu: '4' }));
    await publishNode(makeNode('n-c', { zone: 'zone-c', cpu: '2' }));
    await publishService(auto('web'));
    await publishService(makeService('api', { spec: { trafficDistribution: 'PreferClose' } }));
    await publishSlices('web', [makeSlice('web-1', epsOf(1, 9, ['zone-a', 'zone-b', 'zone-c'])), makeSlice('web-2', epsOf(2, 9, ['zone-c', 'zone-b', 'zone-a']))]);
    await publishSlices('api', [makeSlice('api-1', epsOf(3, 4, ['zone-a', 'zone-b']), { service: 'api' })]);

    await start(0);
    let restarted = await start(1);
    await expectBothConverged();

    // Down: slices change, one goes, a node changes zone, a service changes mode, a new one comes.
    await stop(restarted);
    await publishSlices('web', [makeSlice('web-2', epsOf(2, 6, ['zone-c', 'zone-c', 'zone-a']))]);
    await publishSlices('web', [makeSlice('web-3', epsOf(4, 5, ['zone-b']))], ['web-1']);
    await publishNode(makeNode('n-c', { zone: 'zone-b', cpu: '2' }));
    await publishService(makeService('api', { spec: { trafficDistribution: 'PreferSameNode' } }));
    await publishService(auto('db'));
    await publishSlices('db', [makeSlice('db-1', epsOf(5, 6, ['zone-a', 'zone-b']), { service: 'db' })]);
    restarted = await start(1);
    await expectBothConverged();

    // Down again, with a service deleted and more slice churn; then back.
    await stop(restarted);
    await publishService(makeService('api'), 'Deleted.v1');
    await publishSlices('api', [], ['api-1']);
    await publishSlices('db', [makeSlice('db-1', epsOf(5, 3, ['zone-b']), { service: 'db' }), makeSlice('db-2', epsOf(6, 4, ['zone-a']), { service: 'db' })]);
    await start(1);
    // Changes while both run are picked up by both.
    await publishSlices('web', [makeSlice('web-4', epsOf(7, 3, ['zone-a', 'zone-b']))]);
    await expectBothConverged();
  });
});

describe("hints service restart: other controllers' slices", () => {
  it('are kept in Postgres across a restart, follow the log tail, and a Service meant for another proxy publishes nothing', async () => {
    nodes.clear();
    services.clear();
    slices.clear();
    foreign.clear();
    const IMPORTER = 'mcs-importer.example.com';
    await publishNode(makeNode('n-a', { zone: 'zone-a', cpu: '4' }));
    await publishNode(makeNode('n-b', { zone: 'zone-b', cpu: '4' }));
    await publishService(makeService('ext', { selector: null }));
    await publishForeign(makeSlice('ext-remote-1', epsOf(20, 2, ['zone-a', 'zone-b']), { service: 'ext', managedBy: IMPORTER }));
    await publishService(auto('web'));
    await publishSlices('web', [makeSlice('web-1', epsOf(1, 4, ['zone-a', 'zone-b']))]);

    await start(0);
    let restarted = await start(1);
    await expectBothConverged();
    expect([...(await bucket(g.names.views)).keys()].some((k) => k.endsWith('.ext-remote-1'))).toBe(true);

    // Down: the import changes, web gets a foreign slice too, a Service for another proxy arrives with its slice.
    await stop(restarted);
    await publishForeign(makeSlice('ext-remote-1', epsOf(21, 3, ['zone-b']), { service: 'ext', managedBy: IMPORTER }));
    await publishForeign(makeSlice('web-imported', epsOf(22, 2, ['zone-a', 'zone-b']), { managedBy: IMPORTER }));
    await publishService(makeService('other', { selector: null, labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' } }));
    await publishForeign(makeSlice('other-remote', epsOf(23, 2, ['zone-a']), { service: 'other', managedBy: IMPORTER }));
    restarted = await start(1);
    await expectBothConverged();

    // Down again: the import is withdrawn; a restart from the snapshot alone (no tail) keeps the rest.
    await stop(restarted);
    await publishForeign(makeSlice('ext-remote-1', [], { service: 'ext', managedBy: IMPORTER }), 'Deleted.v1');
    restarted = await start(1);
    await expectBothConverged();
    await stop(restarted);
    await start(1);
    await expectBothConverged();
    expect([...(await bucket(g.names.views)).keys()].some((k) => k.endsWith('.web-imported'))).toBe(true);
  });
});
