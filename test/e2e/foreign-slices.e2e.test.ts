// Other controllers' slices reach the agents (issue 11, part 3; D.2.9, D.2.10). A multi-cluster importer's
// EndpointSlice for a selectorless Service is written into cluster-sim as that controller would;
// the watcher publishes it to KUBE (it is not ours), the hints service puts it into the zone views
// and the dry-run agents program it, as kube-proxy would. A Service labelled
// service.kubernetes.io/service-proxy-name (meant for another proxy) gets nothing, and loses
// what it had once the label appears. The slicer skips these messages without dead-lettering.

import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STATIC_SCENARIO_FILE, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { KubeChangeEvent } from '@slicemesh/contracts';
import type { EndpointSlice } from '@slicemesh/model';
import { kvKeys, openKv, parseViewKey, svcClusterFilter } from '@slicemesh/nats';
import { readDeadLetters, readStreamOf, startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';

const IMPORTER = 'mcs-importer.example.com';
const NS = 'shop';

let f: StackFixture | undefined;
let sim: ClusterSim | undefined;
afterEach(async () => {
  await f?.close();
  await sim?.close();
  f = sim = undefined;
});

function selectorlessService(name: string, labels: Record<string, string> = {}): KubeObj {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS, labels }, spec: { ports: [{ name: 'db', port: 5432, protocol: 'TCP' }] } } as unknown as KubeObj;
}

/** The slice an importer writes: its own managed-by value, the service-name label, two remote endpoints in two zones. */
function importedSlice(name: string, service: string, ips: readonly string[], managedBy = IMPORTER): KubeObj {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name, namespace: NS, labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': managedBy } },
    addressType: 'IPv4',
    endpoints: ips.map((ip, i) => ({ addresses: [ip], conditions: { ready: true }, zone: i % 2 === 0 ? 'zone-a' : 'zone-b' })),
    ports: [{ name: 'db', port: 5432, protocol: 'TCP' }],
  } as unknown as KubeObj;
}

/** Every agent's rules, by node. */
async function rulesOf(fx: StackFixture): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const a of fx.stack.agents) out.set(a.node, await readFile(a.rulesFile, 'utf8').catch(() => ''));
  return out;
}

/** The views bucket's entries of one service: `<zone>/<slice>` -> endpoint addresses. */
async function viewsOf(fx: StackFixture, service: string): Promise<Record<string, string[]>> {
  const kv = await openKv(fx.stack.nc, fx.stack.run.names.views);
  const out: Record<string, string[]> = {};
  for (const k of await kvKeys(kv, svcClusterFilter(fx.stack.layout.cluster))) {
    const a = parseViewKey(k);
    if (a.namespace !== NS || a.service !== service) continue;
    const e = await kv.get(k);
    if (e !== null && e.operation === 'PUT') out[`${a.zone}/${a.slice}`] = e.json<EndpointSlice>().endpoints.flatMap((ep) => ep.addresses);
  }
  return out;
}

describe("other controllers' EndpointSlices", () => {
  it("a foreign controller's slice for a selectorless Service reaches the views and every agent's rules; a Service meant for another proxy gets none", async () => {
    sim = await startClusterSim({ scenario: STATIC_SCENARIO_FILE });
    f = await startFixture({ sim, agents: 'zone', partitions: 2 });
    await f.stack.ready;
    const fx = f;

    sim.store.create('Service', selectorlessService('imported-db'));
    sim.store.create('EndpointSlice', importedSlice('imported-db-remote', 'imported-db', ['10.200.0.1', '10.200.0.2']));
    // A slice labelled as the EndpointSlice controller's is ours (what the publisher writes): the
    // watcher leaves it out of KUBE, so it never reaches the agents by this path.
    sim.store.create('EndpointSlice', importedSlice('imported-db-ours', 'imported-db', ['10.200.9.9'], 'endpointslice-controller.k8s.io'));
    sim.store.create('Service', selectorlessService('elsewhere', { 'service.kubernetes.io/service-proxy-name': 'other-proxy' }));
    sim.store.create('EndpointSlice', importedSlice('elsewhere-remote', 'elsewhere', ['10.201.0.1']));

    // The views: every zone and the unzoned view hold the importer's endpoints (no hints: unfiltered).
    await vi.waitFor(async () => {
      const views = await viewsOf(fx, 'imported-db');
      expect(Object.keys(views).sort()).toEqual(['_/imported-db-remote', 'zone-a/imported-db-remote', 'zone-b/imported-db-remote', 'zone-c/imported-db-remote']);
      for (const ips of Object.values(views)) expect(ips).toEqual(['10.200.0.1', '10.200.0.2']);
    }, { timeout: 30_000, interval: 200 });

    // The agents' rules: the Service and both remote endpoints, on every agent.
    await vi.waitFor(async () => {
      for (const [node, rules] of await rulesOf(fx)) {
        expect(rules, node).toContain(`${NS}/imported-db:db`);
        expect(rules, node).toContain('10.200.0.1:5432');
        expect(rules, node).toContain('10.200.0.2:5432');
      }
    }, { timeout: 30_000, interval: 200 });
    for (const [node, rules] of await rulesOf(fx)) {
      expect(rules, node).not.toContain(`${NS}/elsewhere`);
      expect(rules, node).not.toContain('10.201.0.1');
      expect(rules, node).not.toContain('10.200.9.9');
    }
    expect(await viewsOf(fx, 'elsewhere')).toEqual({});

    // KUBE holds the importer's slices (not ours) and nothing was dead-lettered: the slicer skips them.
    const kube = await readStreamOf<KubeChangeEvent>(fx, fx.stack.run.names.kube);
    const slices = kube.filter((m) => m.body.kind === 'EndpointSlice').map((m) => m.body.object.metadata.labels?.['endpointslice.kubernetes.io/managed-by']);
    expect(slices.length).toBeGreaterThanOrEqual(2);
    expect(new Set(slices)).toEqual(new Set([IMPORTER]));
    expect(await readDeadLetters(fx)).toEqual([]);

    // The importer changes its slice: one endpoint gone from every agent's rules.
    const live = sim.store.get('EndpointSlice', NS, 'imported-db-remote') as unknown as { metadata: Record<string, unknown>; endpoints: unknown[] };
    sim.store.update('EndpointSlice', { ...live, endpoints: live.endpoints.slice(0, 1) } as unknown as KubeObj);
    await vi.waitFor(async () => {
      for (const [node, rules] of await rulesOf(fx)) {
        expect(rules, node).toContain('10.200.0.1:5432');
        expect(rules, node).not.toContain('10.200.0.2:5432');
      }
    }, { timeout: 30_000, interval: 200 });

    // The Service is handed to another proxy: its spec and views are withdrawn, the agents drop it.
    const svc = sim.store.get('Service', NS, 'imported-db') as unknown as { metadata: Record<string, unknown> };
    sim.store.update('Service', { ...svc, metadata: { ...svc.metadata, labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' } } } as unknown as KubeObj);
    await vi.waitFor(async () => {
      expect(await viewsOf(fx, 'imported-db')).toEqual({});
      for (const [node, rules] of await rulesOf(fx)) expect(rules, node).not.toContain(`${NS}/imported-db`);
    }, { timeout: 30_000, interval: 200 });
  });
});
