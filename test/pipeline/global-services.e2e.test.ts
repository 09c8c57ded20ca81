// Issue 14's proof of global services: two Kubernetes clusters (two cluster-sims, each with its
// whole pipeline and a multi-cluster service) on two NATS leaf nodes of a hub, their nodes real
// network namespaces on one flat network. Both clusters export Service `cart` (cluster A by the
// annotation, as a cluster without the MCS CRDs; cluster B by an MCS ServiceExport); cluster A has a
// ready pod, cluster B's cart pod starts unready. A client pod of cluster B connects to the
// ClusterSet IP its agent programmed:
//   1. A's pod turns ready → B's client reaches it (cross-cluster convergence, printed);
//   2. B's own cart pod turns ready → B's client reaches only it (own cluster first), unready
//      again → A's pod again;
//   3. the link between leaf A and the hub is cut → after the TTL B withdraws A's endpoints
//      (printed), and the link restored → B reaches A's pod again (printed).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObj } from '@slicemesh/cluster-sim';
import { EXPORT_ANNOTATION } from '@slicemesh/multicluster';
import type { ImportSummary } from '@slicemesh/multicluster';
import type { LocalNatsCluster } from '@slicemesh/nats';
import { findNatsServerBinary, freeLocalPort, startLocalNatsCluster } from '@slicemesh/nats';
import type { TcpProxy } from '../../services/stack/src/chaos/tcp-proxy.ts';
import { startTcpProxy } from '../../services/stack/src/chaos/tcp-proxy.ts';
import { APP, nodeObject, podObject, withReadiness } from './kube-objects.ts';
import type { LabPod, NodeSpec, Tally } from './netns-cluster.ts';
import { NetnsCluster, netnsUnavailableReason } from './netns-cluster.ts';
import { Pipeline } from './pipeline-stack.ts';

const TTL_MS = 4000;
const HEARTBEAT_MS = 1000;
/** A change must cross the clusters within this long. */
const BOUND_MS = 15_000;
const NODES: readonly NodeSpec[] = [
  { name: 'a-node1', zone: 'z1', pods: 1 },
  { name: 'b-node1', zone: 'z1', pods: 2 },
];
const LOG_LEVEL = (process.env['E2E_LOG_LEVEL'] ?? 'error') as 'debug' | 'info' | 'warn' | 'error' | 'silent';
const unavailable = netnsUnavailableReason() ?? (findNatsServerBinary() === undefined ? 'nats-server not installed' : null);

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const fmt = (ms: number): string => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** `cart` over the echo pods' http port, exported by the annotation (clusters without the MCS CRDs) unless `annotated` is false. */
function cartService(createdAt: string, annotated = true): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'cart', namespace: 'default', creationTimestamp: createdAt, ...(annotated ? { annotations: { [EXPORT_ANNOTATION]: 'true' } } : {}) },
    spec: { type: 'ClusterIP', selector: { app: APP }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
  };
}

/** The MCS ServiceExport of `cart` (the export's precedence time is its creationTimestamp). */
function cartExport(): KubeObj {
  return { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'cart', namespace: 'default' } };
}

describe.skipIf(unavailable !== null)(`global services across two clusters behind a NATS hub${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'slicemesh-global-'));
  const servers: LocalNatsCluster[] = [];
  let proxyA: TcpProxy | undefined;
  let lab: NetnsCluster | undefined;
  const pipelines: Pipeline[] = [];
  let a: Pipeline;
  let b: Pipeline;
  let podA: LabPod;
  let cartB: LabPod;
  let clientB: LabPod;
  const exportsBucket = `exports_${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    // The hub (JetStream domain hub) and two leaves; leaf A reaches it through a proxy the test can
    // cut. The hub advertises the proxy as its leafnode address: a leaf learns the advertised
    // address and redials it, so leaf A's way back after a cut is through the proxy too.
    const hubLeafPort = await freeLocalPort();
    proxyA = await startTcpProxy(hubLeafPort);
    const hub = await startLocalNatsCluster({ size: 1, dir: join(dir, 'hub'), namePrefix: 'hub', config: `jetstream { domain: hub }\nleafnodes { listen: "127.0.0.1:${hubLeafPort}", advertise: "127.0.0.1:${proxyA.port}" }` });
    servers.push(hub);
    const leaf = async (name: string, domain: string, port: number): Promise<LocalNatsCluster> => {
      const s = await startLocalNatsCluster({ size: 1, dir: join(dir, name), namePrefix: name, config: `jetstream { domain: ${domain} }\nleafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:${port}" } ] }` });
      servers.push(s);
      return s;
    };
    const leafA = await leaf('leaf-a', 'a', proxyA.port);
    const leafB = await leaf('leaf-b', 'b', hubLeafPort);

    lab = new NetnsCluster(`smg${randomBytes(3).toString('hex')}`, NODES);
    await lab.startServers();
    const [nodeA, nodeB] = lab.nodes as [NetnsCluster['nodes'][number], NetnsCluster['nodes'][number]];
    [podA, cartB, clientB] = lab.pods as [LabPod, LabPod, LabPod];
    const mcs = { exportsDomain: 'hub', exportsBucket, ttl: TTL_MS, heartbeat: HEARTBEAT_MS };
    a = new Pipeline({
      cluster: 'cluster-a',
      backend: 'iptables',
      lab: { nodes: [nodeA] },
      partitions: 1,
      logLevel: LOG_LEVEL,
      natsUrl: leafA.url,
      mcs,
      seed: (sim) => {
        const at = now();
        sim.store.create('Node', nodeObject(nodeA, '4', at));
        sim.store.create('Pod', podObject(podA, false, at));
        sim.store.create('Service', cartService('2026-01-01T00:00:00Z'));
      },
    });
    pipelines.push(a);
    b = new Pipeline({
      cluster: 'cluster-b',
      backend: 'iptables',
      lab: { nodes: [nodeB] },
      partitions: 1,
      logLevel: LOG_LEVEL,
      natsUrl: leafB.url,
      mcs,
      seed: (sim) => {
        const at = now();
        sim.store.create('Node', nodeObject(nodeB, '4', at));
        sim.store.create('Pod', podObject(cartB, false, at));
        // The client is no cart pod.
        const client = podObject(clientB, true, at);
        sim.store.create('Pod', { ...client, metadata: { ...(client['metadata'] as { name: string }), labels: { app: 'client' } } });
        // Not annotated: exported by an MCS ServiceExport, made once both pipelines run.
        sim.store.create('Service', cartService('2026-03-01T00:00:00Z', false));
      },
    });
    pipelines.push(b);
    await Promise.all([a.start(), b.start()]);
    // The simulator stamps creationTimestamp itself (to the second): made more than a second after
    // A's Service, B's ServiceExport is the younger export whatever B's Service's age.
    await new Promise((r) => setTimeout(r, 1100));
    b.sim.store.create('ServiceExport', cartExport());
  }, 120_000);

  afterAll(async () => {
    for (const p of pipelines.reverse()) await p.close().catch(() => {});
    await proxyA?.close();
    for (const s of servers.reverse()) await s.stop().catch(() => {});
    lab?.destroy();
    // E2E_KEEP_DIR=1 keeps the servers' stores and logs for a look afterwards.
    if (process.env['E2E_KEEP_DIR'] === undefined) rmSync(dir, { recursive: true, force: true });
    else console.log(`[global] kept ${dir}`);
  });

  const cartImport = (p: Pipeline): ImportSummary | undefined => p.mcs?.lastImports()?.imports.find((i) => i.namespace === 'default' && i.name === 'cart');

  async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, boundMs = BOUND_MS): Promise<T> {
    const start = performance.now();
    let last: unknown;
    while (performance.now() - start < boundMs) {
      const v = await check();
      if (v !== undefined) return v;
      last = v;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`not within ${boundMs} ms: ${what} (last: ${JSON.stringify(last)})`);
  }

  /** B's client's tally through the ClusterSet IP once `done` holds for two batches in a row; the ms from `since` to the first. */
  async function clientSees(done: (t: Tally) => boolean, since: number, boundMs = BOUND_MS): Promise<number> {
    const ip = (await until('an import of cart in cluster B', () => cartImport(b)?.clusterSetIp ?? undefined)) as string;
    let last: Tally = {};
    while (performance.now() - since < boundMs) {
      const at = performance.now();
      last = await (lab as NetnsCluster).connect(clientB.ns, ip, 80, 10, 500);
      if (done(last) && done((last = await (lab as NetnsCluster).connect(clientB.ns, ip, 80, 20, 500)))) return at - since;
    }
    throw new Error(`${clientB.name} → ${ip}:80: not within ${boundMs} ms; last tally ${JSON.stringify(last)}`);
  }

  function setReady(p: Pipeline, pod: LabPod, ready: boolean): number {
    const current = p.sim.store.get('Pod', 'default', pod.name);
    if (current === undefined) throw new Error(`no pod ${pod.name}`);
    const at = performance.now();
    p.sim.store.update('Pod', withReadiness(current, ready, now()), { scope: 'status' });
    return at;
  }

  const only = (name: string) => (t: Tally): boolean => Object.keys(t).length === 1 && (t[name] ?? 0) > 0;

  it('imports cart into both clusters as one derived Service at the same ClusterSet IP, from both source clusters', async () => {
    const [ia, ib] = await until('cart imported by both clusters from both', () => {
      const x = cartImport(a);
      const y = cartImport(b);
      return x !== undefined && y !== undefined && x.clusters.length === 2 && y.clusters.length === 2 ? [x, y] : undefined;
    });
    expect(ia.clusters).toEqual(['cluster-a', 'cluster-b']); // the older export first
    expect(ib.clusterSetIp).toMatch(/^243\.0\.\d+\.\d+$/);
    expect(ia.clusterSetIp).toBe(ib.clusterSetIp);
    expect(ia.derived).toBe(ib.derived);
    expect(ib.conflicts).toEqual([]);
  });

  it("a pod turning ready in cluster A is reached from cluster B through the ClusterSet IP", async () => {
    const since = setReady(a, podA, true);
    const ms = await clientSees(only(podA.name), since);
    console.log(`[global] cross-cluster convergence: pod Ready in cluster A → B's client reaches it through the ClusterSet IP in ${fmt(ms)}`);
    expect(cartImport(b)?.source).toBe('remote');
  });

  it("cluster B's own ready endpoint wins over cluster A's, and A's come back when it is not ready", async () => {
    const localAt = setReady(b, cartB, true);
    const toLocal = await clientSees(only(cartB.name), localAt);
    expect(cartImport(b)?.source).toBe('local');
    const remoteAt = setReady(b, cartB, false);
    const toRemote = await clientSees(only(podA.name), remoteAt);
    console.log(`[global] locality: B's own pod Ready → all of B's traffic stays in B in ${fmt(toLocal)}; not ready → back to A in ${fmt(toRemote)}`);
  });

  it('cutting leaf A from the hub withdraws its endpoints from cluster B after the TTL, and its return restores them', async () => {
    const cutAt = performance.now();
    void (proxyA as TcpProxy).cut(600_000);
    const withdrawn = await clientSees((t) => !(podA.name in t), cutAt, TTL_MS + BOUND_MS);
    // Not before the TTL (less one heartbeat: the last one reached the hub up to a period earlier).
    expect(withdrawn).toBeGreaterThanOrEqual(TTL_MS - HEARTBEAT_MS - 500);
    // …and not long after it: the TTL, a heartbeat period, the agent's sync and the probes.
    expect(withdrawn).toBeLessThan(TTL_MS + 2 * HEARTBEAT_MS + 3000);
    expect(b.views.endpoints('z1', cartImport(b)?.derived ?? '').has(podA.ip)).toBe(false);
    expect(b.mcs?.lastImports()?.live).toEqual(['cluster-b']);

    const backAt = performance.now();
    (proxyA as TcpProxy).restore();
    const restored = await clientSees(only(podA.name), backAt, BOUND_MS + 10_000);
    expect(b.mcs?.lastImports()?.live).toEqual(['cluster-a', 'cluster-b']);
    console.log(`[global] leaf A cut from the hub: B withdrew A's endpoints after ${fmt(withdrawn)} (TTL ${fmt(TTL_MS)}); link restored: B reaches A again after ${fmt(restored)}`);
  });
});
