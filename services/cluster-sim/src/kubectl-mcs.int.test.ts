// kubectl against the simulator's MCS API (ServiceExport and ServiceImport,
// multicluster.x-k8s.io/v1alpha1, as their CRDs installed): apply, get -A, status writes, delete;
// and a simulator without the MCS CRDs, where kubectl finds no such resource type.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from './start.ts';
import type { ClusterSim } from './start.ts';

const KUBECTL = process.env['KUBECTL'] ?? '/usr/bin/kubectl';
const haveKubectl = existsSync(KUBECTL);
if (!haveKubectl) console.warn(`kubectl-mcs.int.test: skipped, ${KUBECTL} not found (set KUBECTL to its path)`);

let withMcs: ClusterSim;
let withoutMcs: ClusterSim;
let dir: string;

beforeAll(async () => {
  if (!haveKubectl) return;
  withMcs = await startClusterSim({ scenario: EMPTY_SCENARIO });
  withoutMcs = await startClusterSim({ scenario: EMPTY_SCENARIO, mcsApi: false });
  dir = mkdtempSync(join(tmpdir(), 'cluster-sim-kubectl-mcs-'));
  writeFileSync(join(dir, 'kubeconfig'), '');
});
afterAll(async () => {
  if (!haveKubectl) return;
  await withMcs.close();
  await withoutMcs.close();
  rmSync(dir, { recursive: true, force: true });
});

function kubectl(sim: ClusterSim, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      // One discovery cache per simulator: they serve different groups.
      ['--server', sim.url, '--cache-dir', join(dir, `cache-${sim.port}`), ...args],
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

const rows = (stdout: string): string[][] => stdout.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
const EXPORT = 'apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata: {name: web, namespace: default}\n';

describe.skipIf(!haveKubectl)('kubectl and ServiceExports', () => {
  it('apply creates, re-applies unchanged; get -A and get -o json show it; delete removes it', async () => {
    const file = manifest('export.yaml', EXPORT);
    expect(await kubectl(withMcs, 'apply', '-f', file)).toMatchObject({ code: 0, stdout: 'serviceexport.multicluster.x-k8s.io/web created\n' });
    expect(await kubectl(withMcs, 'apply', '-f', file)).toMatchObject({ code: 0, stdout: 'serviceexport.multicluster.x-k8s.io/web unchanged\n' });
    const all = await kubectl(withMcs, 'get', 'serviceexports', '-A');
    expect(rows(all.stdout).map((r) => r.slice(0, 2))).toEqual([['NAMESPACE', 'NAME'], ['default', 'web']]);
    expect(rows((await kubectl(withMcs, 'get', 'svcex', '-n', 'default')).stdout).map((r) => r[0])).toEqual(['NAME', 'web']);
    const json = JSON.parse((await kubectl(withMcs, 'get', 'serviceexport', 'web', '-o', 'json')).stdout) as { apiVersion: string; kind: string; metadata: { creationTimestamp: string } };
    expect([json.apiVersion, json.kind, typeof json.metadata.creationTimestamp]).toEqual(['multicluster.x-k8s.io/v1alpha1', 'ServiceExport', 'string']);
    expect(await kubectl(withMcs, 'delete', '-f', file)).toMatchObject({ code: 0, stdout: 'serviceexport.multicluster.x-k8s.io "web" deleted\n' });
    expect(withMcs.store.get('ServiceExport', 'default', 'web')).toBeUndefined();
  });

  it('status conditions are written through the status subresource only', async () => {
    const file = manifest('export-status.yaml', EXPORT.replace('name: web', 'name: api'));
    expect(await kubectl(withMcs, 'apply', '-f', file)).toMatchObject({ code: 0 });
    const cond = { type: 'Valid', status: 'True', reason: 'ServiceFound', message: 'exported', lastTransitionTime: '2026-01-01T00:00:00Z' };
    const patched = await kubectl(withMcs, 'patch', 'serviceexport', 'api', '--subresource', 'status', '--type', 'merge', '-p', JSON.stringify({ status: { conditions: [cond] } }));
    expect(patched.code, patched.stderr).toBe(0);
    expect(withMcs.store.get('ServiceExport', 'default', 'api')?.['status']).toEqual({ conditions: [cond] });
    const bad = await kubectl(withMcs, 'patch', 'serviceexport', 'api', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"conditions":[{"status":"True"}]}}');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('status.conditions[0].type: Required value')]);
  });

  it('a ServiceImport: apply, get svcim -A with its type and IPs, status patch, delete', async () => {
    const file = manifest('import.yaml', [
      'apiVersion: multicluster.x-k8s.io/v1alpha1', 'kind: ServiceImport', 'metadata: {name: cart, namespace: default}',
      'spec: {type: ClusterSetIP, ips: [243.0.0.9], ports: [{name: http, protocol: TCP, port: 80}]}', '',
    ].join('\n'));
    expect(await kubectl(withMcs, 'apply', '-f', file)).toMatchObject({ code: 0, stdout: 'serviceimport.multicluster.x-k8s.io/cart created\n' });
    expect(rows((await kubectl(withMcs, 'get', 'svcim', '-A')).stdout).map((r) => r.slice(0, 4))).toEqual([['NAMESPACE', 'NAME', 'TYPE', 'IP'], ['default', 'cart', 'ClusterSetIP', '["243.0.0.9"]']]);
    const patched = await kubectl(withMcs, 'patch', 'serviceimport', 'cart', '-n', 'default', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"clusters":[{"cluster":"a"}]}}');
    expect(patched.code, patched.stderr).toBe(0);
    const json = JSON.parse((await kubectl(withMcs, 'get', 'serviceimports', '-A', '-o', 'json')).stdout) as { items: { kind: string; spec: unknown; status: unknown }[] };
    expect(json.items.map((i) => [i.kind, i.spec, i.status])).toEqual([['ServiceImport', { type: 'ClusterSetIP', ips: ['243.0.0.9'], ports: [{ name: 'http', protocol: 'TCP', port: 80 }] }, { clusters: [{ cluster: 'a' }] }]]);
    const bad = await kubectl(withMcs, 'patch', 'serviceimport', 'cart', '-n', 'default', '--type', 'merge', '-p', '{"spec":{"type":"NodePort"}}');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('spec.type: Unsupported value')]);
    expect(await kubectl(withMcs, 'delete', '-f', file)).toMatchObject({ code: 0, stdout: 'serviceimport.multicluster.x-k8s.io "cart" deleted\n' });
  });

  it('a simulator without the MCS CRDs: no such resource type, and the API answers 404', async () => {
    const got = await kubectl(withoutMcs, 'get', 'serviceexports', '-A');
    expect([got.code, got.stderr]).toEqual([1, expect.stringContaining('the server doesn\'t have a resource type "serviceexports"')]);
    const imports = await kubectl(withoutMcs, 'get', 'svcim', '-A');
    expect([imports.code, imports.stderr]).toEqual([1, expect.stringContaining('the server doesn\'t have a resource type "svcim"')]);
    const raw = await kubectl(withoutMcs, 'get', '--raw', '/apis/multicluster.x-k8s.io/v1alpha1/serviceexports');
    expect([raw.code, raw.stderr]).toEqual([1, expect.stringContaining('NotFound')]);
    expect((await kubectl(withoutMcs, 'get', 'services', '-A')).code).toBe(0);
  });
});
