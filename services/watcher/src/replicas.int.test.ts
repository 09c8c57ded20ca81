// Watcher replicas, active-active with dedup (docs/architecture.md, "Watcher replicas"): two
// watchers list+watch the same cluster-sim and publish to one KUBE. The stream drops identical
// versions by Nats-Msg-Id, and every consumer folds by resourceVersion, so whatever the second
// replica adds is a duplicate (dropped) or stale (a no-op). Own stream names and subject prefix
// (withJetStream), real NATS, real HTTP list/watch.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseScenario, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { DELETED, decodeKubeMessage } from '@slicemesh/contracts';
import { ClusterState } from '@slicemesh/core';
import type { ObjectChange, ProjectedKind } from '@slicemesh/core';
import { toDomain } from '@slicemesh/kube';
import type { WatchedKind } from '@slicemesh/kube';
import { ensureStreams } from '@slicemesh/nats';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { watcherConfigWith } from './config.ts';
import type { WatcherConfig } from './config.ts';
import type { SubjectLayout } from './kube-message.ts';
import { subjectOf } from './kube-message.ts';
import { startWatcher } from './start-watcher.ts';
import type { WatcherHandle } from './start-watcher.ts';
import { foldKube, readKube, repeatedMsgIDs, simState, staleTails } from './testing/stream-state.ts';
import type { StoredMessage } from './testing/stream-state.ts';
import type { KubeChangeEvent } from '@slicemesh/kube';

const CLUSTER = 'c1';
const PARTITIONS = 3;
const SCENARIO = parseScenario(
  `
seed: watcher-replicas
cluster: {kubernetesService: true}
zones: [zone-a, zone-b]
nodes:
  - {namePrefix: node, count: 2, zone: zone-a, cpu: 4}
  - {name: node-b1, zone: zone-b, cpu: 4}
defaults: {readinessDelay: 0s, terminationGracePeriodSeconds: 0}
deployments:
  - {name: web, namespace: shop, replicas: 3, containerPorts: [{name: http, containerPort: 8080}]}
services:
  - {name: web, namespace: shop, deployment: web, ports: [{name: http, port: 80, targetPort: http}]}
`,
  'watcher-replicas',
);

let f: JetStreamFixture;
let sim: ClusterSim;
let config: WatcherConfig;
let layout: SubjectLayout;
const handles: WatcherHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
  sim = await startClusterSim({ scenario: SCENARIO });
  layout = { partitions: PARTITIONS, prefix: f.names.prefix };
  config = watcherConfigWith({
    cluster: CLUSTER, kubeServer: sim.url, natsUrl: f.url, partitions: PARTITIONS,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, subjectPrefix: f.names.prefix,
    logLevel: 'silent', publishWindow: 8,
  });
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await sim.close();
  await f.cleanup();
});

async function start(): Promise<WatcherHandle> {
  const h = startWatcher(config, { restartDelayMs: () => 50 });
  handles.push(h);
  await h.ready;
  return h;
}

async function stop(h: WatcherHandle): Promise<void> {
  handles.splice(handles.indexOf(h), 1);
  await h.close();
}

async function counter(h: WatcherHandle, name: string): Promise<number> {
  const values = (await h.metrics.registry.getSingleMetric(`slicemesh_watcher_${name}`)?.get())?.values ?? [];
  return values.reduce((sum, v) => sum + v.value, 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until the last message per subject says what the simulator holds. */
async function converged(): Promise<StoredMessage<KubeChangeEvent>[]> {
  let kube: StoredMessage<KubeChangeEvent>[] = [];
  for (let i = 0; i < 300; i++) {
    kube = await readKube(f.jsm, f.names.kube);
    if (JSON.stringify([...foldKube(kube)].sort()) === JSON.stringify([...simState(sim, CLUSTER, layout)].sort())) break;
    await sleep(50);
  }
  expect(Object.fromEntries([...foldKube(kube)].sort())).toEqual(Object.fromEntries([...simState(sim, CLUSTER, layout)].sort()));
  return kube;
}

const PROJECTED: readonly ProjectedKind[] = ['Service', 'Pod', 'Node', 'Endpoints'];

/** Everything a ClusterState holds of the cluster, in a comparable form. */
function dump(state: ClusterState, namespaces: readonly string[]): unknown {
  return {
    nodes: [...state.nodes().values()].map((n) => n.metadata).sort((a, b) => (a.name < b.name ? -1 : 1)),
    namespaces: namespaces.map((ns) => ({
      ns,
      services: state.servicesIn(ns),
      pods: state.podsIn(ns),
      endpoints: state.servicesIn(ns).map((s) => state.endpoints(ns, s.metadata.name) ?? null),
    })),
  };
}

/** A ClusterState folded from the whole log, in stream order, and what each message did there. */
function foldLog(kube: readonly StoredMessage<KubeChangeEvent>[]): { state: ClusterState; applied: number; stale: string[] } {
  const state = new ClusterState();
  let applied = 0;
  const stale: string[] = [];
  for (const m of kube) {
    const d = decodeKubeMessage({ subject: m.subject, data: m.body }, { cluster: CLUSTER, prefix: f.names.prefix, partitions: PARTITIONS });
    if (!d.ok) throw new Error(`unreadable KUBE message ${m.seq}: ${d.rejection.reason}`);
    const c = d.change;
    if (c.kind === 'EndpointSlice' || c.kind === 'ServiceExport') continue;
    const r = state.apply({ kind: c.kind, namespace: c.namespace, name: c.name, resourceVersion: c.resourceVersion, deleted: c.type === DELETED, object: c.object as ObjectChange['object'] });
    if (r.applied) applied++;
    else stale.push(`${m.seq} ${c.type} ${c.kind} ${c.namespace}/${c.name}@${c.resourceVersion}`);
  }
  return { state, applied, stale };
}

/** The single-watcher truth: a ClusterState of the API's final list. */
function truth(): ClusterState {
  const state = new ClusterState();
  for (const kind of PROJECTED) {
    for (const raw of sim.store.list(kind)) {
      const o = toDomain(kind as WatchedKind, raw, { maxObjectBytes: Number.MAX_SAFE_INTEGER });
      state.apply({ kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name, resourceVersion: o.metadata.resourceVersion ?? '', deleted: false, object: o as ObjectChange['object'] });
    }
  }
  return state;
}

const pod = (name: string, labels: Record<string, string>): KubeObj =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', labels }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] } }) as unknown as KubeObj;

/** One round of churn: a create, an update of the previous round's pod, a delete of an older one. */
function churn(i: number, deleted: KubeObj[]): void {
  sim.store.create('Pod', pod(`churn-${i}`, { app: 'churn', round: String(i) }));
  const prev = sim.store.get('Pod', 'shop', `churn-${i - 1}`);
  if (prev !== undefined) sim.store.update('Pod', { ...prev, metadata: { ...prev.metadata, labels: { ...prev.metadata.labels, touched: 'yes' } } });
  if (i % 3 === 2 && sim.store.get('Pod', 'shop', `churn-${i - 2}`) !== undefined) deleted.push(sim.store.delete('Pod', 'shop', `churn-${i - 2}`).object);
}

function relabelNode(name: string, zone: string): void {
  const node = sim.store.get('Node', undefined, name) as KubeObj;
  sim.store.update('Node', { ...node, metadata: { ...node.metadata, labels: { ...node.metadata.labels, 'topology.kubernetes.io/zone': zone } } });
}

describe('watcher replicas: two watchers of one cluster, active-active with dedup', () => {
  it('a second watcher starting beside a running one publishes nothing: no spurious delete, no older version', async () => {
    const a = await start();
    const before = (await readKube(f.jsm, f.names.kube)).length;
    const b = await start();
    expect((await readKube(f.jsm, f.names.kube)).length).toBe(before);
    expect(b.stats()).toEqual({ published: 0, duplicates: 0, deadLetters: 0, skipped: expect.any(Number) as number });
    expect(a.stats().published).toBe(before);
  });

  it('churn, a node relabel, one replica stopped and restarted mid-run, a cut watch: the log folds to the API\'s final state', async () => {
    const a = await start();
    let b = await start();
    const deleted: KubeObj[] = [];
    let round = 0;
    const rounds = async (n: number) => {
      for (const end = round + n; round < end; round++) {
        churn(round, deleted);
        await sleep(15);
      }
    };
    await rounds(15);
    relabelNode('node-1', 'zone-b');
    await rounds(10);
    const bStats = b.stats();
    await stop(b); // mid-run: changes go on while it is away
    await rounds(10);
    sim.store.delete('Service', 'shop', 'web');
    relabelNode('node-1', 'zone-a');
    await rounds(5);
    b = await start(); // its readback and first list run while A keeps publishing
    await rounds(10);
    // Cut every open watch (ERROR 410, as a compacted history) through the chaos control.
    const cut = await fetch(`${sim.url}/sim/compact`, { method: 'POST' });
    expect(cut.status).toBe(200);
    await rounds(10);
    relabelNode('node-2', 'zone-b');

    const kube = await converged();
    // The last message per subject is the API's final state (converged() compared every live
    // object); every deleted object's subject ends in a delete.
    const last = new Map(kube.map((m) => [m.subject, m.body]));
    for (const p of deleted) {
      const subject = subjectOf(CLUSTER, toDomain('Pod', p, { maxObjectBytes: Number.MAX_SAFE_INTEGER }), layout);
      expect(last.get(subject)?.type, subject).toBe('Deleted.v1');
    }
    expect(last.get(subjectOf(CLUSTER, toDomain('Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'shop', uid: 'x', resourceVersion: '1' }, spec: {} }, { maxObjectBytes: 1e9 }), layout))?.type).toBe('Deleted.v1');
    const node1 = kube.filter((m) => m.body.kind === 'Node' && m.body.object.metadata.name === 'node-1');
    expect(node1.at(-1)?.body.object.metadata.labels?.['topology.kubernetes.io/zone']).toBe('zone-a');

    // The dedup really happened: the stream answered duplicate to the replica that came second.
    await sleep(300); // the slower replica's last publishes
    const duplicates = a.stats().duplicates + bStats.duplicates + b.stats().duplicates;
    expect(duplicates).toBeGreaterThan(0);
    expect(repeatedMsgIDs(kube)).toEqual([]);
    // Whatever order the replicas' publishes reached the stream in, each subject ends in its newest version.
    expect(staleTails(await readKube(f.jsm, f.names.kube))).toEqual([]);
    // Both replicas re-listed after the cut.
    expect(await counter(a, 'relists_total')).toBeGreaterThan(0);
    expect(await counter(b, 'relists_total')).toBeGreaterThan(0);

    // The whole log folded as the slicer folds it equals the single-watcher truth.
    const all = await readKube(f.jsm, f.names.kube);
    const folded = foldLog(all);
    const namespaces = ['default', 'kube-system', 'shop'];
    expect(dump(folded.state, namespaces)).toEqual(dump(truth(), namespaces));
    // What the second replica added beyond the dedup: messages the fold did not apply.
    console.log(JSON.stringify({ messages: all.length, applied: folded.applied, stale: folded.stale, duplicates, deletes: deleted.length }));
  });

  it('POST /sim/compact ends every open watch with 410; both replicas re-list and miss nothing (deletes included)', async () => {
    const a = await start();
    const b = await start();
    const gone = sim.store.list('Pod', { namespace: 'shop' }).slice(0, 2).map((p) => sim.store.delete('Pod', 'shop', p.metadata.name).object);
    expect((await fetch(`${sim.url}/sim/compact`, { method: 'POST' })).status).toBe(200);
    sim.driver.apply({ action: 'scale', deployment: { namespace: 'shop', name: 'web' }, replicas: 5 });
    relabelNode('node-b1', 'zone-a');
    const kube = await converged();
    for (const p of gone) expect(kube.some((m) => m.body.type === 'Deleted.v1' && m.body.object.metadata.uid === p.metadata.uid)).toBe(true);
    expect(await counter(a, 'relists_total')).toBeGreaterThan(0);
    expect(await counter(b, 'relists_total')).toBeGreaterThan(0);
    expect((await fetch(`${sim.url}/sim/compact`)).status).toBe(405);
  });
});
