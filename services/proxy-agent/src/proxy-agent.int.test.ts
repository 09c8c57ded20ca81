// The agent on the real kernel with real packets, without the rest of the pipeline: service
// specs and per-zone views are written straight into test KV buckets (views computed with
// proxy-state's zoneViews, as the hints service does), one agent per "node" namespace
// programs its node, and TCP clients in pod, node and outside namespaces count which pods
// answer. Two zones; the same scenario for iptables and nftables. IPVS runs only where
// `ipvsadm -L -n` works, and says so plainly when skipped.

import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { KV } from '@slicemesh/nats';
import { ensureKv, kvDelete, kvPutJson, svcKey, viewKey } from '@slicemesh/nats';
import type { ZoneViews } from '@slicemesh/proxy-state';
import { diffZoneViews, zoneViews } from '@slicemesh/proxy-state';
import { createLogger } from '@slicemesh/runtime';
import { makeNode } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import { parseProxyAgentConfig } from './config.ts';
import type { ProxyAgentHandle } from './proxy-agent.ts';
import { startProxyAgent } from './proxy-agent.ts';
import type { LabPod, Tally } from './test-lab.ts';
import { NetnsLab, POD_RANGE, labUnavailableReason } from './test-lab.ts';
import type { EpOpts } from './test-support.ts';
import { endpoint, service, slice } from './test-support.ts';

const CLUSTER = 'c1';
const WEB_IP = '10.96.0.10';
const TOPO_IP = '10.96.0.20';
const NODE_PORT = 30080;
/** How long a change may take to reach the data plane: MIN_SYNC_PERIOD is 100 ms here. */
const BOUND_MS = 5000;

const unavailable = labUnavailableReason();

/** The cluster as the test drives it: pods with readiness, two services, two zones. */
interface World {
  readonly ready: ReadonlyMap<string, boolean>;
  readonly deleted: ReadonlySet<string>;
}

function podEndpoint(pod: LabPod, world: World, hinted: boolean) {
  const ready = world.ready.get(pod.name) ?? true;
  const o: EpOpts = { node: pod.node.name, zone: pod.node.zone, ready, serving: ready, ...(hinted ? { hints: [pod.node.zone] } : {}) };
  return endpoint(pod.ip, o);
}

function objects(lab: NetnsLab, world: World): { services: Service[]; slices: EndpointSlice[]; nodes: Node[] } {
  const pods = lab.pods.filter((p) => !world.deleted.has(p.name));
  const stamp = (s: EndpointSlice): EndpointSlice => ({ ...s, metadata: { ...s.metadata, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': new Date().toISOString() } } });
  return {
    services: [service('web', WEB_IP, { nodePort: NODE_PORT }), service('topo', TOPO_IP)],
    slices: [stamp(slice('web-1', 'web', pods.map((p) => podEndpoint(p, world, false)))), stamp(slice('topo-1', 'topo', pods.map((p) => podEndpoint(p, world, true))))],
    nodes: lab.nodes.map((n) => makeNode(n.name, { zone: n.zone })),
  };
}

/** Writes specs and the view entries that changed, as the hints service would. */
async function publish(kv: { svc: KV; views: KV }, prev: ZoneViews | null, lab: NetnsLab, world: World): Promise<ZoneViews> {
  const o = objects(lab, world);
  for (const s of o.services) await kvPutJson(kv.svc, svcKey({ cluster: CLUSTER, namespace: 'default', name: s.metadata.name }), s);
  const next = zoneViews(o);
  const empty: ZoneViews = { zones: [], entries: new Map(), byZone: new Map() };
  for (const op of diffZoneViews(prev ?? empty, next)) {
    const addr = op.op === 'put' ? op.entry : op;
    const key = viewKey({ cluster: CLUSTER, zone: addr.zone, namespace: addr.namespace, service: addr.service, slice: addr.sliceName });
    if (op.op === 'put') await kvPutJson(kv.views, key, op.entry.slice);
    else await kvDelete(kv.views, key);
  }
  return next;
}

const names = (t: Tally) => Object.keys(t).sort();

/** Polls until `done(tally)` holds; returns the time it took. Fails after BOUND_MS. */
async function within(check: () => Promise<Tally>, done: (t: Tally) => boolean): Promise<number> {
  const start = Date.now();
  let last: Tally = {};
  while (Date.now() - start < BOUND_MS) {
    last = await check();
    if (done(last)) return Date.now() - start;
  }
  throw new Error(`not within ${BOUND_MS} ms; last tally ${JSON.stringify(last)}`);
}

for (const backend of ['iptables', 'nftables'] as const) {
  describe(`proxy-agent on the real kernel, ${backend} backend${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
    let js: JetStreamFixture | undefined;
    let lab: NetnsLab | undefined;
    let kv: { svc: KV; views: KV } | undefined;
    let views: ZoneViews | null = null;
    let world: World = { ready: new Map(), deleted: new Set() };
    const agents: ProxyAgentHandle[] = [];
    const need = () => {
      if (!lab || !kv) throw new Error('setup failed');
      return { lab, kv };
    };

    beforeAll(async () => {
      if (unavailable) return;
      js = await withJetStream();
      kv = { svc: await ensureKv(js.nc, js.names.svc, { storage: 'memory' }), views: await ensureKv(js.nc, js.names.views, { storage: 'memory' }) };
      lab = new NetnsLab(`sm${backend[0]}${randomUUID().slice(0, 6)}`, [
        { name: 'node-a1', zone: 'zone-a', pods: 2 },
        { name: 'node-b1', zone: 'zone-b', pods: 2 },
      ]);
      await lab.startServers();
      views = await publish(kv, null, lab, world);
      for (const node of lab.nodes) {
        const config = parseProxyAgentConfig([], {
          NODE_NAME: node.name,
          NODE_ZONE: node.zone,
          CLUSTER,
          BACKEND: backend,
          NETNS: node.ns,
          POD_CIDR: POD_RANGE,
          MIN_SYNC_PERIOD: '100ms',
          SYNC_PERIOD: '10s',
          SVC_BUCKET: js.names.svc,
          VIEWS_BUCKET: js.names.views,
        });
        agents.push(startProxyAgent(config, { nc: js.nc, log: createLogger({ service: 'proxy-agent', level: 'warn' }) }));
      }
      await Promise.all(agents.map((a) => a.ready));
    });

    afterAll(async () => {
      for (const a of agents) await a.close();
      lab?.destroy();
      await js?.cleanup();
    });

    const run = (name: string, fn: () => Promise<void>) =>
      it(name, async (ctx) => {
        if (unavailable) ctx.skip(unavailable);
        await fn();
      });

    run('every agent programmed its node in full from the initial state', async () => {
      for (const a of agents) expect(a.lastSync).toMatchObject({ ok: true });
      for (const a of agents) expect(a.filters.views).toMatch(/^c1\.zone-[ab]\.>$/);
    });

    run('D.4 a ClusterIP reached from a pod balances over every pod of the service, across nodes', async () => {
      const { lab } = need();
      expect(names(await lab.connect(lab.pod('node-a1-pod1').ns, WEB_IP, 80, 40))).toEqual(['node-a1-pod1', 'node-a1-pod2', 'node-b1-pod1', 'node-b1-pod2']);
    });

    run('D.4 a ClusterIP reached from a process on the node itself', async () => {
      const { lab } = need();
      expect(names(await lab.connect(lab.node('node-b1').ns, WEB_IP, 80, 40))).toEqual(['node-a1-pod1', 'node-a1-pod2', 'node-b1-pod1', 'node-b1-pod2']);
    });

    run('D.4.9 a NodePort reached from outside the cluster', async () => {
      const { lab } = need();
      expect(names(await lab.connect(lab.client, lab.node('node-a1').ip, NODE_PORT, 40))).toEqual(['node-a1-pod1', 'node-a1-pod2', 'node-b1-pod1', 'node-b1-pod2']);
    });

    run('D.3.1 with topology hints a zone-a node reaches only zone-a pods, a zone-b node only zone-b pods', async () => {
      const { lab } = need();
      expect(names(await lab.connect(lab.pod('node-a1-pod1').ns, TOPO_IP, 80, 30))).toEqual(['node-a1-pod1', 'node-a1-pod2']);
      expect(names(await lab.connect(lab.node('node-a1').ns, TOPO_IP, 80, 30))).toEqual(['node-a1-pod1', 'node-a1-pod2']);
      expect(names(await lab.connect(lab.pod('node-b1-pod2').ns, TOPO_IP, 80, 30))).toEqual(['node-b1-pod1', 'node-b1-pod2']);
    });

    run(`a pod that becomes unready stops receiving new connections within ${BOUND_MS} ms`, async () => {
      const { lab, kv } = need();
      world = { ...world, ready: new Map([['node-a1-pod2', false]]) };
      views = await publish(kv, views, lab, world);
      const from = lab.pod('node-a1-pod1').ns;
      const tookMs = await within(() => lab.connect(from, WEB_IP, 80, 20), (t) => !('node-a1-pod2' in t) && Object.keys(t).length === 3);
      expect(tookMs).toBeLessThan(BOUND_MS);
      expect(names(await lab.connect(from, TOPO_IP, 80, 10))).toEqual(['node-a1-pod1']);
      expect(names(await lab.connect(lab.node('node-b1').ns, WEB_IP, 80, 30))).toEqual(['node-a1-pod1', 'node-b1-pod1', 'node-b1-pod2']);
    });

    run(`a deleted pod stops receiving new connections within ${BOUND_MS} ms, on every node`, async () => {
      const { lab, kv } = need();
      world = { ...world, deleted: new Set(['node-b1-pod1']) };
      views = await publish(kv, views, lab, world);
      for (const from of [lab.node('node-a1').ns, lab.node('node-b1').ns]) {
        await within(() => lab.connect(from, WEB_IP, 80, 20), (t) => !('node-b1-pod1' in t));
      }
      expect(names(await lab.connect(lab.pod('node-b1-pod2').ns, TOPO_IP, 80, 10))).toEqual(['node-b1-pod2']);
      expect(names(await lab.connect(lab.client, lab.node('node-b1').ip, NODE_PORT, 30))).toEqual(['node-a1-pod1', 'node-b1-pod2']);
    });

    run('metrics: sync duration by mode, network programming latency, rule counts', async () => {
      const text = (await agents[0]?.metrics.registry.metrics()) ?? '';
      /** The value of the sample of `name` whose labels include `label` (label order is the registry's). */
      const sample = (name: string, label = '') => Number(text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label))?.split(' ').pop() ?? NaN);
      expect(sample('slicemesh_sync_proxy_rules_duration_seconds_count', 'mode="full"')).toBeGreaterThanOrEqual(1);
      expect(sample('slicemesh_sync_proxy_rules_duration_seconds_count', 'mode="partial"')).toBeGreaterThanOrEqual(2);
      expect(sample('slicemesh_network_programming_duration_seconds_count')).toBeGreaterThanOrEqual(2);
      // Every change was applied within the bound, so the latencies add up to less than it per change.
      expect(sample('slicemesh_network_programming_duration_seconds_sum')).toBeLessThan((BOUND_MS / 1000) * sample('slicemesh_network_programming_duration_seconds_count'));
      const rules = backend === 'iptables' ? sample('slicemesh_sync_proxy_rules_iptables_total', 'table="nat"') : sample('slicemesh_sync_proxy_rules_nftables_objects', 'type="chains"');
      expect(rules).toBeGreaterThan(0);
    });
  });
}

/** Why IPVS cannot be tested here, or null. */
function ipvsUnavailable(): string | null {
  if (unavailable) return unavailable;
  const probe = `smipvs-${process.pid}`;
  if (spawnSync('ip', ['netns', 'add', probe]).status !== 0) return 'cannot create a network namespace';
  const r = spawnSync('ip', ['netns', 'exec', probe, 'ipvsadm', '-L', '-n'], { encoding: 'utf8' });
  const dummy = spawnSync('ip', ['-n', probe, 'link', 'add', 'sm-d0', 'type', 'dummy'], { encoding: 'utf8' });
  spawnSync('ip', ['netns', 'delete', probe]);
  if (r.status !== 0) return `\`ipvsadm -L -n\` fails here (${(r.stderr || r.error?.message || `exit ${r.status}`).split('\n')[0]?.trim()})`;
  if (dummy.status !== 0) return `this kernel has no dummy link type (${dummy.stderr.trim()})`;
  return null;
}

const ipvsSkip = ipvsUnavailable();

describe(`proxy-agent on the real kernel, IPVS backend${ipvsSkip ? ` — SKIPPED: ${ipvsSkip}; the IPVS backend is covered by unit tests with the fake ipvsadm` : ''}`, () => {
  let js: JetStreamFixture | undefined;
  let lab: NetnsLab | undefined;
  let agent: ProxyAgentHandle | undefined;

  beforeAll(async () => {
    if (ipvsSkip) return;
    js = await withJetStream();
    const kv = { svc: await ensureKv(js.nc, js.names.svc, { storage: 'memory' }), views: await ensureKv(js.nc, js.names.views, { storage: 'memory' }) };
    lab = new NetnsLab(`smv${randomUUID().slice(0, 6)}`, [{ name: 'node-a1', zone: 'zone-a', pods: 2 }]);
    await lab.startServers();
    await publish(kv, null, lab, { ready: new Map(), deleted: new Set() });
    const node = lab.node('node-a1');
    const config = parseProxyAgentConfig([], {
      NODE_NAME: node.name, NODE_ZONE: node.zone, CLUSTER, BACKEND: 'ipvs', NETNS: node.ns, IPVS_SCHEDULER: 'rr', IPVS_INTERFACE: 'sm-ipvs0',
      MIN_SYNC_PERIOD: '100ms', SVC_BUCKET: js.names.svc, VIEWS_BUCKET: js.names.views,
    });
    agent = startProxyAgent(config, { nc: js.nc, log: createLogger({ service: 'proxy-agent', level: 'warn' }) });
    await agent.ready;
  });

  afterAll(async () => {
    await agent?.close();
    lab?.destroy();
    await js?.cleanup();
  });

  it('D.5 a ClusterIP bound to the dummy interface reaches the pods through IPVS', async (ctx) => {
    if (ipvsSkip) ctx.skip(`IPVS real-kernel test skipped: ${ipvsSkip}`);
    if (!lab) throw new Error('setup failed');
    expect(names(await lab.connect(lab.node('node-a1').ns, WEB_IP, 80, 20))).toEqual(['node-a1-pod1', 'node-a1-pod2']);
  });
});
