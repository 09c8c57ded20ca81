// The ServiceImport writer against real NATS and cluster-sim over HTTP: the ServiceImports mcs put
// in the serviceimports bucket are created, updated (spec, then status) once per content, and
// deleted with their entry; labelled ones the bucket no longer holds are deleted at start, other
// ServiceImports are left alone; failures are retried; shadow mode writes nothing; real kubectl
// sees what was written.

import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { ServiceImportApi } from '@slicemesh/kube';
import { KubeWriteError, buildKubeConfig, serviceImportApi } from '@slicemesh/kube';
import type { KV } from '@slicemesh/nats';
import { SERVICE_IMPORT_VERSION, ensureKv, kvDelete, kvPutJson, serviceImportKey } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { publisherConfigWith } from '../config.ts';
import type { ImportWriterHandle } from './import-writer.ts';
import { startImportWriter } from './import-writer.ts';

const CLUSTER = 'c1';
const OURS = { 'app.kubernetes.io/managed-by': 'slicemesh-mcs' };
let f: JetStreamFixture;
let sim: ClusterSim;
let kv: KV;
let bucket: string;
const handles: ImportWriterHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  bucket = `serviceimports_${f.id}`;
  kv = await ensureKv(f.nc, bucket);
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await sim.close();
  await f.jsm.streams.delete(`KV_${bucket}`).catch(() => {});
  await f.cleanup();
});

type Call = 'get' | 'list' | 'create' | 'replace' | 'patchStatus' | 'delete';

/** The real API, each call counted; `failNext` fails that many writes first with a 503. */
function countingApi(failNext = 0): ServiceImportApi & { calls: Call[] } {
  const inner = serviceImportApi(buildKubeConfig({ type: 'server', url: sim.url }), { timeoutMs: 5000 });
  let failures = failNext;
  const calls: Call[] = [];
  const counted =
    <A extends unknown[], R>(name: Call, fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      calls.push(name);
      if (name !== 'get' && name !== 'list' && failures > 0) {
        failures--;
        throw new KubeWriteError(name === 'patchStatus' ? 'patch' : name, '/test', 503, 'ServiceUnavailable', 'injected');
      }
      return fn(...a);
    };
  return {
    calls,
    get: counted('get', inner.get),
    list: counted('list', inner.list),
    create: counted('create', inner.create),
    replace: counted('replace', inner.replace),
    patchStatus: counted('patchStatus', inner.patchStatus),
    delete: counted('delete', inner.delete),
  };
}

function start(mode: 'write' | 'shadow', api: ServiceImportApi): ImportWriterHandle {
  const h = startImportWriter(publisherConfigWith({ mode, natsUrl: f.url, cluster: CLUSTER, serviceImportsBucket: bucket, kubeServer: sim.url, logLevel: 'silent' }), { api, retryDelayMs: () => 10 });
  handles.push(h);
  return h;
}

const spec = (port: number) => ({ ips: ['243.0.0.9'], type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port }], sessionAffinity: 'None' });
const entry = (name: string, port = 80, clusters = ['a']) => ({ v: SERVICE_IMPORT_VERSION, namespace: 'default', name, spec: spec(port), status: { clusters: clusters.map((cluster) => ({ cluster })) } });
const key = (name: string): string => serviceImportKey({ cluster: CLUSTER, namespace: 'default', name });
const stored = (name: string): KubeObj | undefined => sim.store.get('ServiceImport', 'default', name);
const writesOf = (calls: readonly Call[]): Call[] => calls.filter((c) => c !== 'get' && c !== 'list');

async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ServiceImport writer', () => {
  it('creates the ServiceImport labelled as ours with its status, updates it once per content, deletes it with its entry', async () => {
    await kvPutJson(kv, key('cart'), entry('cart'));
    const api = countingApi();
    const h = start('write', api);
    await h.ready;
    await until('created with its status', () => JSON.stringify(stored('cart')?.['status']) === JSON.stringify({ clusters: [{ cluster: 'a' }] }));
    expect(stored('cart')).toMatchObject({ metadata: { labels: OURS }, spec: spec(80) });
    expect(writesOf(api.calls)).toEqual(['create', 'patchStatus']);
    // The same content again: nothing to write. A new port: the spec replaced, the status kept.
    await kvPutJson(kv, key('cart'), entry('cart'));
    await kvPutJson(kv, key('cart'), entry('cart', 8080));
    await until('the new port', () => JSON.stringify(stored('cart')?.['spec']) === JSON.stringify(spec(8080)));
    // Another cluster joins: only the status changes.
    await kvPutJson(kv, key('cart'), entry('cart', 8080, ['a', 'b']));
    await until('two clusters', () => JSON.stringify(stored('cart')?.['status']) === JSON.stringify({ clusters: [{ cluster: 'a' }, { cluster: 'b' }] }));
    await kvDelete(kv, key('cart'));
    await until('deleted', () => stored('cart') === undefined);
    expect(writesOf(api.calls)).toEqual(['create', 'patchStatus', 'replace', 'patchStatus', 'delete']);
    expect(h.counts()).toEqual({ written: 3, deleted: 1, foreign: 0, unserved: 0, failures: 0 });
  });

  it('at start deletes our ServiceImports the bucket no longer holds, and leaves unlabelled ones alone', async () => {
    const obj = (name: string, labels?: Record<string, string>) =>
      ({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) }, spec: spec(80) }) as KubeObj;
    sim.store.create('ServiceImport', obj('stale', OURS));
    sim.store.create('ServiceImport', obj('gone', OURS));
    sim.store.create('ServiceImport', obj('theirs'));
    // gone's entry was deleted while the writer was away (a delete marker); stale's never existed here.
    await kvPutJson(kv, key('gone'), entry('gone'));
    await kvDelete(kv, key('gone'));
    sim.store.create('ServiceImport', obj('cart', OURS));
    // cart is still wanted; theirs is wanted too, but someone else owns it.
    await kvPutJson(kv, key('cart'), entry('cart'));
    await kvPutJson(kv, key('theirs'), entry('theirs', 9090));
    const h = start('write', countingApi());
    await h.ready;
    await until('the stale ones deleted', () => stored('stale') === undefined && stored('gone') === undefined);
    await until('the foreign one counted', () => h.counts().foreign === 1);
    expect([stored('cart')?.['status'], stored('theirs')?.['spec']]).toEqual([{ clusters: [{ cluster: 'a' }] }, spec(80)]);
    expect(h.counts()).toMatchObject({ deleted: 2, foreign: 1, failures: 0 });
  });

  it('retries a failed write until it goes through', async () => {
    await kvPutJson(kv, key('cart'), entry('cart'));
    const api = countingApi(2);
    const h = start('write', api);
    await h.ready;
    await until('written after the failures', () => stored('cart')?.['status'] !== undefined);
    expect(writesOf(api.calls)).toEqual(['create', 'create', 'create', 'patchStatus']);
    expect(h.counts()).toMatchObject({ written: 1, failures: 2 });
  });

  it('a cluster without the ServiceImport CRD: counted as unserved once, not retried, nothing to sweep', async () => {
    const bare = await startClusterSim({ scenario: EMPTY_SCENARIO, mcsApi: false });
    try {
      await kvPutJson(kv, key('cart'), entry('cart'));
      const inner = serviceImportApi(buildKubeConfig({ type: 'server', url: bare.url }), { timeoutMs: 5000 });
      let creates = 0;
      const h = start('write', { ...inner, create: async (o) => ((creates += 1), inner.create(o)) });
      await h.ready;
      await until('counted as unserved', () => h.counts().unserved === 1);
      await new Promise((r) => setTimeout(r, 200));
      expect([creates, h.counts()]).toEqual([1, { written: 0, deleted: 0, foreign: 0, unserved: 1, failures: 0 }]);
    } finally {
      await bare.close();
    }
  });

  it('counts what it would write in shadow mode and writes nothing', async () => {
    await kvPutJson(kv, key('cart'), entry('cart'));
    const api = countingApi();
    const h = start('shadow', api);
    await h.ready;
    await until('counted', () => h.counts().written === 1);
    expect(writesOf(api.calls)).toEqual([]);
    expect(stored('cart')).toBeUndefined();
  });

  it('is ready without the bucket (no mcs in this cluster)', async () => {
    const h = startImportWriter(publisherConfigWith({ mode: 'write', natsUrl: f.url, cluster: CLUSTER, serviceImportsBucket: `missing_${f.id}`, kubeServer: sim.url, logLevel: 'silent' }), { api: countingApi() });
    handles.push(h);
    await h.ready;
    expect(h.readiness()).toEqual({ ready: true });
  });

  const KUBECTL = process.env['KUBECTL'] ?? '/usr/bin/kubectl';
  it.skipIf(!existsSync(KUBECTL))('what it wrote is what kubectl get serviceimports -A shows', async () => {
    await kvPutJson(kv, key('cart'), entry('cart', 80, ['a', 'b']));
    const h = start('write', countingApi());
    await h.ready;
    await until('written', () => stored('cart')?.['status'] !== undefined);
    const dir = mkdtempSync(join(tmpdir(), 'import-writer-kubectl-'));
    try {
      writeFileSync(join(dir, 'kubeconfig'), '');
      const out = await new Promise<string>((resolve, reject) =>
        execFile(KUBECTL, ['--server', sim.url, '--cache-dir', join(dir, 'cache'), 'get', 'serviceimports', '-A', '-o', 'json'], { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir }, timeout: 30_000 }, (err, stdout, stderr) =>
          err ? reject(new Error(stderr || err.message)) : resolve(stdout),
        ),
      );
      const items = (JSON.parse(out) as { items: { metadata: { namespace: string; name: string; labels: unknown }; spec: unknown; status: unknown }[] }).items;
      expect(items.map((i) => [i.metadata.namespace, i.metadata.name, i.metadata.labels, i.spec, i.status])).toEqual([
        ['default', 'cart', OURS, spec(80), { clusters: [{ cluster: 'a' }, { cluster: 'b' }] }],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
