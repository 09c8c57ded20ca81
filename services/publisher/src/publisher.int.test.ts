// The publisher against real NATS, Postgres and cluster-sim over HTTP (habit 10): SliceChanged
// messages on a fresh SLICES stream (SOURCE=slices), and entries of a fresh `hinted` bucket
// (SOURCE=hinted, the default), become EndpointSlices in the simulated API server.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import type { TestDb } from '@slicemesh/db/testing';
import { withTestDb } from '@slicemesh/db/testing';
import type { EndpointSliceApi, KubeJson } from '@slicemesh/kube';
import { buildKubeConfig, endpointSliceApi } from '@slicemesh/kube';
import { startApiProxy } from '@slicemesh/kube/testing';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY } from '@slicemesh/model';
import { ensureKv, ensureStreams, hintedKey, kvDelete, kvPutJson, publishAcked, slicesSubject } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { makeSlice } from '@slicemesh/testing';
import type { PublisherConfig } from './config.ts';
import { publisherConfigWith } from './config.ts';
import type { PublisherHandle } from './publisher.ts';
import { startPublisher } from './publisher.ts';

const CLUSTER = 'c1';
let f: JetStreamFixture;
let tdb: TestDb;
let sim: ClusterSim;
let config: PublisherConfig;
let msgId = 0;
const handles: PublisherHandle[] = [];

beforeEach(async () => {
  f = await withJetStream();
  tdb = await withTestDb();
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  await ensureStreams(f.jsm, f.names);
  config = publisherConfigWith({
    mode: 'write', source: 'slices', hintedBucket: f.names.hinted, natsUrl: f.url, databaseUrl: tdb.url, dbSchema: tdb.schema, cluster: CLUSTER,
    kubeStream: f.names.kube, slicesStream: f.names.slices, dlqStream: f.names.dlq, subjectPrefix: f.names.prefix, durablePrefix: `pub${f.id}`,
    kubeServer: sim.url, kubeApiQps: 1000, kubeApiBurst: 1000,
    logLevel: (process.env['PUBLISHER_TEST_LOG'] ?? 'silent') as 'silent',
  });
});

afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  await sim.close();
  await f.cleanup();
  await tdb.close();
});

/** Real HTTP to the simulator, counting writes, with a hook before each replace. */
interface CountingApi extends EndpointSliceApi {
  readonly writes: string[];
  /** Every request, reads included. */
  requests: number;
  beforeReplace: (() => void) | undefined;
}
function countingApi(url = sim.url): CountingApi {
  const inner = endpointSliceApi(buildKubeConfig({ type: 'server', url }), { timeoutMs: 5000 });
  const key = (o: KubeJson): string => `${String((o['metadata'] as Record<string, unknown>)['name'])}`;
  const api: CountingApi = {
    writes: [],
    requests: 0,
    beforeReplace: undefined,
    get: (ns, name) => {
      api.requests++;
      return inner.get(ns, name);
    },
    list: (ns, limit, token) => {
      api.requests++;
      return inner.list(ns, limit, token);
    },
    create: async (s) => {
      api.requests++;
      api.writes.push(`create ${key(s)}`);
      return inner.create(s);
    },
    replace: async (s) => {
      const hook = api.beforeReplace;
      api.beforeReplace = undefined;
      hook?.();
      api.requests++;
      api.writes.push(`replace ${key(s)}`);
      return inner.replace(s);
    },
    delete: async (ns, name, pre) => {
      api.requests++;
      api.writes.push(`delete ${name}`);
      return inner.delete(ns, name, pre);
    },
  };
  return api;
}

async function start(c: PublisherConfig = config, api: EndpointSliceApi = countingApi()): Promise<PublisherHandle> {
  const h = startPublisher(c, { api });
  handles.push(h);
  await h.ready;
  return h;
}

async function stop(h: PublisherHandle): Promise<void> {
  handles.splice(handles.indexOf(h), 1);
  await h.close();
}

const slice = (name: string, ips: readonly string[] = ['10.0.0.1'], service = 'web'): EndpointSlice =>
  makeSlice(name, ips.map((ip) => ({ addresses: [ip], conditions: { ready: true }, nodeName: 'node-1', zone: 'zone-a' })), { service });

async function publish(upserts: readonly EndpointSlice[], deletes: readonly string[] = [], service = 'web'): Promise<number> {
  const body = { type: 'SliceChanged.v1', cluster: CLUSTER, namespace: 'default', service, upserts, deletes, kubeSeq: { from: 1, to: 1, nodesTo: 1 }, reconcileID: `r${msgId}` };
  const r = await publishAcked(f.js, slicesSubject({ cluster: CLUSTER, partition: 0, namespace: 'default', service }, f.names), body, { msgID: `${CLUSTER}/outbox/${f.id}/${++msgId}` });
  return r.seq;
}

async function until(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const simSlice = (name: string): KubeObj | undefined => sim.store.get('EndpointSlice', 'default', name);
const ipsOf = (o: KubeObj | undefined): string[] => ((o?.['endpoints'] ?? []) as { addresses: string[] }[]).flatMap((e) => e.addresses);

function foreignSlice(name: string, manager: string | null): KubeObj {
  const labels: Record<string, string> = { 'kubernetes.io/service-name': 'web', ...(manager === null ? {} : { [LABEL_MANAGED_BY]: manager }) };
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: 'default', labels },
    addressType: 'IPv4', endpoints: [{ addresses: ['10.9.9.9'], conditions: { ready: true } }], ports: [{ port: 80 }],
  } as KubeObj;
}

describe('publisher (write mode) against cluster-sim', () => {
  it('creates the slices of SLICES in the API, with our labels and none of our stored uid, and records the sequence', async () => {
    const h = await start();
    const seq = await publish([slice('web-1'), slice('web-2', ['10.0.0.2'])]);
    await until(() => h.lastApplied() >= seq, 'the message to be applied');
    const live = simSlice('web-1');
    expect(live?.metadata.labels?.[LABEL_MANAGED_BY]).toBe('endpointslice-controller.k8s.io');
    expect(live?.metadata.uid).not.toBe('uid-slice-web-1');
    expect(ipsOf(simSlice('web-2'))).toEqual(['10.0.0.2']);
    expect(h.counts()).toMatchObject({ created: 2 });
  });

  it('an update that meets a resourceVersion someone else just bumped is retried and wins', async () => {
    const api = countingApi();
    const h = await start(config, api);
    await publish([slice('web-1')]);
    await until(() => simSlice('web-1') !== undefined, 'the create');
    api.beforeReplace = () => {
      const o = simSlice('web-1') as KubeObj;
      sim.store.update('EndpointSlice', { ...o, metadata: { ...o.metadata, annotations: { touched: 'by-someone-else' } } });
    };
    const seq = await publish([slice('web-1', ['10.0.0.7'])]);
    await until(() => h.lastApplied() >= seq, 'the update');
    expect(ipsOf(simSlice('web-1'))).toEqual(['10.0.0.7']);
    expect(api.writes).toEqual(['create web-1', 'replace web-1', 'replace web-1']);
    expect(h.counts()).toMatchObject({ created: 1, updated: 1 });
    const text = await h.metrics.registry.getSingleMetricAsString('slicemesh_publisher_conflicts_retried_total');
    expect(text).toMatch(/decision="update".* 1$/m);
  });

  it('a foreign slice with the same name is left untouched by upserts and deletes; deletes remove only ours', async () => {
    const foreign = sim.store.create('EndpointSlice', foreignSlice('web-f', 'other-controller.example.com'));
    const unlabelled = sim.store.create('EndpointSlice', foreignSlice('web-u', null));
    const api = countingApi();
    const h = await start(config, api);
    await publish([slice('web-a'), slice('web-f'), slice('web-u')]);
    const seq = await publish([], ['web-a', 'web-f', 'web-u']);
    await until(() => h.lastApplied() >= seq, 'both messages');
    expect(simSlice('web-a')).toBeUndefined();
    expect(simSlice('web-f')).toEqual(foreign);
    expect(simSlice('web-u')).toEqual(unlabelled);
    expect(api.writes.filter((w) => !w.endsWith('web-a'))).toEqual([]);
  });

  it('deletes of ours in a later batch remove them', async () => {
    const h = await start();
    await publish([slice('web-1'), slice('web-2')]);
    await until(() => simSlice('web-2') !== undefined, 'the creates');
    const seq = await publish([], ['web-1']);
    await until(() => h.lastApplied() >= seq, 'the delete');
    expect(simSlice('web-1')).toBeUndefined();
    expect(simSlice('web-2')).toBeDefined();
    expect(h.counts()).toMatchObject({ created: 2, deleted: 1 });
  });

  it('a restart resumes after the recorded sequence, and a replay of the whole stream writes nothing', async () => {
    const first = await start();
    await publish([slice('web-1'), slice('web-2')]);
    await publish([slice('web-1', ['10.0.0.5'])], ['web-2']);
    const seq = await publish([slice('web-3', ['10.0.0.3'], 'api')], [], 'api');
    await until(() => first.lastApplied() >= seq, 'the first run');
    expect(sim.store.list('EndpointSlice').map((s) => s.metadata.name).sort()).toEqual(['web-1', 'web-3']);
    expect(ipsOf(simSlice('web-1'))).toEqual(['10.0.0.5']);
    const before = sim.store.list('EndpointSlice');
    await stop(first);

    const again = countingApi();
    const second = await start(config, again);
    expect(second.lastApplied()).toBe(seq);
    expect(again.writes).toEqual([]);
    await stop(second);

    // A fresh schema: no recorded sequence, so the whole stream is delivered again.
    const other = await withTestDb();
    try {
      const replay = countingApi();
      const third = await start({ ...config, dbSchema: other.schema }, replay);
      expect(third.lastApplied()).toBe(seq);
      expect(replay.writes).toEqual([]);
      // The whole stream is one backlog, coalesced: only the final state of each slice is decided.
      expect(third.counts()).toEqual({ unchanged: 2, gone: 1 });
      await stop(third);
    } finally {
      await other.close();
    }
    expect(sim.store.list('EndpointSlice')).toEqual(before);
  });

  it('a backlog published while no publisher ran is applied as its final state only: no intermediate writes', async () => {
    await publish([slice('web-1', ['10.0.0.1']), slice('web-2')]);
    await publish([slice('web-1', ['10.0.0.2'])], ['web-2']);
    const seq = await publish([slice('web-1', ['10.0.0.3'])]);
    const api = countingApi();
    const h = await start(config, api);
    expect(h.lastApplied()).toBe(seq);
    expect(api.writes).toEqual(['create web-1']);
    expect(ipsOf(simSlice('web-1'))).toEqual(['10.0.0.3']);
  });

  it('a slice the API refuses (422) is counted and left; the rest of the batch and the offset move on', async () => {
    const api = countingApi();
    const h = await start(config, api);
    // 101 ports: valid for our model, over the API's limit of 100.
    const tooMany = { ...slice('web-bad'), ports: Array.from({ length: 101 }, (_, i) => ({ name: `p${i}`, port: 1000 + i, protocol: 'TCP' as const })) };
    const seq = await publish([tooMany, slice('web-ok')]);
    await until(() => h.lastApplied() >= seq, 'the batch');
    expect(simSlice('web-bad')).toBeUndefined();
    expect(simSlice('web-ok')).toBeDefined();
    expect(h.counts()).toMatchObject({ invalid: 1, created: 1 });
    expect(api.writes.filter((w) => w === 'create web-bad')).toHaveLength(1);
  });

  it('an API server that is down holds the offset back and makes the publisher not ready; the slices arrive once it is back', async () => {
    const proxy = await startApiProxy(sim.url);
    try {
      const h = await start(config, countingApi(proxy.url));
      await proxy.down();
      const seq = await publish([slice('web-1')]);
      await until(() => !h.readiness().ready, 'readiness to report the failing API');
      expect(h.readiness()).toMatchObject({ ready: false, reason: expect.stringContaining('API requests failing') });
      expect(h.lastApplied()).toBeLessThan(seq);
      await proxy.resume();
      await until(() => h.lastApplied() >= seq, 'the write after the API came back');
      expect(simSlice('web-1')).toBeDefined();
      expect(h.readiness()).toEqual({ ready: true });
    } finally {
      await proxy.close();
    }
  });

  it('holds KUBE_API_QPS / KUBE_API_BURST: n requests at qps 20, burst 5 take ≥ (n - 5) / 20 s', async () => {
    const api = countingApi();
    const h = await start({ ...config, kubeApiQps: 20, kubeApiBurst: 5 }, api);
    // 40 slices of one Service: one list of the namespace, then 40 creates.
    const slices = Array.from({ length: 40 }, (_, i) => slice(`web-${i}`, [`10.0.1.${i + 1}`]));
    const t0 = performance.now();
    const seq = await publish(slices);
    await until(() => h.lastApplied() >= seq, 'all 40 slices');
    const seconds = (performance.now() - t0) / 1000;
    expect(api.requests).toBe(41);
    expect(seconds).toBeGreaterThanOrEqual((api.requests - 5) / 20 - 0.05);
    expect(sim.store.list('EndpointSlice')).toHaveLength(40);
    const waited = await h.metrics.registry.getSingleMetricAsString('slicemesh_publisher_rate_limit_wait_seconds_total');
    expect(Number(/ ([\d.e+-]+)$/m.exec(waited)?.[1])).toBeGreaterThan(1);
    process.stdout.write(`publisher: 40 slices (${api.requests} requests) at qps 20 burst 5 in ${seconds.toFixed(2)} s = ${(40 / seconds).toFixed(1)} slices/s\n`);
  });
});

describe('publisher (shadow mode)', () => {
  it('reads the API and counts what it would do, and writes nothing', async () => {
    sim.store.create('EndpointSlice', foreignSlice('web-f', 'other-controller.example.com'));
    const api = countingApi();
    const h = await start({ ...config, mode: 'shadow' }, api);
    await publish([slice('web-1'), slice('web-f')]);
    const seq = await publish([], ['web-9']);
    await until(() => h.lastApplied() >= seq, 'the messages');
    expect(api.writes).toEqual([]);
    expect(sim.store.list('EndpointSlice').map((s) => s.metadata.name)).toEqual(['web-f']);
    expect(h.counts()).toMatchObject({ 'would-create': 1, foreign: 1, gone: 1 });
    expect(await h.metrics.registry.getSingleMetricAsString('slicemesh_publisher_would_writes_total')).toMatch(/verb="create".* 1$/m);
  });

  it('records its sequence apart from write mode: switching to write applies the stream from the start', async () => {
    const shadow = await start({ ...config, mode: 'shadow' });
    const seq = await publish([slice('web-1')]);
    await until(() => shadow.lastApplied() >= seq, 'shadow');
    await stop(shadow);
    const write = await start();
    expect(write.lastApplied()).toBe(seq);
    expect(simSlice('web-1')).toBeDefined();
  });
});

describe('publisher (write mode) reading the hinted bucket', () => {
  const hinted = (name: string, zone: string, ips: readonly string[] = ['10.0.0.1']): EndpointSlice => {
    const s = slice(name, ips);
    return { ...s, endpoints: s.endpoints.map((e) => ({ ...e, hints: { forZones: [{ name: zone }] } })) };
  };
  const key = (name: string) => hintedKey({ cluster: CLUSTER, namespace: 'default', service: 'web', slice: name });
  const zonesOf = (o: KubeObj | undefined) => ((o?.['endpoints'] ?? []) as { hints?: { forZones?: { name: string }[] } }[]).map((e) => e.hints?.forZones?.map((z) => z.name));

  it('writes each entry with its hints, rewrites it when only the hints change, deletes it on a delete marker, and a restart writes nothing', async () => {
    const c = { ...config, source: 'hinted' as const };
    const kv = await ensureKv(f.nc, c.hintedBucket);
    const api = countingApi();
    const h = await start(c, api);
    await kvPutJson(kv, key('web-1'), hinted('web-1', 'zone-a'));
    await kvPutJson(kv, key('web-2'), hinted('web-2', 'zone-a', ['10.0.0.2']));
    await until(() => simSlice('web-2') !== undefined && simSlice('web-1') !== undefined, 'the creates');
    expect(zonesOf(simSlice('web-1'))).toEqual([['zone-a']]);
    await kvPutJson(kv, key('web-1'), hinted('web-1', 'zone-b'));
    await until(() => zonesOf(simSlice('web-1'))[0]?.[0] === 'zone-b', 'the hints update');
    await kvDelete(kv, key('web-2'));
    await until(() => simSlice('web-2') === undefined, 'the delete');
    expect(api.writes).toEqual(['create web-1', 'create web-2', 'replace web-1', 'delete web-2']);
    await stop(h);
    // Read after the stop: the delete's sequence may be recorded just after the API saw it.
    const applied = h.lastApplied();

    const again = countingApi();
    const second = await start(c, again);
    expect([second.lastApplied(), again.writes]).toEqual([applied, []]);
  });

  it('an entry of another cluster or a value that does not match its key is skipped, the rest applied', async () => {
    const c = { ...config, source: 'hinted' as const };
    const kv = await ensureKv(f.nc, c.hintedBucket);
    const h = await start(c);
    await kvPutJson(kv, hintedKey({ cluster: 'other', namespace: 'default', service: 'web', slice: 'web-x' }), hinted('web-x', 'zone-a'));
    await kvPutJson(kv, key('web-y'), hinted('web-z', 'zone-a'));
    await kvPutJson(kv, key('web-1'), hinted('web-1', 'zone-a'));
    await until(() => simSlice('web-1') !== undefined, 'the valid entry');
    expect([simSlice('web-x'), simSlice('web-y'), simSlice('web-z')]).toEqual([undefined, undefined, undefined]);
    await until(() => (h.counts().created ?? 0) === 1, 'the count');
    const text = await h.metrics.registry.getSingleMetricAsString('slicemesh_publisher_messages_total');
    expect(text).toMatch(/result="rejected".* 1$/m);
  });
});
