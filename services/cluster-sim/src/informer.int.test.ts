// Real clients against the simulator: @kubernetes/client-node informers see adds, updates
// and deletes of pods, services, nodes and endpoints, and recover from a 410 by re-listing.
import { CoreV1Api, KubeConfig, makeInformer, Watch } from '@kubernetes/client-node';
import type { Informer, KubernetesObject, ObjectCache } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from './start.ts';
import type { ClusterSim } from './start.ts';

let sim: ClusterSim;
let kc: KubeConfig;
let core: CoreV1Api;

beforeAll(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sim', server: sim.url, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'sim', cluster: 'sim', user: 'anonymous' }],
    currentContext: 'sim',
  });
  core = kc.makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await sim.close();
});

async function waitFor(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Recorded<T extends KubernetesObject> {
  readonly informer: Informer<T> & ObjectCache<T>;
  readonly log: string[];
  readonly errors: unknown[];
  connects: number;
}

async function record<T extends KubernetesObject>(path: string, list: () => Promise<{ items: T[] }>): Promise<Recorded<T>> {
  const informer = makeInformer<T>(kc, path, list as never);
  const rec: Recorded<T> = { informer, log: [], errors: [], connects: 0 };
  for (const verb of ['add', 'update', 'delete'] as const) informer.on(verb, (obj) => rec.log.push(`${verb} ${obj.metadata?.name}`));
  informer.on('error', (err) => rec.errors.push(err));
  informer.on('connect', () => rec.connects++);
  await informer.start();
  return rec;
}

describe('client-node informers against cluster-sim', () => {
  it('pods: add, update and delete arrive, and a 410 during a watch leads to a re-list', async () => {
    const pods = await record('/api/v1/pods', () => core.listPodForAllNamespaces());
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'inf-a', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'pause' }] } } });
    await waitFor('add inf-a', () => pods.log.includes('add inf-a'));
    const current = await core.readNamespacedPod({ namespace: 'default', name: 'inf-a' });
    await core.replaceNamespacedPod({ namespace: 'default', name: 'inf-a', body: { ...current, metadata: { ...current.metadata, labels: { app: 'y' } } } });
    await waitFor('update inf-a', () => pods.log.includes('update inf-a'));
    await core.deleteNamespacedPod({ namespace: 'default', name: 'inf-a', gracePeriodSeconds: 0 });
    await waitFor('delete inf-a', () => pods.log.includes('delete inf-a'));

    // Compaction expires the open watch (ERROR 410, stream ends): the informer lists again.
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'inf-b' }, spec: { containers: [{ name: 'c', image: 'pause' }] } } });
    await waitFor('add inf-b', () => pods.log.includes('add inf-b'));
    const connectsBefore = pods.connects;
    sim.store.compact();
    await waitFor('re-list after 410', () => pods.connects > connectsBefore);
    sim.store.delete('Pod', 'default', 'inf-b');
    sim.store.create('Pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'inf-c', namespace: 'default' }, spec: { containers: [{ name: 'c' }] } });
    await waitFor('delete inf-b and add inf-c', () => pods.log.includes('delete inf-b') && pods.log.includes('add inf-c'));
    expect(pods.informer.list('default').map((p) => p.metadata?.name)).toEqual(['inf-c']);
    expect(pods.errors).toEqual([]);
    await pods.informer.stop();
  });

  it('services, endpoints and nodes: the Endpoints controller output reaches an endpoints informer', async () => {
    const services = await record('/api/v1/services', () => core.listServiceForAllNamespaces());
    const endpoints = await record('/api/v1/endpoints', () => core.listEndpointsForAllNamespaces());
    const nodes = await record('/api/v1/nodes', () => core.listNode());
    await core.createNode({ body: { metadata: { name: 'inf-node', labels: { 'topology.kubernetes.io/zone': 'z1' } }, status: { allocatable: { cpu: '4' }, conditions: [{ type: 'Ready', status: 'True' }] } } });
    await core.createNamespacedService({ namespace: 'default', body: { metadata: { name: 'inf-svc' }, spec: { selector: { app: 'inf' }, ports: [{ port: 80 }] } } });
    await core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'inf-p', labels: { app: 'inf' } }, spec: { containers: [{ name: 'c', image: 'pause' }] } } });
    await waitFor('service, node and endpoints adds', () => services.log.includes('add inf-svc') && nodes.log.includes('add inf-node') && endpoints.log.includes('add inf-svc'));
    // The simulated kubelet schedules the pod onto the new node; the Endpoints controller adds it.
    await waitFor('endpoints update with the pod', () => {
      const ep = endpoints.informer.get('inf-svc', 'default') as { subsets?: { addresses?: unknown[]; notReadyAddresses?: unknown[] }[] } | undefined;
      return (ep?.subsets ?? []).some((s) => (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0) > 0);
    });
    await core.deleteNamespacedService({ namespace: 'default', name: 'inf-svc' });
    await core.deleteNode({ name: 'inf-node' });
    await waitFor('deletes', () => services.log.includes('delete inf-svc') && endpoints.log.includes('delete inf-svc') && nodes.log.includes('delete inf-node'));
    expect([...services.errors, ...endpoints.errors, ...nodes.errors]).toEqual([]);
    await Promise.all([services.informer.stop(), endpoints.informer.stop(), nodes.informer.stop()]);
  });

  it('a watch from an expired resourceVersion fails with statusCode 410 (what makes informers re-list)', async () => {
    sim.store.compact();
    const err = await new Promise<unknown>((resolve) => {
      void new Watch(kc).watch('/api/v1/pods', { resourceVersion: '1' }, () => {}, resolve);
    });
    expect((err as { statusCode?: number }).statusCode).toBe(410);
  });
});
