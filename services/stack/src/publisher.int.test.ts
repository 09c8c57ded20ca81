// The stack with the publisher in write mode, on the static scenario: what the API serves for
// `kubectl get endpointslices` is what the slicer stored, with the hints the hints service gave
// it, before and after a change made through the API as kubectl makes it. (That the hints are
// the offline plan's is test/e2e/kubectl-writeback.e2e.test.ts's to show.)

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATIC_SCENARIO_FILE, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { loadClusterSlices } from '@slicemesh/db';
import { sameSlice, writableSlice } from '@slicemesh/publisher';
import { freshRunNames, newRunId } from './run-names.ts';
import { deleteRunState } from './run-state.ts';
import type { Stack } from './start-stack.ts';
import { startStack } from './start-stack.ts';

const NATS = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const PG = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CLUSTER = 'pubtest';
const run = freshRunNames(newRunId(Date.now()));
let dir: string;
let sim: ClusterSim;
let stack: Stack;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slicemesh-stack-publisher-'));
  sim = await startClusterSim({ scenario: STATIC_SCENARIO_FILE });
  stack = await startStack({ natsUrl: NATS, databaseUrl: PG, run, cluster: CLUSTER, sim, agents: 'none', publisherMode: 'write', runDir: join(dir, 'run'), logLevel: 'silent' });
  await stack.ready;
});

afterAll(async () => {
  await stack?.close();
  await sim?.close();
  await deleteRunState(NATS, PG, run);
  await rm(dir, { recursive: true, force: true });
});

/** A live slice without the hints: the slicer stores slices before the hints service hints them. */
function unhinted(o: KubeObj): Record<string, unknown> {
  const endpoints = ((o['endpoints'] ?? []) as Record<string, unknown>[]).map(({ hints: _hints, ...e }) => e);
  return { ...(o as unknown as Record<string, unknown>), endpoints };
}

/** Differences between the slicer's slices in Postgres and the slices the API serves, hints aside; [] when they agree. */
async function differences(): Promise<string[]> {
  const stored = await loadClusterSlices(stack.db, CLUSTER);
  const live = new Map(sim.store.list('EndpointSlice').map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const out: string[] = [];
  for (const [, s] of stored) {
    const key = `${s.metadata.namespace}/${s.metadata.name}`;
    const l = live.get(key);
    if (l === undefined) out.push(`${key}: missing from the API`);
    else if (!sameSlice(writableSlice(s), unhinted(l))) out.push(`${key}: differs`);
    live.delete(key);
  }
  for (const key of live.keys()) out.push(`${key}: in the API only`);
  return out;
}

async function converged(what: string, extra: () => boolean = () => true): Promise<void> {
  let last: string[] = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    last = await differences();
    if (last.length === 0 && extra()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: API and Postgres still differ: ${last.join('; ')}`);
}

const endpointsOf = (service: string): Record<string, unknown>[] =>
  sim.store.list('EndpointSlice').filter((s) => s.metadata.labels?.['kubernetes.io/service-name'] === service).flatMap((s) => (s['endpoints'] ?? []) as Record<string, unknown>[]);

describe('stack with the publisher (write mode)', () => {
  it('serves every slice the slicer stored, labelled as ours, and nothing else', async () => {
    // The slices come before their hints (the hints service finishes them after the slicer): wait for both.
    const hinted = (service: string): boolean => endpointsOf(service).every((e) => ((e['hints'] as { forZones?: unknown[] } | undefined)?.forZones?.length ?? 0) > 0);
    await converged('initial state', () => endpointsOf('web').length === 6 && hinted('web') && hinted('api'));
    const managers = new Set(sim.store.list('EndpointSlice').map((s) => s.metadata.labels?.['endpointslice.kubernetes.io/managed-by']));
    expect([...managers].sort()).toEqual(['endpointslice-controller.k8s.io', 'endpointslicemirroring-controller.k8s.io']);
    // Written with their hints: every ready endpoint of web (Auto) and api (PreferClose) has a zone.
    for (const service of ['web', 'api']) {
      const zones = endpointsOf(service).map((e) => (e['hints'] as { forZones?: { name: string }[] } | undefined)?.forZones?.map((z) => z.name));
      expect(zones.every((z) => z !== undefined && z.length > 0), `${service}: ${JSON.stringify(zones)}`).toBe(true);
    }
  });

  it('follows a pod deleted through the API (as `kubectl delete pod` does)', async () => {
    const pod = sim.store.list('Pod').find((p) => p.metadata.namespace === 'shop' && p.metadata.labels?.['app'] === 'web' && p.metadata.deletionTimestamp === undefined) as KubeObj;
    const ip = (pod['status'] as { podIP: string }).podIP;
    const res = await fetch(`${sim.url}/api/v1/namespaces/shop/pods/${pod.metadata.name}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    await converged('after the delete', () => !endpointsOf('web').some((e) => (e['addresses'] as string[]).includes(ip) && (e['conditions'] as { ready?: boolean }).ready !== false));
  });
});
