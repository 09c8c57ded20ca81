// An agent follows its Node's zone through the whole stack: cluster-sim plays the static
// scenario, `kubectl label node worker-b-1 topology.kubernetes.io/zone=zone-c --overwrite`
// relabels a node, the watcher publishes the Node to KUBE, and the node's agent — started with
// no NODE_ZONE — moves to zone-c's views without a restart, staying ready, until its rules equal
// those of worker-c-1 (a zone-c node from the start). Times are measured from the kubectl call.

import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../services/stack/src/child-process.ts';
import { startFixture } from './support/fixture.ts';
import type { StackFixture } from './support/fixture.ts';

const KUBECTL = process.env['KUBECTL'] ?? '/usr/bin/kubectl';
const haveKubectl = existsSync(KUBECTL);
const STATIC = readFileSync(join(REPO_ROOT, 'services/cluster-sim/scenarios/static.yaml'), 'utf8');

let f: StackFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

async function kubectl(server: string, ...args: string[]): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'slicemesh-kubectl-'));
  try {
    return await new Promise((resolve, reject) => {
      execFile(KUBECTL, ['--server', server, '--cache-dir', join(home, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(home, 'none'), HOME: home }, timeout: 30_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

/** The series of `metric` on an agent's /metrics, as label text → value. */
async function series(url: string | undefined, metric: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (url === undefined) return out;
  const text = await (await fetch(`${url}/metrics`)).text();
  for (const m of text.matchAll(new RegExp(`^${metric}(\\{[^}]*\\})? (\\S+)$`, 'gm'))) out.set(m[1] ?? '', Number(m[2]));
  return out;
}

/** The view the agent's zone metric names (the one series with value 1). */
async function viewOf(url: string | undefined): Promise<string | null> {
  for (const [labels, v] of await series(url, 'slicemesh_proxy_zone_info')) if (v === 1) return /view="([^"]*)"/.exec(labels)?.[1] ?? null;
  return null;
}

/** Per Service port of `services`, the endpoints a rules file DNATs to, sorted. */
async function endpointsIn(file: string, services: readonly string[]): Promise<Record<string, string[]>> {
  const text = await readFile(file, 'utf8');
  const out: Record<string, string[]> = {};
  for (const svc of services) {
    const ips = [...text.matchAll(/--comment (\S+) .*--to-destination (\S+)/g)].filter((m) => m[1] === svc).map((m) => m[2] ?? '');
    out[svc] = [...new Set(ips)].sort();
  }
  return out;
}

async function waitFor<T>(what: string, probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, each?: () => void): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    each?.();
    const v = await probe();
    if (done(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms; last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const TOPOLOGY = ['shop/web:http', 'shop/api:grpc'];

describe(`an agent follows its Node's zone label through the stack${haveKubectl ? '' : ` (skipped: ${KUBECTL} not found)`}`, () => {
  it.skipIf(!haveKubectl)('kubectl relabels worker-b-1 from zone-b to zone-c: its agent moves to zone-c\'s views without a restart and ends with the rules of a zone-c node', async () => {
    f = await startFixture({ scenarioYaml: STATIC, agents: 'zone', partitions: 2 });
    await f.stack.ready;
    await f.stack.settled({ timeoutMs: 90_000 });
    const b1 = f.stack.agents.find((a) => a.node === 'worker-b-1');
    const c1 = f.stack.agents.find((a) => a.node === 'worker-c-1');
    if (b1 === undefined || c1 === undefined) throw new Error(`agents: ${f.stack.agents.map((a) => a.node).join(', ')}`);
    const health = (): string | undefined => f?.stack.urls.health['agent/worker-b-1'];
    expect(health()).toBeDefined();
    expect(await viewOf(health())).toBe('zone-b');
    const before = await endpointsIn(b1.rulesFile, TOPOLOGY);

    const component = f.stack.component('agent/worker-b-1');
    let unready = 0;
    const t0 = performance.now();
    await kubectl(f.stack.urls.kube, 'label', 'node', 'worker-b-1', 'topology.kubernetes.io/zone=zone-c', '--overwrite');
    const tKubectl = performance.now() - t0;
    await waitFor('agent view', () => viewOf(health()), (v) => v === 'zone-c', 30_000, () => void (component.isReady() ? 0 : unready++));
    const tMoved = performance.now() - t0;
    // The hints service recomputes the zones' hints for the relabelled node; the agent follows
    // the views until its rules equal those of worker-c-1, a zone-c node from the start.
    const settledRules = await waitFor(
      'rules of a zone-c node',
      async () => ({ b: await endpointsIn(b1.rulesFile, TOPOLOGY), c: await endpointsIn(c1.rulesFile, TOPOLOGY) }),
      (r) => JSON.stringify(r.b) === JSON.stringify(r.c),
      60_000,
      () => void (component.isReady() ? 0 : unready++),
    );
    const tRules = performance.now() - t0;
    process.stdout.write(`zone move through the stack: kubectl label ${tKubectl.toFixed(0)} ms, agent on zone-c's views ${tMoved.toFixed(0)} ms, rules equal to a zone-c node's ${tRules.toFixed(0)} ms after kubectl started\n`);

    expect(unready).toBe(0);
    expect(settledRules.b['shop/web:http']?.length).toBeGreaterThan(0);
    expect(settledRules.b).not.toEqual(before);
    expect([...(await series(health(), 'slicemesh_proxy_zone_moves_total')).values()]).toEqual([1]);
    const log = await readFile(join(f.dir, 'logs', 'agent-worker-b-1.log'), 'utf8');
    const moves = log.split('\n').filter((l) => l.includes('moved to the views of the new zone'));
    expect(moves).toHaveLength(1);
    expect(JSON.parse(moves[0] ?? '{}')).toMatchObject({ from: 'zone-b', to: 'zone-c', view: 'zone-c' });
  });
});
