// The agent follows its Node through real NATS: the Node's messages go into a real KUBE stream
// (as the watcher publishes them), the specs and per-zone views into real KV buckets, and the
// dry-run backend writes the rules to a file. A relabel of the Node moves the agent to the other
// zone's endpoints without a restart; the time from the Node message to the new rules file is
// measured and printed.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node } from '@slicemesh/model';
import type { KV } from '@slicemesh/nats';
import { DELETED, UPSERTED, changeEvent, ensureKv, ensureStreams, kubeNodeSubject, kvPutJson, publishAcked, svcKey, viewKey } from '@slicemesh/nats';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { createLogger, createMetrics } from '@slicemesh/runtime';
import { makeNode } from '@slicemesh/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import { parseProxyAgentConfig } from './config.ts';
import type { ProxyAgentHandle } from './proxy-agent.ts';
import { startProxyAgent } from './proxy-agent.ts';
import { endpoint, service, slice } from './test-support.ts';

const CLUSTER = 'c1';
const NODE = 'worker-1';
/** One endpoint per zone; each zone's view holds its own (as the hints service computes it for hinted slices). */
const EP: Readonly<Record<string, string>> = { 'zone-a': '10.244.1.2', 'zone-b': '10.244.2.2' };
/** A move must land well within this (MIN_SYNC_PERIOD is 0 here). */
const BOUND_MS = 5000;

let js: JetStreamFixture;
let dir: string;
let kv: { svc: KV; views: KV };
let agent: ProxyAgentHandle | undefined;
let version = 1;

beforeEach(async () => {
  js = await withJetStream();
  await ensureStreams(js.jsm, js.names, { storage: 'memory' });
  kv = { svc: await ensureKv(js.nc, js.names.svc, { storage: 'memory' }), views: await ensureKv(js.nc, js.names.views, { storage: 'memory' }) };
  dir = await mkdtemp(join(tmpdir(), 'slicemesh-zone-move-'));
  await kvPutJson(kv.svc, svcKey({ cluster: CLUSTER, namespace: 'default', name: 'web' }), service('web', '10.96.0.10'));
  const hinted = (zone: string) => endpoint(EP[zone] ?? '', { zone, hints: [zone] });
  for (const zone of ['zone-a', 'zone-b']) {
    await kvPutJson(kv.views, viewKey({ cluster: CLUSTER, zone, namespace: 'default', service: 'web', slice: 'web-1' }), slice('web-1', 'web', [hinted(zone)]));
  }
  await kvPutJson(kv.views, viewKey({ cluster: CLUSTER, zone: UNZONED_VIEW, namespace: 'default', service: 'web', slice: 'web-1' }), slice('web-1', 'web', [hinted('zone-a'), hinted('zone-b')]));
});

afterEach(async () => {
  await agent?.close();
  agent = undefined;
  await js.cleanup();
  await rm(dir, { recursive: true, force: true });
});

/** Publishes the Node to KUBE as the watcher does (subject, envelope, message id). */
async function publishNode(zone: string | undefined, o: { readonly deleted?: boolean } = {}): Promise<void> {
  const base = makeNode(NODE, zone === undefined ? {} : { zone });
  const node: Node = { ...base, metadata: { ...base.metadata, resourceVersion: String(++version) } };
  const event = changeEvent(o.deleted ? DELETED : UPSERTED, CLUSTER, node, new Date().toISOString());
  await publishAcked(js.js, kubeNodeSubject({ cluster: CLUSTER, name: NODE }, js.names), event, { msgID: `${CLUSTER}/${node.metadata.uid}/${version}${o.deleted ? '/deleted' : ''}` });
}

function start(env: Record<string, string> = {}): { agent: ProxyAgentHandle; file: string } {
  const file = join(dir, `${NODE}.rules`);
  const config = parseProxyAgentConfig([], {
    NODE_NAME: NODE, CLUSTER, BACKEND: 'dry-run', DRY_RUN_FILE: file, MIN_SYNC_PERIOD: '0s', SYNC_PERIOD: '30s',
    KUBE_STREAM: js.names.kube, SUBJECT_PREFIX: js.names.prefix, SVC_BUCKET: js.names.svc, VIEWS_BUCKET: js.names.views, ...env,
  });
  agent = startProxyAgent(config, { nc: js.nc, log: createLogger({ service: 'proxy-agent', level: 'warn' }), metrics: createMetrics('proxy-agent-int') });
  return { agent, file };
}

/** The endpoints the rules file sends the ClusterIP's traffic to, from its DNAT rules. */
async function endpointsIn(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return [...new Set([...text.matchAll(/--to-destination (\d+\.\d+\.\d+\.\d+):8080/g)].map((m) => m[1] ?? ''))].sort();
}

/** Polls the rules file until it holds exactly `want`; returns the time it took. */
async function rulesBecome(file: string, want: readonly string[], since: number): Promise<number> {
  for (;;) {
    const have = await endpointsIn(file);
    if (JSON.stringify(have) === JSON.stringify(want)) return performance.now() - since;
    if (performance.now() - since > BOUND_MS) throw new Error(`rules hold ${JSON.stringify(have)}, not ${JSON.stringify(want)}, after ${BOUND_MS} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('proxy-agent follows its Node through NATS (real KUBE stream and KV buckets)', () => {
  it('a relabel from zone-a to zone-b switches the dry-run rules to zone-b\'s endpoints without a restart; the time from the Node message to the new rules is measured', async () => {
    await publishNode('zone-a');
    const a = start();
    await a.agent.ready;
    expect(await endpointsIn(a.file)).toEqual([EP['zone-a']]);
    expect(a.agent.filters.views).toBe(`${CLUSTER}.zone-a.>`);
    const times: number[] = [];
    for (const zone of ['zone-b', 'zone-a', 'zone-b', 'zone-a', 'zone-b']) {
      const t0 = performance.now();
      await publishNode(zone);
      times.push(await rulesBecome(a.file, [EP[zone] ?? ''], t0));
      expect(a.agent.isReady()).toBe(true);
      expect(a.agent.zone()).toMatchObject({ zone, source: 'node', node: 'present', view: zone });
    }
    expect(a.agent.lastSync).toMatchObject({ ok: true, mode: 'full' });
    const sorted = [...times].sort((x, y) => x - y);
    process.stdout.write(`zone move, Node message -> new rules file: ${times.map((t) => t.toFixed(1)).join(', ')} ms (median ${sorted[2]?.toFixed(1)} ms, max ${sorted[4]?.toFixed(1)} ms)\n`);
  });

  it('a Node published after the agent started moves it from the unfiltered view to its zone; a delete keeps that zone', async () => {
    const a = start();
    await a.agent.ready;
    expect(a.agent.zone()).toMatchObject({ zone: '', node: 'unpublished', view: UNZONED_VIEW });
    expect(await endpointsIn(a.file)).toEqual([EP['zone-a'], EP['zone-b']]);
    await publishNode('zone-b');
    await rulesBecome(a.file, [EP['zone-b'] ?? ''], performance.now());
    await publishNode('zone-b', { deleted: true });
    const deadline = Date.now() + BOUND_MS;
    while (a.agent.zone().node !== 'deleted' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(a.agent.zone()).toMatchObject({ zone: 'zone-b', node: 'deleted', view: 'zone-b' });
    expect(await endpointsIn(a.file)).toEqual([EP['zone-b']]);
  });

  it('NODE_ZONE overrides: the Node\'s zone-a label is not followed', async () => {
    await publishNode('zone-a');
    const a = start({ NODE_ZONE: 'zone-b' });
    await a.agent.ready;
    expect(await endpointsIn(a.file)).toEqual([EP['zone-b']]);
    expect(a.agent.zone()).toMatchObject({ zone: 'zone-b', source: 'override' });
    expect((await js.jsm.consumers.list(js.names.kube).next()).length).toBe(0);
  });
});
