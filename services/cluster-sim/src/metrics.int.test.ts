// Probes and Prometheus metrics on the simulator's API port, as a kube-apiserver serves them.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiServer } from './http/server.ts';
import { silentLog } from './log.ts';
import { EMPTY_SCENARIO, startClusterSim } from './start.ts';
import type { ClusterSim } from './start.ts';
import { realClock } from './time/clock.ts';

let sim: ClusterSim;

beforeAll(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO, bookmarkIntervalMs: 0 });
});
afterAll(async () => {
  await sim.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${sim.url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The value of the one sample of `name` whose labels include all of `labels` (undefined if none). */
function sample(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m?.[1] !== name) continue;
    const have = (m[2] ?? '').split(',');
    if (want.every((w) => have.includes(w))) return Number(m[3]);
  }
  return undefined;
}

describe('probes', () => {
  const cases = [
    { name: '/healthz answers 200 ok', path: '/healthz' },
    { name: '/livez answers 200 ok', path: '/livez' },
    { name: '/readyz answers 200 ok once the scenario is built', path: '/readyz' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const res = await fetch(`${sim.url}${tc.path}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('ok');
    });
  }

  it('/readyz answers 503 while the server is not ready, /healthz stays 200', async () => {
    const api = createApiServer({ store: sim.store, clock: realClock(), log: silentLog, ready: () => false });
    await new Promise<void>((resolve) => api.server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      api.server.closeAllConnections();
      await new Promise<void>((resolve) => api.server.close(() => resolve()));
    }
  });
});

describe('/metrics', () => {
  it('serves Prometheus text with the simulator gauges and the component label', async () => {
    const res = await fetch(`${sim.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('# TYPE slicemesh_sim_requests_total counter');
    expect(sample(text, 'slicemesh_sim_objects', { kind: 'Namespace', component: 'cluster-sim' })).toBe(4);
    expect(sample(text, 'slicemesh_sim_objects', { kind: 'Pod' })).toBe(0);
    expect(sample(text, 'slicemesh_sim_resource_version')).toBe(sim.store.resourceVersion);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('counts a list request by verb, resource and code', async () => {
    const labels = { verb: 'list', resource: 'pods', code: '200' };
    const before = sample(await scrape(), 'slicemesh_sim_requests_total', labels) ?? 0;
    expect((await fetch(`${sim.url}/api/v1/pods`)).status).toBe(200);
    expect(sample(await scrape(), 'slicemesh_sim_requests_total', labels)).toBe(before + 1);
  });

  it('counts watch events, and the 410 of a watch from a compacted resourceVersion', async () => {
    const rv = sim.store.resourceVersion;
    const watch = await fetch(`${sim.url}/api/v1/namespaces?watch=1&timeoutSeconds=1`);
    await watch.text();
    let text = await scrape();
    expect(sample(text, 'slicemesh_sim_watch_events_total', { resource: 'namespaces', type: 'ADDED' })).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'slicemesh_sim_requests_total', { verb: 'watch', resource: 'namespaces', code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'slicemesh_sim_open_watches')).toBe(0);

    sim.store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'metrics-test' } });
    sim.store.compact();
    expect((await fetch(`${sim.url}/api/v1/namespaces?watch=1&resourceVersion=${rv}`)).status).toBe(410);
    text = await scrape();
    expect(sample(text, 'slicemesh_sim_gone_total', { source: 'response' })).toBe(1);
    expect(sample(text, 'slicemesh_sim_resource_version')).toBe(rv + 1);
  });

  it('counts scenario actions by action', async () => {
    sim.driver.apply({ action: 'churn', podsPerSecond: 0 });
    expect(sample(await scrape(), 'slicemesh_sim_scenario_actions_total', { action: 'churn' })).toBe(1);
  });
});
