// The agent's health answers for real: the health-check node port of a Local LoadBalancer
// Service served inside the node's namespace and asked over HTTP from an outside client
// namespace (D.9.1, D.9.2), and the agent's own /healthz, served by the service host, turning
// 503 while its syncs fail and 200 again once one succeeds (D.9.3). Skips, saying why, where
// network namespaces cannot be made.

import { execFile, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Endpoint, Service } from '@slicemesh/model';
import type { KV } from '@slicemesh/nats';
import { ensureKv, kvPutJson, svcKey, viewKey } from '@slicemesh/nats';
import type { Host } from '@slicemesh/runtime';
import { hostService } from '@slicemesh/runtime';
import { makeService } from '@slicemesh/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JetStreamFixture } from '../../../libs/nats/testing/jetstream.ts';
import { withJetStream } from '../../../libs/nats/testing/jetstream.ts';
import { parseProxyAgentConfig } from './config.ts';
import { proxyAgentService } from './service.ts';
import { NetnsLab, POD_RANGE, labUnavailableReason } from './test-lab.ts';
import { endpoint, slice } from './test-support.ts';

const run = promisify(execFile);
const CLUSTER = 'c1';
const ZONE = 'zone-a';
const BOUND_MS = 5000;
// A port per run, so parallel runs on one machine do not collide.
const HC_PORT = 32100 + Math.floor(Math.random() * 500);

const unavailable = labUnavailableReason();

interface HttpAnswer {
  readonly status?: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly error?: string;
}

const GET_JS = `
fetch(process.argv[1], { signal: AbortSignal.timeout(2000) })
  .then(async (r) => console.log(JSON.stringify({ status: r.status, headers: Object.fromEntries(r.headers), body: await r.text() })))
  .catch((e) => console.log(JSON.stringify({ error: (e.cause && e.cause.code) || e.name })));
`;

/** One GET from inside namespace `ns` (async: the server answering may live in this process). */
async function getIn(ns: string, url: string): Promise<HttpAnswer> {
  const r = await run('ip', ['netns', 'exec', ns, process.execPath, '-e', GET_JS, url]);
  return JSON.parse(r.stdout) as HttpAnswer;
}

/** Polls `probe` until `done` holds; fails after BOUND_MS with the last answer. */
async function until<T>(probe: () => Promise<T>, done: (t: T) => boolean): Promise<T> {
  const start = Date.now();
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() - start > BOUND_MS) throw new Error(`not within ${BOUND_MS} ms; last ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
    last = await probe();
  }
  return last;
}

function lbService(policy: 'Local' | 'Cluster'): Service {
  return makeService('lb', {
    clusterIP: '10.96.0.40',
    ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }],
    spec: { type: 'LoadBalancer', externalTrafficPolicy: policy, healthCheckNodePort: HC_PORT },
  });
}

describe(`health-check node ports and /healthz on the real kernel${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let js: JetStreamFixture | undefined;
  let kv: { svc: KV; views: KV } | undefined;
  let lab: NetnsLab | undefined;
  let host: Host | undefined;
  const need = () => {
    if (!lab || !kv || !host) throw new Error('setup failed');
    return { lab, kv, host };
  };

  const putService = (k: { svc: KV }, s: Service) => kvPutJson(k.svc, svcKey({ cluster: CLUSTER, namespace: 'default', name: s.metadata.name }), s);
  const putEndpoints = (k: { views: KV }, eps: readonly Endpoint[]) =>
    kvPutJson(k.views, viewKey({ cluster: CLUSTER, zone: ZONE, namespace: 'default', service: 'lb', slice: 'lb-1' }), slice('lb-1', 'lb', eps));

  beforeAll(async () => {
    if (unavailable) return;
    js = await withJetStream();
    kv = { svc: await ensureKv(js.nc, js.names.svc, { storage: 'memory' }), views: await ensureKv(js.nc, js.names.views, { storage: 'memory' }) };
    lab = new NetnsLab(`hc13${randomUUID().slice(0, 6)}`, [{ name: 'node-a1', zone: ZONE, pods: 2 }]);
    await putService(kv, lbService('Local'));
    // Two ready pods here, one on another node: the node has 2 local endpoints.
    await putEndpoints(kv, [...lab.pods.map((p) => endpoint(p.ip, { node: 'node-a1', zone: ZONE })), endpoint('10.244.9.2', { node: 'node-b1', zone: ZONE })]);
    const node = lab.node('node-a1');
    const config = parseProxyAgentConfig([], {
      NODE_NAME: node.name, NODE_ZONE: ZONE, CLUSTER, BACKEND: 'iptables', NETNS: node.ns, NODE_IPS: node.ip, POD_CIDR: POD_RANGE,
      MIN_SYNC_PERIOD: '100ms', SYNC_PERIOD: '10s', NATS_URL: js.url, SVC_BUCKET: js.names.svc, VIEWS_BUCKET: js.names.views, HEALTH_PORT: '0', LOG_LEVEL: 'error',
    });
    host = hostService(proxyAgentService, config, { host: '127.0.0.1' });
    await host.ready;
  });

  afterAll(async () => {
    await host?.stop();
    lab?.destroy();
    await js?.cleanup();
  });

  const test = (name: string, fn: () => Promise<void>) =>
    it(name, async (ctx) => {
      if (unavailable) ctx.skip(unavailable);
      await fn();
    });

  test('D.9.2 an outside client asking the node IP on the health-check port gets 200 with the local endpoint count', async () => {
    const { lab } = need();
    const a = await until(() => getIn(lab.client, `http://${lab.node('node-a1').ip}:${HC_PORT}/healthz`), (x) => x.status !== undefined);
    expect(a.status).toBe(200);
    expect(a.headers).toMatchObject({ 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'x-load-balancing-endpoint-weight': '2' });
    expect(JSON.parse(a.body ?? '')).toEqual({ service: { namespace: 'default', name: 'lb' }, localEndpoints: 2, serviceProxyHealthy: true });
  });

  test('D.9.2 when no local endpoint is ready the port answers 503 (the remote endpoint does not count)', async () => {
    const { lab, kv } = need();
    await putEndpoints(kv, [...lab.pods.map((p) => endpoint(p.ip, { node: 'node-a1', zone: ZONE, ready: false })), endpoint('10.244.9.2', { node: 'node-b1', zone: ZONE })]);
    const a = await until(() => getIn(lab.client, `http://${lab.node('node-a1').ip}:${HC_PORT}/`), (x) => x.status === 503);
    expect(a.headers?.['x-load-balancing-endpoint-weight']).toBe('0');
    expect(JSON.parse(a.body ?? '')).toMatchObject({ localEndpoints: 0, serviceProxyHealthy: true });
  });

  test('D.9.1 the server closes when the Service stops using Local traffic policy, and opens again when it returns', async () => {
    const { lab, kv, host } = need();
    await putService(kv, lbService('Cluster'));
    expect((await until(() => getIn(lab.client, `http://${lab.node('node-a1').ip}:${HC_PORT}/`), (x) => x.error !== undefined)).error).toBe('ECONNREFUSED');
    const gauge = async () => (await host.metrics.registry.getSingleMetric('slicemesh_service_health_check_servers')?.get())?.values[0]?.value;
    expect(await gauge()).toBe(0);
    await putService(kv, lbService('Local'));
    await until(() => getIn(lab.client, `http://${lab.node('node-a1').ip}:${HC_PORT}/`), (x) => x.status === 503);
    expect(await gauge()).toBe(1);
  });

  test("D.9.3 /healthz of an agent whose syncs fail turns 503 after HEALTHZ_TIMEOUT, and 200 after the next good sync", async () => {
    const { kv } = need();
    if (!js) throw new Error('setup failed');
    // An agent of its own, programming a namespace the test takes away and gives back.
    const ns = `hz13-${randomUUID().slice(0, 6)}`;
    spawnSync('ip', ['netns', 'add', ns]);
    const config = parseProxyAgentConfig([], {
      NODE_NAME: 'node-z', NODE_ZONE: ZONE, CLUSTER, BACKEND: 'iptables', NETNS: ns, HEALTH_CHECK_SERVERS: 'off', MIN_SYNC_PERIOD: '100ms', SYNC_PERIOD: '1s',
      HEALTHZ_TIMEOUT: '1s', NATS_URL: js.url, SVC_BUCKET: js.names.svc, VIEWS_BUCKET: js.names.views, HEALTH_PORT: '0', LOG_LEVEL: 'silent',
    });
    const agent = hostService(proxyAgentService, config, { host: '127.0.0.1' });
    try {
      await agent.ready;
      const healthz = async () => (await fetch(`http://127.0.0.1:${agent.healthPort()}/healthz`)).status;
      expect(await healthz()).toBe(200);
      spawnSync('ip', ['netns', 'delete', ns]);
      await putService(kv, { ...lbService('Local'), metadata: { ...lbService('Local').metadata, labels: { touched: '1' } }, spec: { ...lbService('Local').spec, sessionAffinity: 'ClientIP' } });
      const brokeAt = Date.now();
      await until(healthz, (s) => s === 503);
      expect(Date.now() - brokeAt).toBeGreaterThanOrEqual(900);
      spawnSync('ip', ['netns', 'add', ns]);
      await until(healthz, (s) => s === 200);
    } finally {
      await agent.stop();
      spawnSync('ip', ['netns', 'delete', ns]);
    }
  });
});
