// The watcher end to end: cluster-sim (real HTTP list/watch through the real client library,
// behind a proxy that cuts connections and serves hostile objects) → watcher → real JetStream.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { startApiProxy } from '@slicemesh/kube/testing';
import type { ApiProxy } from '@slicemesh/kube/testing';
import { ensureStreams, partitionOf } from '@slicemesh/nats';
import { createLogger } from '@slicemesh/runtime';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { watcherConfigWith } from './config.ts';
import type { WatcherConfig } from './config.ts';
import type { SubjectLayout } from './kube-message.ts';
import { startWatcher } from './start-watcher.ts';
import type { WatcherHandle } from './start-watcher.ts';
import { foldKube, readDlq, readKube, repeatedDeletes, repeatedMsgIDs, repeatedVersions, simState } from './testing/stream-state.ts';

const CLUSTER = 'c1';
const PARTITIONS = 3;
const SCENARIO = parseScenario(
  `
seed: watcher-it
cluster: {kubernetesService: true}
zones: [zone-a, zone-b]
nodes:
  - {namePrefix: node, count: 2, zone: zone-a, cpu: 4}
  - {name: node.b.1, zone: zone-b, cpu: 4}
defaults: {readinessDelay: 0s, terminationGracePeriodSeconds: 0}
deployments:
  - {name: web, namespace: shop, replicas: 3, containerPorts: [{name: http, containerPort: 8080}]}
  - {name: api, namespace: infra, replicas: 2, containerPorts: [{name: grpc, containerPort: 9090}]}
services:
  - {name: web, namespace: shop, deployment: web, ports: [{name: http, port: 80, targetPort: http}]}
  - {name: api, namespace: infra, deployment: api, ports: [{name: grpc, port: 9090, targetPort: grpc}]}
`,
  'watcher-it',
);

let f: JetStreamFixture;
let sim: ClusterSim;
let proxy: ApiProxy;
let config: WatcherConfig;
let layout: SubjectLayout;
const handles: WatcherHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
  sim = await startClusterSim({ scenario: SCENARIO });
  proxy = await startApiProxy(sim.url);
  layout = { partitions: PARTITIONS, prefix: f.names.prefix };
  config = watcherConfigWith({
    cluster: CLUSTER, kubeServer: proxy.url, natsUrl: f.url, partitions: PARTITIONS,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, subjectPrefix: f.names.prefix,
    logLevel: 'silent', publishWindow: 16,
  });
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await proxy.close();
  await sim.close();
  await f.cleanup();
});

async function start(overrides: Partial<WatcherConfig> = {}): Promise<WatcherHandle> {
  const h = startWatcher({ ...config, ...overrides }, { restartDelayMs: () => 50 });
  handles.push(h);
  await h.ready;
  return h;
}

async function stop(h: WatcherHandle): Promise<void> {
  handles.splice(handles.indexOf(h), 1);
  await h.close();
}

/** Sum of a counter's series on the watcher's registry. */
async function counter(h: WatcherHandle, name: string): Promise<number> {
  const metric = h.metrics.registry.getSingleMetric(`slicemesh_watcher_${name}`);
  const values = (await metric?.get())?.values ?? [];
  return values.reduce((sum, v) => sum + v.value, 0);
}

const isHostile = (name: string): boolean => name.startsWith('hostile-');

/** Waits until KUBE says exactly what the simulator holds, then checks it once more and for repeats. */
async function expectConverged(exclude: (name: string) => boolean = () => false): Promise<void> {
  let kube = new Map<string, string>();
  let want = new Map<string, string>();
  for (let i = 0; i < 200; i++) {
    kube = foldKube(await readKube(f.jsm, f.names.kube));
    want = simState(sim, CLUSTER, layout, exclude);
    if (JSON.stringify([...kube].sort()) === JSON.stringify([...want].sort())) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(Object.fromEntries([...kube].sort())).toEqual(Object.fromEntries([...want].sort()));
  const all = await readKube(f.jsm, f.names.kube);
  expect(repeatedMsgIDs(all)).toEqual([]);
  expect(repeatedVersions(all)).toEqual([]);
  expect(repeatedDeletes(all)).toEqual([]);
}

function deletePods(namespace: string, count: number): KubeObj[] {
  return sim.store
    .list('Pod', { namespace })
    .slice(0, count)
    .map((p) => sim.store.delete('Pod', namespace, p.metadata.name).object);
}

describe('watcher: list, watch, publish', () => {
  it('publishes every object of the initial lists with its subject and msgID, once', async () => {
    await start();
    const msgs = await readKube(f.jsm, f.names.kube);
    const web = sim.store.get('Service', 'shop', 'web');
    const node = sim.store.get('Node', undefined, 'node.b.1');
    const p = f.names.prefix;
    const bySubject = new Map(msgs.map((m) => [m.subject, m]));
    expect(bySubject.get(`${p}kube.${CLUSTER}.${partitionOf('shop', PARTITIONS)}.service.shop.web`)?.msgID).toBe(`${CLUSTER}/${web?.metadata.uid}/${web?.metadata.resourceVersion}`);
    expect(bySubject.get(`${p}kube.${CLUSTER}.node.node=2Eb=2E1`)?.msgID).toBe(`${CLUSTER}/${node?.metadata.uid}/${node?.metadata.resourceVersion}`);
    expect(msgs.every((m) => m.body.type === 'Upserted.v1' && m.body.cluster === CLUSTER)).toBe(true);
    // Trimmed: no managedFields-like extras, spec fields outside the model dropped.
    const pod = msgs.find((m) => m.body.kind === 'Pod')?.body.object as unknown as { spec: Record<string, unknown> };
    expect(pod.spec).not.toHaveProperty('schedulerName');
    await expectConverged();
  });

  it('follows updates and deletes (pods replaced, a service changed, a node removed) to the same final state', async () => {
    await start();
    const before = (await readKube(f.jsm, f.names.kube)).length;
    const gone = deletePods('shop', 2);
    const api = sim.store.get('Service', 'infra', 'api') as KubeObj;
    sim.store.update('Service', { ...api, metadata: { ...api.metadata, labels: { tier: 'backend' } } });
    sim.driver.apply({ action: 'scale', deployment: { namespace: 'infra', name: 'api' }, replicas: 4 });
    await expectConverged();
    const msgs = await readKube(f.jsm, f.names.kube);
    expect(msgs.length).toBeGreaterThan(before);
    for (const pod of gone) {
      const del = msgs.find((m) => m.body.type === 'Deleted.v1' && m.body.object.metadata.uid === pod.metadata.uid);
      expect(del?.msgID).toBe(`${CLUSTER}/${pod.metadata.uid}/${pod.metadata.resourceVersion}/deleted`);
    }
  });
});

describe('watcher: hostile input is dead-lettered, never published', () => {
  // Each hostile object exists validly in the simulator as `hostile-<n>`; the proxy shows the
  // watcher what a broken or malicious API server could send instead.
  // `marker`: text that identifies the rejected object in the dead letter's raw body.
  const longName = `${'n'.repeat(60)}.`.repeat(4) + 'n'.repeat(10);
  const hostile: Record<string, { kind: 'Service' | 'Pod' | 'Node'; rewrite: (o: Record<string, unknown>) => unknown; marker: string; field: string; reason: RegExp }> = {
    'hostile-dot': { kind: 'Service', rewrite: (o) => rename(o, 'my.svc'), marker: '"my.svc"', field: 'metadata.name', reason: /DNS-1035/ },
    'hostile-star': { kind: 'Service', rewrite: (o) => rename(o, 'web-*'), marker: '"web-*"', field: 'metadata.name', reason: /DNS-1035/ },
    'hostile-gt': { kind: 'Pod', rewrite: (o) => rename(o, 'a>b'), marker: '"a>b"', field: 'metadata.name', reason: /DNS-1123/ },
    'hostile-space': { kind: 'Node', rewrite: (o) => rename(o, 'node 1'), marker: '"node 1"', field: 'metadata.name', reason: /DNS-1123/ },
    'hostile-unicode': { kind: 'Pod', rewrite: (o) => rename(o, 'pöd-ünï'), marker: '"pöd-ünï"', field: 'metadata.name', reason: /DNS-1123/ },
    'hostile-long': { kind: 'Node', rewrite: (o) => rename(o, longName), marker: `"${longName}"`, field: 'metadata.name', reason: /at most 253/ },
    'hostile-ip': { kind: 'Pod', rewrite: (o) => ({ ...o, status: { podIP: '10.0.0.256', podIPs: [{ ip: '10.0.0.256' }] } }), marker: '"hostile-ip"', field: 'status.podIP', reason: /valid IP/ },
    'hostile-big': { kind: 'Service', rewrite: (o) => withMeta(o, { annotations: { blob: 'x'.repeat(40_000) } }), marker: '"hostile-big"', field: '<object>', reason: /byte limit/ },
    'hostile-spec': { kind: 'Service', rewrite: (o) => ({ ...o, spec: 'not an object' }), marker: '"hostile-spec"', field: 'spec', reason: /must be an object/ },
    'hostile-nameless': { kind: 'Pod', rewrite: (o) => ({ ...o, metadata: { namespace: 'shop', uid: 'nameless-uid' } }), marker: '"nameless-uid"', field: 'metadata', reason: /metadata\.name/ },
  };
  function rename(o: Record<string, unknown>, name: string): unknown {
    return withMeta(o, { name });
  }
  function withMeta(o: Record<string, unknown>, meta: Record<string, unknown>): unknown {
    return { ...o, metadata: { ...(o['metadata'] as object), ...meta } };
  }
  function createHostile(name: string, kind: 'Service' | 'Pod' | 'Node'): void {
    if (kind === 'Service') sim.store.create('Service', { apiVersion: 'v1', kind, metadata: { name, namespace: 'shop' }, spec: { ports: [{ port: 80 }] } });
    else if (kind === 'Node') sim.store.create('Node', { apiVersion: 'v1', kind, metadata: { name }, spec: {}, status: {} });
    else sim.store.create('Pod', { apiVersion: 'v1', kind, metadata: { name, namespace: 'shop' }, spec: { containers: [{ name: 'c' }] } });
  }

  it('each hostile object (in the list or the watch) lands in the DLQ with its reason and field; the rest converges', async () => {
    proxy.mutate = (o) => {
      const name = (o['metadata'] as { name?: string } | undefined)?.name ?? '';
      return hostile[name]?.rewrite(o) ?? o;
    };
    const names = Object.keys(hostile);
    const half = Math.ceil(names.length / 2);
    for (const n of names.slice(0, half)) createHostile(n, hostile[n]!.kind); // seen in the initial lists
    // A valid object with a hostile-looking but legal name: dotted, 253 characters, encoded.
    const long = `${'p'.repeat(62)}.`.repeat(4) + 'p'.repeat(1);
    sim.store.create('Pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: long, namespace: 'shop' }, spec: { containers: [{ name: 'c' }] } });
    await start({ maxObjectBytes: 32 * 1024 });
    for (const n of names.slice(half)) createHostile(n, hostile[n]!.kind); // seen by the watch
    await expectConverged(isHostile);
    const letters = await readDlq(f.jsm, f.names.dlq);
    for (const [name, h] of Object.entries(hostile)) {
      const letter = letters.find((l) => l.body.object.includes(h.marker));
      expect(letter, name).toBeDefined();
      expect(letter?.subject).toBe(`${f.names.prefix}dlq.${CLUSTER}.watcher`);
      expect(letter?.body.field, name).toBe(h.field);
      expect(letter?.body.reason, name).toMatch(h.reason);
    }
    const kube = await readKube(f.jsm, f.names.kube);
    const markers = Object.values(hostile).map((h) => h.marker);
    expect(kube.filter((m) => markers.some((x) => JSON.stringify(m.body).includes(x)))).toEqual([]);
    expect(kube.some((m) => m.body.object.metadata.name === long)).toBe(true);
  });

  it('an object that turns invalid keeps its last valid state in KUBE, and its delete is still published', async () => {
    sim.store.create('Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'flaky', namespace: 'shop' }, spec: { ports: [{ port: 80 }] } });
    await start();
    const valid = sim.store.get('Service', 'shop', 'flaky') as KubeObj;
    proxy.mutate = (o) => ((o['metadata'] as { name?: string }).name === 'flaky' ? { ...o, spec: { clusterIP: 'bogus' } } : o);
    sim.store.update('Service', { ...valid, metadata: { ...valid.metadata, labels: { v: '2' } } });
    for (let i = 0; i < 100 && (await readDlq(f.jsm, f.names.dlq)).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const gone = sim.store.delete('Service', 'shop', 'flaky').object;
    await expectConverged();
    const kube = await readKube(f.jsm, f.names.kube);
    const flaky = kube.filter((m) => m.body.object.metadata.name === 'flaky');
    expect(flaky.map((m) => [m.body.type, m.body.object.metadata.resourceVersion])).toEqual([
      ['Upserted.v1', valid.metadata.resourceVersion],
      ['Deleted.v1', gone.metadata.resourceVersion],
    ]);
    expect((await readDlq(f.jsm, f.names.dlq)).map((l) => l.body.field)).toEqual(['spec.clusterIP']);
  });
});

describe('watcher: a cut watch loses nothing and duplicates nothing', () => {
  it('410 on an open watch (history compacted) re-lists to the same final state', async () => {
    const h = await start();
    deletePods('shop', 1);
    sim.store.compact();
    deletePods('infra', 1);
    await expectConverged();
    expect(await counter(h, 'relists_total')).toBeGreaterThan(0);
  });

  it('a dropped connection during changes resumes from its resourceVersion to the same final state', async () => {
    const h = await start();
    const lists = proxy.lists.length;
    proxy.cut();
    deletePods('shop', 1);
    proxy.cut();
    sim.driver.apply({ action: 'scale', deployment: { namespace: 'shop', name: 'web' }, replicas: 5 });
    await expectConverged();
    expect(await counter(h, 'informer_restarts_total')).toBeGreaterThan(0);
    expect(proxy.lists.length).toBe(lists); // resumed by watching from the last resourceVersion
  });

  it('an outage spanning a compaction: 410 on resume, re-list publishes the deletes it missed', async () => {
    const h = await start();
    await proxy.down();
    const gone = deletePods('shop', 2);
    sim.store.delete('Node', undefined, 'node-2');
    sim.driver.apply({ action: 'scale', deployment: { namespace: 'infra', name: 'api' }, replicas: 1 });
    sim.store.compact();
    await proxy.resume();
    await expectConverged();
    expect(await counter(h, 'relists_total')).toBeGreaterThan(0);
    const kube = await readKube(f.jsm, f.names.kube);
    for (const pod of gone) expect(kube.some((m) => m.body.type === 'Deleted.v1' && m.body.object.metadata.uid === pod.metadata.uid)).toBe(true);
    expect(kube.some((m) => m.body.type === 'Deleted.v1' && m.body.object.metadata.name === 'node-2')).toBe(true);
  });

  it('two watchers of one cluster side by side store each change once (the second sees duplicates)', async () => {
    const a = await start();
    const b = await start();
    deletePods('shop', 2);
    sim.driver.apply({ action: 'scale', deployment: { namespace: 'infra', name: 'api' }, replicas: 3 });
    await expectConverged();
    await new Promise((r) => setTimeout(r, 200)); // let the slower watcher finish its publishes
    const stats = [a.stats(), b.stats()];
    expect(stats[0]!.duplicates + stats[1]!.duplicates).toBeGreaterThan(0);
    const kube = await readKube(f.jsm, f.names.kube);
    expect(kube.length).toBe(stats[0]!.published + stats[1]!.published);
    await expectConverged();
  });

  it('a watcher restarted after deletes happened while it was down publishes them, and nothing else twice', async () => {
    const first = await start();
    await stop(first);
    const before = (await readKube(f.jsm, f.names.kube)).length;
    const gone = deletePods('shop', 1);
    sim.store.delete('Service', 'infra', 'api');
    sim.store.compact();
    const second = await start();
    await expectConverged();
    const kube = await readKube(f.jsm, f.names.kube);
    expect(kube.some((m) => m.body.type === 'Deleted.v1' && m.body.object.metadata.uid === gone[0]?.metadata.uid)).toBe(true);
    expect(kube.some((m) => m.body.type === 'Deleted.v1' && m.body.kind === 'Service' && m.body.object.metadata.name === 'api')).toBe(true);
    // Only real changes were added: unchanged objects were recognised from KUBE and not sent
    // again (a resend would show up as a duplicate, being inside the dedup window).
    expect(kube.length - before).toBe(second.stats().published);
    expect(second.stats().duplicates).toBe(0);
    expect(second.stats().published).toBeLessThan(simState(sim, CLUSTER, layout).size);
  });
});

describe("watcher: other controllers' EndpointSlices", () => {
  const slice = (name: string, managedBy: string): KubeObj =>
    ({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name, namespace: 'shop', labels: { 'kubernetes.io/service-name': 'imported', 'endpointslice.kubernetes.io/managed-by': managedBy } },
      addressType: 'IPv4', endpoints: [{ addresses: ['10.200.0.1'] }], ports: [{ name: 'db', port: 5432 }],
    }) as unknown as KubeObj;
  const managers = (msgs: Awaited<ReturnType<typeof readKube>>) =>
    msgs.filter((m) => m.body.kind === 'EndpointSlice').map((m) => `${m.body.type} ${m.body.object.metadata.name} ${m.body.object.metadata.labels?.['endpointslice.kubernetes.io/managed-by']}`);

  it("publishes other controllers' slices only, follows a slice that becomes ours (a delete with its last foreign state) and back", async () => {
    sim.store.create('EndpointSlice', slice('imported-1', 'mcs-importer'));
    sim.store.create('EndpointSlice', slice('web-ours', 'endpointslice-controller.k8s.io'));
    const h = await start();
    expect(managers(await readKube(f.jsm, f.names.kube))).toEqual(['Upserted.v1 imported-1 mcs-importer']);
    // The API server left ours out (label selector): the watcher never had to drop one itself.
    const skipped = (await h.metrics.registry.getSingleMetric('slicemesh_watcher_skipped_total')?.get())?.values ?? [];
    expect(skipped.filter((v) => v.labels['reason'] === 'own-slice' && v.value > 0)).toEqual([]);

    const live = sim.store.get('EndpointSlice', 'shop', 'imported-1') as KubeObj;
    sim.store.update('EndpointSlice', { ...live, metadata: { ...live.metadata, labels: { ...live.metadata.labels, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } } });
    await expect.poll(async () => managers(await readKube(f.jsm, f.names.kube)), { timeout: 10_000 }).toEqual(['Upserted.v1 imported-1 mcs-importer', 'Deleted.v1 imported-1 mcs-importer']);

    const ours = sim.store.get('EndpointSlice', 'shop', 'imported-1') as KubeObj;
    sim.store.update('EndpointSlice', { ...ours, metadata: { ...ours.metadata, labels: { ...ours.metadata.labels, 'endpointslice.kubernetes.io/managed-by': 'mcs-importer' } } });
    await expect.poll(async () => managers(await readKube(f.jsm, f.names.kube)).length, { timeout: 10_000 }).toBe(3);
    await expectConverged();
  });
});

describe('watcher: ServiceExports (MCS, an optional CRD)', () => {
  const exportOf = (namespace: string, name: string): KubeObj => ({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name, namespace } });
  const exportSubject = (namespace: string, name: string): string => `${f.names.prefix}kube.${CLUSTER}.${partitionOf(namespace, PARTITIONS)}.serviceexport.${namespace}.${name}`;

  it('publishes them like the other kinds where the API serves them: listed, created, deleted', async () => {
    const web = sim.store.create('ServiceExport', exportOf('shop', 'web'));
    await start();
    const api = sim.store.create('ServiceExport', exportOf('infra', 'api'));
    sim.store.delete('ServiceExport', 'shop', 'web');
    await expectConverged();
    const msgs = (await readKube(f.jsm, f.names.kube)).filter((m) => m.body.kind === 'ServiceExport');
    expect(msgs.map((m) => [m.subject, m.body.type, m.body.object.metadata.uid])).toEqual([
      [exportSubject('shop', 'web'), 'Upserted.v1', web.metadata.uid],
      [exportSubject('infra', 'api'), 'Upserted.v1', api.metadata.uid],
      [exportSubject('shop', 'web'), 'Deleted.v1', web.metadata.uid],
    ]);
    expect(msgs[0]?.body.object.metadata.creationTimestamp).toBe(web.metadata.creationTimestamp);
  });

  it('where the API does not serve them: ready with the other kinds, says so once, and publishes them once the CRDs appear', async () => {
    const logs: Record<string, unknown>[] = [];
    const logger = createLogger({ service: 'watcher', destination: { write: (l: string) => void logs.push(JSON.parse(l) as Record<string, unknown>) } });
    await proxy.hide('/apis/multicluster.x-k8s.io');
    const h = startWatcher(config, { restartDelayMs: () => 50, notServedRetryMs: 200, logger });
    handles.push(h);
    await h.ready;
    // Not a Service's name, so that excluding it leaves the rest of the state compared.
    const exp = sim.store.create('ServiceExport', exportOf('shop', 'exported'));
    await expectConverged((name) => name === 'exported');
    await new Promise((r) => setTimeout(r, 700)); // a few retries: still not served, logged once
    const notServed = (): Record<string, unknown>[] => logs.filter((l) => String(l['msg']).startsWith('ServiceExports are not served'));
    expect(notServed()).toHaveLength(1);
    expect(notServed()[0]).toMatchObject({ level: 'info', kind: 'ServiceExport', retryInMs: 200 });
    expect((await readKube(f.jsm, f.names.kube)).some((m) => m.body.kind === 'ServiceExport')).toBe(false);
    expect(logs.filter((l) => l['level'] === 'warn' || l['level'] === 'error')).toEqual([]);
    await proxy.unhide();
    await expectConverged();
    const msgs = (await readKube(f.jsm, f.names.kube)).filter((m) => m.body.kind === 'ServiceExport');
    expect(msgs.map((m) => [m.subject, m.body.object.metadata.uid])).toEqual([[exportSubject('shop', 'exported'), exp.metadata.uid]]);
    expect(notServed()).toHaveLength(1);
  });
});
