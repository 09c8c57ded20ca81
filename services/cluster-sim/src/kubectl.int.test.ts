// kubectl against the simulator: get (table and JSON), apply (create and patch, with the
// default client-side validation), and delete (which waits for the pod to be gone); and what
// the control plane writes: EndpointSlices, Events (get events, describe) and Leases.
import { execFile, spawn } from 'node:child_process';
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

/** Runs `kubectl get ... -w` until its output matches `until` (or 20 s pass), then stops it. */
function kubectlWatch(args: readonly string[], until: RegExp, started: () => Promise<unknown>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, ['--server', sim.url, '--cache-dir', join(dir, 'cache'), ...args], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir } });
    let out = '';
    let triggered = false;
    const finish = (): void => {
      clearTimeout(timer);
      child.kill();
      resolve(out);
    };
    const timer = setTimeout(finish, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      // The initial list has been printed (header and a row): the watch is next, make the change.
      if (!triggered && out.split('\n').length > 2) {
        triggered = true;
        started().catch(reject);
      }
      // Matched against whole lines only: a row can arrive in two chunks, and a match on its
      // first half ended the watch before the rest of the row was printed (seen once in CI).
      if (until.test(out.slice(0, out.lastIndexOf('\n') + 1))) finish();
    });
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

const SLICE = (name: string, service: string, addresses: readonly string[]) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}, namespace: shop, labels: {kubernetes.io/service-name: ${service}, endpointslice.kubernetes.io/managed-by: slicemesh.io/publisher}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
${addresses.map((ip, i) => `- {addresses: [${ip}], conditions: {ready: true}, nodeName: node-${i % 2 ? 'b' : 'a'}, zone: ${i % 2 ? 'b' : 'a'}}`).join('\n')}
`;

const rows = (stdout: string): string[][] => stdout.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));

describe.skipIf(!haveKubectl)('kubectl and what the control plane writes', () => {
  it('EndpointSlices: apply, get -A, -o wide, -l kubernetes.io/service-name, label, delete', async () => {
    expect(await kubectl('apply', '-f', manifest('s1.yaml', SLICE('web-abc', 'web', ['10.244.0.5', '10.244.1.5', '10.244.0.6', '10.244.1.6'])))).toMatchObject({ code: 0, stdout: 'endpointslice.discovery.k8s.io/web-abc created\n' });
    expect(await kubectl('apply', '-f', manifest('s2.yaml', SLICE('db-xyz', 'db', ['10.244.0.9'])))).toMatchObject({ code: 0 });
    const all = await kubectl('get', 'endpointslices', '-A');
    expect([all.code, all.stderr]).toEqual([0, '']);
    expect(rows(all.stdout).map((r) => r.slice(0, 5))).toEqual([
      ['NAMESPACE', 'NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS'],
      ['shop', 'db-xyz', 'IPv4', '8080', '10.244.0.9'],
      ['shop', 'web-abc', 'IPv4', '8080', '10.244.0.5,10.244.1.5,10.244.0.6 + 1 more...'],
    ]);
    expect(rows((await kubectl('get', 'endpointslices', '-n', 'shop', '-o', 'wide')).stdout)[0]).toEqual(['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE']);
    expect(rows((await kubectl('get', 'endpointslices', '-n', 'shop', '-l', 'kubernetes.io/service-name=web')).stdout).slice(1).map((r) => r[0])).toEqual(['web-abc']);
    expect(await kubectl('label', 'endpointslice', 'db-xyz', '-n', 'shop', 'team=data')).toMatchObject({ code: 0, stdout: 'endpointslice.discovery.k8s.io/db-xyz labeled\n' });
    expect(rows((await kubectl('get', 'endpointslices', '-A', '-l', 'team=data')).stdout).slice(1).map((r) => r[1])).toEqual(['db-xyz']);
    expect(await kubectl('delete', 'endpointslice', 'db-xyz', '-n', 'shop')).toMatchObject({ code: 0, stdout: 'endpointslice.discovery.k8s.io "db-xyz" deleted\n' });
  });

  it('EndpointSlices: get -w lists, then prints a slice as it is created', async () => {
    expect(await kubectl('apply', '-f', manifest('s3.yaml', SLICE('watched-0', 'watched', ['10.244.0.8'])))).toMatchObject({ code: 0 });
    const out = await kubectlWatch(['get', 'endpointslices', '-n', 'shop', '-w', '-l', 'kubernetes.io/service-name=watched'], /watched-1\s+IPv4/, () => kubectl('apply', '-f', manifest('s4.yaml', SLICE('watched-1', 'watched', ['10.244.0.7']))));
    expect(rows(out).map((r) => r.slice(0, 4))).toEqual([
      ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS'],
      ['watched-0', 'IPv4', '8080', '10.244.0.8'],
      ['watched-1', 'IPv4', '8080', '10.244.0.7'],
    ]);
  });

  it('EndpointSlices: a slice the API rejects comes back as kubectl prints it', async () => {
    const { code, stderr } = await kubectl('apply', '-f', manifest('bad.yaml', SLICE('bad', 'web', ['fd00::1'])));
    expect([code, stderr.trim()]).toEqual([1, 'The EndpointSlice "bad" is invalid: endpoints[0].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address']);
  });

  it('Events: get events prints LAST SEEN TYPE REASON OBJECT MESSAGE, events.k8s.io events included', async () => {
    const uid = sim.store.get('Service', 'shop', 'web')!.metadata.uid!;
    const events = manifest('events.yaml', `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.hints, namespace: shop}
regarding: {apiVersion: v1, kind: Service, namespace: shop, name: web, uid: ${uid}}
reason: TopologyAwareHintsDisabled
note: Insufficient number of endpoints (2), skipping topology aware hints
type: Warning
eventTime: "${new Date(Date.now() - 5000).toISOString().replace('Z', '000Z')}"
reportingController: slicemesh.io/hints
reportingInstance: hints-0
action: Reconcile
---
apiVersion: v1
kind: Event
metadata: {name: web.mirror, namespace: shop}
involvedObject: {apiVersion: v1, kind: Service, namespace: shop, name: web, uid: ${uid}}
reason: Synced
message: Synced the slices of shop/web
type: Normal
source: {component: slicemesh.io/publisher}
count: 3
firstTimestamp: "${new Date(Date.now() - 150_000).toISOString().replace(/\.\d+Z$/, 'Z')}"
lastTimestamp: "${new Date(Date.now() - 90_000).toISOString().replace(/\.\d+Z$/, 'Z')}"
`);
    expect(await kubectl('create', '-f', events)).toMatchObject({ code: 0, stdout: 'event.events.k8s.io/web.hints created\nevent/web.mirror created\n' });
    const get = await kubectl('get', 'events', '-n', 'shop');
    expect([get.code, get.stderr]).toEqual([0, '']);
    expect(rows(get.stdout)).toEqual([
      ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
      [expect.stringMatching(/^\d+s$/), 'Warning', 'TopologyAwareHintsDisabled', 'service/web', 'Insufficient number of endpoints (2), skipping topology aware hints'],
      [expect.stringMatching(/^(89|9\d)s$/), 'Normal', 'Synced', 'service/web', 'Synced the slices of shop/web'],
    ]);
    const wide = rows((await kubectl('get', 'events', '-n', 'shop', '-o', 'wide')).stdout);
    expect(wide[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'SUBOBJECT', 'SOURCE', 'MESSAGE', 'FIRST SEEN', 'COUNT', 'NAME']);
    expect(wide[2]!.slice(-3)).toEqual([expect.stringMatching(/^2m(29|3\d)s$/), '3', 'web.mirror']);
    const v1 = await kubectl('get', 'events.events.k8s.io', '-n', 'shop', 'web.mirror', '-o', 'json');
    expect(JSON.parse(v1.stdout)).toMatchObject({ apiVersion: 'events.k8s.io/v1', note: 'Synced the slices of shop/web', deprecatedCount: 3 });
    expect(rows((await kubectl('get', 'events', '-A', '--field-selector', 'type=Warning')).stdout).slice(1).map((r) => r[3])).toEqual(['TopologyAwareHintsDisabled']);
  });

  it('describe svc shows the endpoints from the slices and the Events section', async () => {
    const { code, stdout, stderr } = await kubectl('describe', 'svc', 'web', '-n', 'shop');
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout).toMatch(/^Endpoints:\s+10\.244\.0\.5:8080,10\.244\.1\.5:8080,10\.244\.0\.6:8080 \+ 1 more\.\.\.$/m);
    // kubectl sorts by lastTimestamp; the new-style event has none, so it comes first.
    const events = stdout.slice(stdout.indexOf('Events:'));
    expect(rows(events).slice(1)).toEqual([
      ['Type', 'Reason', 'Age', 'From', 'Message'],
      ['----', '------', '----', '----', '-------'],
      ['Warning', 'TopologyAwareHintsDisabled', expect.stringMatching(/^\d+s$/), 'slicemesh.io/hints', 'Insufficient number of endpoints (2), skipping topology aware hints'],
      ['Normal', 'Synced', expect.stringMatching(/^(89|9\d)s \(x3 over 2m(29|3\d)s\)$/), 'slicemesh.io/publisher', 'Synced the slices of shop/web'],
    ]);
  });

  it('Events: an event the API rejects comes back as kubectl prints it', async () => {
    const bad = manifest('bad-event.yaml', 'apiVersion: v1\nkind: Event\nmetadata: {name: bad, namespace: shop}\ninvolvedObject: {kind: Service, namespace: default, name: web}\nreason: R\n');
    const { code, stderr } = await kubectl('create', '-f', bad);
    expect([code, stderr.trim()]).toEqual([1, 'The Event "bad" is invalid: involvedObject.namespace: Invalid value: "default": does not match event.namespace']);
  });

  it('Leases: create, get (NAME HOLDER AGE), a rejected patch, delete', async () => {
    const lease = manifest('lease.yaml', 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: slicemesh-publisher, namespace: kube-system}\nspec: {holderIdentity: publisher-0, leaseDurationSeconds: 15, leaseTransitions: 0}\n');
    expect(await kubectl('create', '-f', lease)).toMatchObject({ code: 0, stdout: 'lease.coordination.k8s.io/slicemesh-publisher created\n' });
    expect(rows((await kubectl('get', 'leases', '-A')).stdout).map((r) => r.slice(0, 3))).toEqual([['NAMESPACE', 'NAME', 'HOLDER'], ['kube-system', 'slicemesh-publisher', 'publisher-0']]);
    const patch = await kubectl('patch', 'lease', 'slicemesh-publisher', '-n', 'kube-system', '--type', 'merge', '-p', '{"spec":{"leaseDurationSeconds":0}}');
    expect([patch.code, patch.stderr.trim()]).toEqual([1, 'The Lease "slicemesh-publisher" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0']);
    expect(await kubectl('patch', 'lease', 'slicemesh-publisher', '-n', 'kube-system', '--type', 'merge', '-p', '{"spec":{"holderIdentity":"publisher-1"}}')).toMatchObject({ code: 0 });
    expect(rows((await kubectl('get', 'lease', '-n', 'kube-system', 'slicemesh-publisher')).stdout)[1]!.slice(0, 2)).toEqual(['slicemesh-publisher', 'publisher-1']);
    expect(await kubectl('delete', '-f', lease)).toMatchObject({ code: 0, stdout: 'lease.coordination.k8s.io "slicemesh-publisher" deleted\n' });
  });
});
