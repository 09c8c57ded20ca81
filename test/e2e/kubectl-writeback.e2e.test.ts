// The control plane as a platform engineer sees it through kubectl: the whole stack runs on the
// static scenario with the publisher in write mode; kubectl deletes a pod and moves a node to
// another zone, and after each change `kubectl get endpointslices -o json` equals, Service by
// Service, what `slicemesh plan` computes offline from `kubectl get svc,pods,nodes,endpoints -o
// json` — endpoints with their conditions and topology hints, ports, labels, owners. Slice
// names and packing are left out of the comparison: the issue asks for semantic equality, and
// the names are live-equals-offline.e2e.test.ts's to check.

import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { STATIC_SCENARIO_FILE } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { planCluster } from '@slicemesh/cli';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER, parseKubeInput } from '@slicemesh/model';
import { comparable } from './support/oracle.ts';
import { startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';

const run = promisify(execFile);

let f: StackFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function kubectl(sim: ClusterSim, ...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--server', sim.url, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return stdout;
}

/** Per Service (`<ns>/<name>`), its slices' content with names and packing left out. */
function byService(slices: readonly EndpointSlice[]): Map<string, string> {
  const groups = new Map<string, string[]>();
  for (const s of slices) {
    const key = `${s.metadata.namespace ?? 'default'}/${s.metadata.labels?.[LABEL_SERVICE_NAME] ?? ''}`;
    const parsed = JSON.parse(comparable(s)) as { endpoints: string[]; ports: string[] } & Record<string, unknown>;
    const list = groups.get(key) ?? [];
    // One entry per endpoint, carrying its slice's address type, ports and labels.
    const { endpoints, ...rest } = parsed;
    for (const e of endpoints) list.push(`${JSON.stringify(rest)} ${e}`);
    if (endpoints.length === 0) list.push(`${JSON.stringify(rest)} (no endpoints)`);
    groups.set(key, list);
  }
  return new Map([...groups].map(([k, v]) => [k, v.sort().join('\n')]));
}

/** What kubectl shows and what the offline plan of kubectl's own dump says; equal when the control plane is done. */
async function compare(sim: ClusterSim): Promise<{ readonly live: Map<string, string>; readonly offline: Map<string, string>; readonly hinted: number }> {
  const [slicesJson, objectsJson] = await Promise.all([kubectl(sim, 'get', 'endpointslices', '-A', '-o', 'json'), kubectl(sim, 'get', 'svc,pods,nodes,endpoints', '-A', '-o', 'json')]);
  const live = parseKubeInput(slicesJson, 'kubectl get endpointslices').filter((o): o is EndpointSlice => o.kind === 'EndpointSlice');
  const objects = parseKubeInput(objectsJson, 'kubectl get svc,pods,nodes,endpoints');
  const plan = planCluster(objects, { maxEndpointsPerSlice: 100, managedBy: MANAGED_BY_CONTROLLER, output: 'slices' }, () => {});
  const planned = [...plan.unchanged, ...plan.update, ...plan.create];
  const hinted = live.flatMap((s) => s.endpoints).filter((e) => (e.hints?.forZones?.length ?? 0) > 0).length;
  return { live: byService(live), offline: byService(planned), hinted };
}

function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort();
}

type Comparison = Awaited<ReturnType<typeof compare>>;

/**
 * Polls until kubectl's slices equal the offline plan and `extra` holds: the ms taken and that
 * comparison (the cluster may move on right after, e.g. a replacement pod turning ready).
 */
async function converged(sim: ClusterSim, what: string, extra: (c: Comparison) => boolean = () => true, timeoutMs = 60_000): Promise<{ ms: number; c: Comparison }> {
  const t0 = performance.now();
  let last: string[] = [];
  for (;;) {
    const c = await compare(sim);
    last = differing(c.live, c.offline);
    if (last.length === 0 && extra(c)) return { ms: performance.now() - t0, c };
    if (performance.now() - t0 > timeoutMs) throw new Error(`${what}: kubectl and the offline plan still differ for ${last.join(', ') || '(none: the extra condition did not hold)'}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kubectl sees the control plane’s work', () => {
  it('after kubectl deletes a pod and relabels a node, `kubectl get endpointslices` equals the offline plan, hints included', async () => {
    f = await startFixture({ scenarioYaml: await readFile(STATIC_SCENARIO_FILE, 'utf8'), publisherMode: 'write', agents: 'none', partitions: 2 });
    await f.stack.ready;
    const sim = f.stack.sim as ClusterSim;

    const webReady = (c: Comparison) => (c.live.get('shop/web') ?? '').split('\n').filter((l) => l.includes('"ready":true')).length === 6;
    const { ms: first, c: initial } = await converged(sim, 'initial state', (c) => webReady(c) && c.hinted > 0);
    expect([...initial.live.keys()].sort()).toEqual(['shop/api', 'shop/cache', 'shop/legacy-db', 'shop/web']);
    // web (Auto) and api (PreferClose) carry zone hints in the API, as upstream's controller writes them.
    expect(initial.live.get('shop/web')).toContain('"forZones"');
    expect(initial.live.get('shop/api')).toContain('"forZones"');

    // kubectl delete pod: its endpoint leaves (or turns terminating) and a replacement comes.
    const pods = JSON.parse(await kubectl(sim, 'get', 'pods', '-n', 'shop', '-l', 'app=web', '-o', 'json')) as { items: { metadata: { name: string }; status: { podIP?: string } }[] };
    const victim = pods.items.find((p) => (p.status.podIP ?? '') !== '');
    expect(victim).toBeDefined();
    const ip = victim?.status.podIP ?? '';
    await kubectl(sim, 'delete', 'pod', '-n', 'shop', victim?.metadata.name ?? '', '--wait=false');
    const { ms: afterDelete } = await converged(sim, 'after kubectl delete pod', (c) => !(c.live.get('shop/web') ?? '').split('\n').some((l) => l.includes(`"${ip}"`) && l.includes('"ready":true')));

    // kubectl label node: worker-b-1 moves to zone-c; its endpoints' zone and the hints follow.
    await kubectl(sim, 'label', 'node', 'worker-b-1', 'topology.kubernetes.io/zone=zone-c', '--overwrite');
    const { ms: afterRelabel, c: final } = await converged(sim, 'after kubectl label node', (c) => {
      const web = (c.live.get('shop/web') ?? '').split('\n').filter((l) => l.includes('"nodeName":"worker-b-1"'));
      return web.length > 0 && web.every((l) => l.includes('"zone":"zone-c"'));
    });
    // PreferClose hints each endpoint for its own zone: those on worker-b-1 now say zone-c.
    const moved = (final.live.get('shop/api') ?? '').split('\n').filter((l) => l.includes('"nodeName":"worker-b-1"'));
    for (const l of moved) expect(l).toContain('"forZones":[{"name":"zone-c"}]');

    process.stdout.write(
      `kubectl → visible in kubectl (ms): initial ${first.toFixed(0)}, delete pod ${afterDelete.toFixed(0)}, label node ${afterRelabel.toFixed(0)}\n`,
    );
  });
});
