// ObjectWatch against cluster-sim over real HTTP list/watch (the real client library), with a
// proxy in between to cut connections and serve objects the simulator would refuse.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { startApiProxy } from '../testing/api-proxy.ts';
import type { ApiProxy } from '../testing/api-proxy.ts';
import { ObjectWatch } from './informers.ts';
import type { ObjectWatchEvent, ObjectWatchStatus } from './informers.ts';
import { buildKubeConfig } from './kube-config.ts';

let sim: ClusterSim;
let proxy: ApiProxy;
let watch: ObjectWatch | undefined;
let events: ObjectWatchEvent[];
let statuses: ObjectWatchStatus[];

beforeEach(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  proxy = await startApiProxy(sim.url);
  events = [];
  statuses = [];
});

afterEach(async () => {
  await watch?.stop();
  watch = undefined;
  await proxy.close();
  await sim.close();
});

function service(name: string): KubeObj {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec: { ports: [{ port: 80 }] } };
}

function start(seed: readonly unknown[] = []): Promise<void> {
  watch = new ObjectWatch({
    kubeConfig: buildKubeConfig({ type: 'server', url: proxy.url }),
    kind: 'Service',
    seed,
    onEvent: (e) => events.push(e),
    onStatus: (s) => statuses.push(s),
    restartDelayMs: () => 50,
  });
  return watch.start();
}

const uidOf = (o: unknown): string => ((o as KubeObj).metadata.uid ?? '');
const rvOf = (o: unknown): string => ((o as KubeObj).metadata.resourceVersion ?? '');
/** Events as `<type> <key> <uid> <rv>` lines, for exact comparison. */
const lines = (): string[] =>
  events.map((e) => (e.type === 'malformed' ? `malformed ${e.reason}` : e.type === 'delete' ? `delete/${e.cause} ${e.key} ${uidOf(e.object)} ${e.resourceVersion}` : `upsert ${e.key} ${uidOf(e.object)} ${rvOf(e.object)}`));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}; events: ${lines().join(' | ')}; statuses: ${JSON.stringify(statuses)}`);
}

describe('ObjectWatch over cluster-sim', () => {
  it('reports every listed object before start() resolves, then live changes in order', async () => {
    const a = sim.store.create('Service', service('a'));
    await start();
    expect(lines()).toEqual([`upsert default/a ${a.metadata.uid} ${a.metadata.resourceVersion}`]);
    const b = sim.store.create('Service', service('b'));
    const a2 = sim.store.update('Service', { ...a, metadata: { ...a.metadata, labels: { x: 'y' } } });
    const gone = sim.store.delete('Service', 'default', 'b').object;
    await until(() => events.length === 4, 'live events');
    expect(lines().slice(1)).toEqual([
      `upsert default/b ${b.metadata.uid} ${b.metadata.resourceVersion}`,
      `upsert default/a ${a.metadata.uid} ${a2.metadata.resourceVersion}`,
      `delete/watch default/b ${b.metadata.uid} ${gone.metadata.resourceVersion}`,
    ]);
  });

  it('an object with U+2028 and U+2029 in a string (raw in the JSON) arrives through the watch whole', async () => {
    await start();
    const odd = sim.store.create('Service', { ...service('odd'), metadata: { name: 'odd', namespace: 'default', annotations: { note: 'line\u2028separator\u2029paragraph' } } });
    await until(() => events.length === 1, 'the live event');
    expect(lines()).toEqual([`upsert default/odd ${odd.metadata.uid} ${odd.metadata.resourceVersion}`]);
    const got = events[0] as { object: KubeObj };
    expect(got.object.metadata.annotations).toEqual({ note: 'line\u2028separator\u2029paragraph' });
  });

  it('410 on an open watch (history compacted): re-lists, reports nothing twice and misses nothing', async () => {
    const a = sim.store.create('Service', service('a'));
    await start();
    const b = sim.store.create('Service', service('b'));
    await until(() => events.length === 2, 'the watch to be open');
    sim.store.compact();
    await until(() => statuses.some((s) => s.type === 'listed' && s.relist), 're-list');
    const c = sim.store.create('Service', service('c'));
    await until(() => events.length === 3, 'event after re-list');
    expect(lines()).toEqual([
      `upsert default/a ${a.metadata.uid} ${a.metadata.resourceVersion}`,
      `upsert default/b ${b.metadata.uid} ${b.metadata.resourceVersion}`,
      `upsert default/c ${c.metadata.uid} ${c.metadata.resourceVersion}`,
    ]);
    expect(statuses.map((s) => s.type)).toContain('expired');
  });

  it('a watch cut while changes happen (history kept): the restarted watch resumes and replays them once', async () => {
    const a = sim.store.create('Service', service('a'));
    await start();
    await proxy.down();
    const b = sim.store.create('Service', service('b'));
    const gone = sim.store.delete('Service', 'default', 'a').object;
    await proxy.resume();
    await until(() => events.length === 3, 'replayed events');
    expect(lines()).toEqual([
      `upsert default/a ${a.metadata.uid} ${a.metadata.resourceVersion}`,
      `upsert default/b ${b.metadata.uid} ${b.metadata.resourceVersion}`,
      `delete/watch default/a ${a.metadata.uid} ${gone.metadata.resourceVersion}`,
    ]);
    expect(statuses.some((s) => s.type === 'error')).toBe(true);
    expect(proxy.lists).toHaveLength(1); // resumed from its resourceVersion, no re-list
  });

  it('a watch cut while history is compacted: 410 on resume, re-list synthesizes the missed delete and replacement', async () => {
    const a = sim.store.create('Service', service('a'));
    const r = sim.store.create('Service', service('r'));
    const k = sim.store.create('Service', service('k'));
    await start();
    await proxy.down();
    sim.store.delete('Service', 'default', 'a');
    sim.store.delete('Service', 'default', 'r');
    const r2 = sim.store.create('Service', service('r'));
    const k2 = sim.store.update('Service', { ...k, metadata: { ...k.metadata, labels: { v: '2' } } });
    const n = sim.store.create('Service', service('n'));
    sim.store.compact();
    const listRV = String(sim.store.resourceVersion);
    await proxy.resume();
    await until(() => events.length === 8, 'events after re-list');
    expect(lines().slice(3)).toEqual([
      `delete/vanished default/a ${a.metadata.uid} ${listRV}`,
      `delete/replaced default/r ${r.metadata.uid} ${r.metadata.resourceVersion}`,
      `upsert default/k ${k.metadata.uid} ${k2.metadata.resourceVersion}`,
      `upsert default/n ${n.metadata.uid} ${n.metadata.resourceVersion}`,
      `upsert default/r ${r2.metadata.uid} ${r2.metadata.resourceVersion}`,
    ]);
    expect(proxy.lists).toHaveLength(2);
    // client-node's own relist deletes were swallowed: nothing further arrives.
    await new Promise((res) => setTimeout(res, 100));
    expect(events).toHaveLength(8);
  });

  it('a seed of objects recorded earlier: the first list deletes what is gone and skips what is unchanged', async () => {
    const a = sim.store.create('Service', service('a'));
    const b = sim.store.create('Service', service('b'));
    const ghost = { ...service('ghost'), metadata: { name: 'ghost', namespace: 'default', uid: 'ghost-uid', resourceVersion: '1' } };
    const staleB = { ...b, metadata: { ...b.metadata, resourceVersion: '1' } };
    await start([a, staleB, ghost]);
    expect(lines()).toEqual([`delete/vanished default/ghost ghost-uid ${sim.store.resourceVersion}`, `upsert default/b ${b.metadata.uid} ${b.metadata.resourceVersion}`]);
  });

  it('objects without a usable name (in a list or a watch event) are reported as malformed, not dropped', async () => {
    sim.store.create('Service', service('nameless'));
    proxy.mutate = (o) => ((o['metadata'] as { name?: string } | undefined)?.name?.startsWith('nameless') ? { ...o, metadata: { namespace: 'default' } } : o);
    await start();
    sim.store.create('Service', service('nameless-2'));
    const ok = sim.store.create('Service', service('fine'));
    await until(() => events.length === 3, 'events');
    expect(lines()).toEqual([
      'malformed metadata.name (or metadata.namespace) is missing or not a string',
      'malformed metadata.name (or metadata.namespace) is missing or not a string',
      `upsert default/fine ${ok.metadata.uid} ${ok.metadata.resourceVersion}`,
    ]);
  });

  it('keeps restarting while the server is unreachable and recovers when it returns', async () => {
    await proxy.down();
    const started = start();
    await until(() => statuses.filter((s) => s.type === 'error').length >= 2, 'two failed attempts');
    const a = sim.store.create('Service', service('a'));
    await proxy.resume();
    await started;
    expect(lines()).toEqual([`upsert default/a ${a.metadata.uid} ${a.metadata.resourceVersion}`]);
    expect(statuses.filter((s) => s.type === 'restarted').length).toBeGreaterThanOrEqual(2);
  });
});

describe('ObjectWatch of an optional kind (ServiceExport) where the API does not serve it', () => {
  let bare: ClusterSim | undefined;
  afterEach(async () => {
    await bare?.close();
    bare = undefined;
  });

  function startExports(url: string, seed: readonly unknown[] = []): Promise<void> {
    watch = new ObjectWatch({
      kubeConfig: buildKubeConfig({ type: 'server', url }),
      kind: 'ServiceExport',
      seed,
      onEvent: (e) => events.push(e),
      onStatus: (s) => statuses.push(s),
      restartDelayMs: () => 50,
      notServedRetryMs: 100,
    });
    return watch.start();
  }
  const exportOf = (name: string): KubeObj => ({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name, namespace: 'default' } });

  it('start() resolves with not-served reported once, and what the seed held is reported deleted', async () => {
    bare = await startClusterSim({ scenario: EMPTY_SCENARIO, mcsApi: false });
    const seeded = { ...exportOf('old'), metadata: { name: 'old', namespace: 'default', uid: 'u-old', resourceVersion: '3' } };
    await startExports(bare.url, [seeded]);
    expect(statuses.filter((s) => s.type === 'not-served')).toEqual([{ type: 'not-served', kind: 'ServiceExport', reason: 'not-found', retryInMs: 100 }]);
    expect(lines()).toEqual(['delete/vanished default/old u-old 3']);
    await new Promise((r) => setTimeout(r, 350)); // several retries, still not served
    expect(statuses.map((s) => s.type)).toEqual(['not-served']);
  });

  it('lists and watches once the API serves the kind (the CRDs installed later)', async () => {
    // The proxy answers 404 for the MCS group until it is let through, as a cluster gaining the CRDs.
    const created = sim.store.create('ServiceExport', exportOf('web'));
    await proxy.hide('/apis/multicluster.x-k8s.io');
    await startExports(proxy.url);
    expect(statuses.map((s) => s.type)).toEqual(['not-served']);
    expect(events).toEqual([]);
    await proxy.unhide();
    await until(() => events.length === 1, 'the first list after the CRDs appear');
    expect(lines()).toEqual([`upsert default/web ${created.metadata.uid} ${created.metadata.resourceVersion}`]);
    const later = sim.store.create('ServiceExport', exportOf('api'));
    await until(() => events.length === 2, 'a live change');
    expect(lines()[1]).toBe(`upsert default/api ${later.metadata.uid} ${later.metadata.resourceVersion}`);
  });

  it('403 (RBAC does not grant it): not-served as forbidden, what the seed held is kept, and listed once allowed', async () => {
    const seeded = { ...exportOf('old'), metadata: { name: 'old', namespace: 'default', uid: 'u-old', resourceVersion: '3' } };
    await proxy.hide('/apis/multicluster.x-k8s.io', 403);
    await startExports(proxy.url, [seeded]);
    expect(statuses).toEqual([{ type: 'not-served', kind: 'ServiceExport', reason: 'forbidden', retryInMs: 100 }]);
    expect(events).toEqual([]);
    await proxy.unhide();
    // Allowed again: the list finds no such object, so the seed's is deleted now.
    await until(() => events.length === 1, 'the first allowed list');
    expect(lines()).toEqual([`delete/vanished default/old u-old ${sim.store.resourceVersion}`]);
  });

  it('another kind answered 404 is an error that keeps restarting, not not-served', async () => {
    await proxy.hide('/api/v1/services');
    const started = start();
    await until(() => statuses.filter((s) => s.type === 'error').length >= 2, 'two failed attempts');
    expect(statuses.some((s) => s.type === 'not-served')).toBe(false);
    await proxy.unhide();
    await started;
  });
});
