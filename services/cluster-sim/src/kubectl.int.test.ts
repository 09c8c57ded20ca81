// kubectl against the simulator: get (table and JSON), apply (create and patch, with the
// default client-side validation), and delete (which waits for the pod to be gone).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScenario } from './scenario/parse-scenario.ts';
import { startClusterSim } from './start.ts';
import type { ClusterSim } from './start.ts';

const KUBECTL = process.env['KUBECTL'] ?? '/usr/bin/kubectl';
const haveKubectl = existsSync(KUBECTL);
if (!haveKubectl) console.warn(`kubectl.int.test: skipped, ${KUBECTL} not found (set KUBECTL to its path)`);

const SCENARIO = parseScenario(`
zones: [a, b]
nodes: [{name: node-a, zone: a}, {name: node-b, zone: b}]
deployments: [{name: web, namespace: shop, replicas: 2, readinessDelayMs: 100, containerPorts: [{name: http, containerPort: 8080}]}]
services: [{name: web, namespace: shop, deployment: web, ports: [{name: http, port: 80, targetPort: http}]}]
`, 'kubectl-test');

let sim: ClusterSim;
let dir: string;

beforeAll(async () => {
  if (!haveKubectl) return;
  sim = await startClusterSim({ scenario: SCENARIO, apiPodReadinessDelayMs: 100 });
  dir = mkdtempSync(join(tmpdir(), 'cluster-sim-kubectl-'));
  writeFileSync(join(dir, 'kubeconfig'), '');
});
afterAll(async () => {
  if (!haveKubectl) return;
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      ['--server', sim.url, '--cache-dir', join(dir, 'cache'), ...args],
      { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function manifest(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe.skipIf(!haveKubectl)('kubectl against cluster-sim', () => {
  it('get pods -A prints the table with the namespace column', async () => {
    const { code, stdout, stderr } = await kubectl('get', 'pods', '-A');
    expect([code, stderr]).toEqual([0, '']);
    const lines = stdout.trim().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 1)[0])).toEqual(['shop', 'shop']);
    expect(lines.slice(1).every((l) => l.includes('Running'))).toBe(true);
  });

  it('get svc -n shop -o json prints a List of Services', async () => {
    const { code, stdout } = await kubectl('get', 'svc', '-n', 'shop', '-o', 'json');
    const list = JSON.parse(stdout) as { kind: string; items: { kind: string; metadata: { name: string }; spec: { clusterIP: string } }[] };
    expect([code, list.kind, list.items.map((s) => [s.kind, s.metadata.name])]).toEqual([0, 'List', [['Service', 'web']]]);
    expect(list.items[0]!.spec.clusterIP).toMatch(/^10\.96\./);
  });

  it('short names, nodes and the multi-kind JSON dump the slicemesh CLI reads', async () => {
    expect((await kubectl('get', 'no')).stdout).toMatch(/node-a\s+Ready/);
    expect((await kubectl('get', 'ep', '-n', 'shop')).stdout).toMatch(/web\s+10\.244\./);
    const { code, stdout, stderr } = await kubectl('get', 'svc,pods,nodes,endpoints,endpointslices', '-A', '-o', 'json');
    expect([code, stderr]).toEqual([0, '']);
    const kinds = new Set((JSON.parse(stdout) as { items: { kind: string }[] }).items.map((i) => i.kind));
    expect(kinds).toEqual(new Set(['Service', 'Pod', 'Node', 'Endpoints']));
  });

  it('apply creates, re-applies unchanged, then patches a changed service', async () => {
    const v1 = manifest('svc.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: shop}\nspec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: http}]}\n');
    expect(await kubectl('apply', '-f', v1)).toMatchObject({ code: 0, stdout: 'service/api created\n' });
    expect(await kubectl('apply', '-f', v1)).toMatchObject({ code: 0, stdout: 'service/api unchanged\n' });
    const v2 = manifest('svc.yaml', 'apiVersion: v1\nkind: Service\nmetadata: {name: api, namespace: shop, annotations: {service.kubernetes.io/topology-mode: Auto}}\nspec: {selector: {app: web}, ports: [{name: http, port: 8080, targetPort: http}]}\n');
    expect(await kubectl('apply', '-f', v2)).toMatchObject({ code: 0, stdout: 'service/api configured\n' });
    const svc = sim.store.get('Service', 'shop', 'api')!;
    expect(svc.metadata.annotations?.['service.kubernetes.io/topology-mode']).toBe('Auto');
    expect((svc['spec'] as { ports: { port: number }[] }).ports.map((p) => p.port)).toEqual([8080]);
    expect(await kubectl('delete', '-f', v2)).toMatchObject({ code: 0, stdout: 'service "api" deleted\n' });
    expect(sim.store.get('Service', 'shop', 'api')).toBeUndefined();
  });

  it('an applied pod is scheduled and started; delete waits until it is gone', async () => {
    const pod = manifest('pod.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: probe, namespace: shop, labels: {app: web}}\nspec: {terminationGracePeriodSeconds: 1, containers: [{name: c, image: pause, ports: [{name: http, containerPort: 8080}]}]}\n');
    expect(await kubectl('apply', '-f', pod)).toMatchObject({ code: 0, stdout: 'pod/probe created\n' });
    const wide = await kubectl('get', 'pod', 'probe', '-n', 'shop', '-o', 'wide');
    expect(wide.stdout).toMatch(/probe\s+\d\/1\s+Running\s+0\s+\S+\s+10\.244\.\d+\.\d+\s+node-[ab]/);
    const started = Date.now();
    expect(await kubectl('delete', 'pod', 'probe', '-n', 'shop')).toMatchObject({ code: 0, stdout: 'pod "probe" deleted\n' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(sim.store.get('Pod', 'shop', 'probe')).toBeUndefined();
  });

  it('create namespace (sent as protobuf) and delete it', async () => {
    expect(await kubectl('create', 'namespace', 'demo')).toMatchObject({ code: 0, stdout: 'namespace/demo created\n' });
    expect(sim.store.get('Namespace', undefined, 'demo')?.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'demo' });
    expect(await kubectl('delete', 'namespace', 'demo')).toMatchObject({ code: 0, stdout: 'namespace "demo" deleted\n' });
  });

  it('errors come back as kubectl prints them', async () => {
    const { code, stderr } = await kubectl('get', 'pod', 'nope', '-n', 'shop');
    expect([code, stderr.trim()]).toEqual([1, 'Error from server (NotFound): pods "nope" not found']);
  });
});
