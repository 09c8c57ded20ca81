// The ServiceExport status writer against real NATS and cluster-sim over HTTP: the conditions
// mcs put in the exportstatus bucket land on the ServiceExport's status subresource, once per
// content; a ServiceExport that does not exist is skipped; shadow mode writes nothing.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { ServiceExportApi } from '@slicemesh/kube';
import { buildKubeConfig, serviceExportApi } from '@slicemesh/kube';
import type { KV } from '@slicemesh/nats';
import { EXPORT_STATUS_VERSION, ensureKv, exportStatusKey, kvPutJson } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { publisherConfigWith } from '../config.ts';
import type { StatusWriterHandle } from './status-writer.ts';
import { startStatusWriter } from './status-writer.ts';

const CLUSTER = 'c1';
let f: JetStreamFixture;
let sim: ClusterSim;
let kv: KV;
let bucket: string;
const handles: StatusWriterHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  bucket = `exportstatus_${f.id}`;
  kv = await ensureKv(f.nc, bucket);
  sim.store.create('ServiceExport', { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'cart', namespace: 'default' } } as KubeObj);
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await sim.close();
  await f.jsm.streams.delete(`KV_${bucket}`).catch(() => {});
  await f.cleanup();
});

/** The real API, each patch counted. */
function countingApi(): ServiceExportApi & { patches: number } {
  const inner = serviceExportApi(buildKubeConfig({ type: 'server', url: sim.url }), { timeoutMs: 5000 });
  const api = { patches: 0, patchStatus: async (...a: Parameters<ServiceExportApi['patchStatus']>) => ((api.patches += 1), inner.patchStatus(...a)) };
  return api;
}

function start(mode: 'write' | 'shadow', api: ServiceExportApi): StatusWriterHandle {
  const h = startStatusWriter(publisherConfigWith({ mode, natsUrl: f.url, cluster: CLUSTER, exportStatusBucket: bucket, kubeServer: sim.url, logLevel: 'silent' }), { api, retryDelayMs: () => 10 });
  handles.push(h);
  return h;
}

const conditions = (conflict: 'True' | 'False') => [
  { type: 'Valid', status: 'True', reason: 'Exported', message: 'Service default/cart is exported to the cluster set', lastTransitionTime: '2026-11-27T08:00:00Z' },
  { type: 'Conflict', status: conflict, reason: conflict === 'True' ? 'PortConflict' : 'NoConflicts', message: 'm', lastTransitionTime: '2026-11-27T08:00:00Z' },
];
const entry = (name: string, conflict: 'True' | 'False') => ({ v: EXPORT_STATUS_VERSION, namespace: 'default', name, conditions: conditions(conflict) });
const statusOf = (name: string): unknown => (sim.store.get('ServiceExport', 'default', name) as { status?: unknown } | undefined)?.status;

async function until(what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within 10 s: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ServiceExport status writer', () => {
  it('writes the conditions to the status subresource, again only when they change', async () => {
    await kvPutJson(kv, exportStatusKey({ cluster: CLUSTER, namespace: 'default', name: 'cart' }), entry('cart', 'False'));
    const api = countingApi();
    const h = start('write', api);
    await h.ready;
    await until('the first status', () => JSON.stringify(statusOf('cart')) === JSON.stringify({ conditions: conditions('False') }));
    // The same content again: nothing to write.
    await kvPutJson(kv, exportStatusKey({ cluster: CLUSTER, namespace: 'default', name: 'cart' }), entry('cart', 'False'));
    await kvPutJson(kv, exportStatusKey({ cluster: CLUSTER, namespace: 'default', name: 'cart' }), entry('cart', 'True'));
    await until('the conflict', () => JSON.stringify(statusOf('cart')) === JSON.stringify({ conditions: conditions('True') }));
    expect(api.patches).toBe(2);
    expect(h.counts()).toEqual({ written: 2, gone: 0, failures: 0 });
  });

  it('skips a ServiceExport the API does not have, and leaves other clusters\' entries alone', async () => {
    await kvPutJson(kv, exportStatusKey({ cluster: CLUSTER, namespace: 'default', name: 'gone' }), entry('gone', 'False'));
    await kvPutJson(kv, exportStatusKey({ cluster: 'c2', namespace: 'default', name: 'cart' }), entry('cart', 'True'));
    const h = start('write', countingApi());
    await h.ready;
    await until('the missing one counted', () => h.counts().gone === 1);
    expect(statusOf('cart')).toBeUndefined();
    expect(h.counts()).toEqual({ written: 0, gone: 1, failures: 0 });
  });

  it('counts what it would write in shadow mode and writes nothing', async () => {
    await kvPutJson(kv, exportStatusKey({ cluster: CLUSTER, namespace: 'default', name: 'cart' }), entry('cart', 'True'));
    const api = countingApi();
    const h = start('shadow', api);
    await h.ready;
    await until('counted', () => h.counts().written === 1);
    expect(api.patches).toBe(0);
    expect(statusOf('cart')).toBeUndefined();
  });

  it('is ready without the bucket (no mcs in this cluster)', async () => {
    const h = startStatusWriter(publisherConfigWith({ mode: 'write', natsUrl: f.url, cluster: CLUSTER, exportStatusBucket: `missing_${f.id}`, kubeServer: sim.url, logLevel: 'silent' }), { api: countingApi() });
    handles.push(h);
    await h.ready;
    expect(h.readiness()).toEqual({ ready: true });
  });
});
