import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.ts';
import { startHealthServer } from './health-server.ts';
import type { HealthServer, HealthServerOptions } from './health-server.ts';

const open: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function start(overrides: Partial<HealthServerOptions> = {}): Promise<HealthServer> {
  const metrics = createMetrics('test');
  metrics.counter({ name: 'probe_total', help: 'x' }).inc();
  const server = await startHealthServer({ port: 0, host: '127.0.0.1', registry: metrics.registry, ready: () => true, ...overrides });
  open.push(server);
  return server;
}

describe('startHealthServer over HTTP', () => {
  const cases: readonly { name: string; options?: Partial<HealthServerOptions>; method?: string; path: string; status: number; body: string | RegExp; contentType?: RegExp }[] = [
    { name: '/healthz is 200 ok by default', path: '/healthz', status: 200, body: 'ok\n' },
    { name: '/healthz is 503 when not live', options: { live: () => false }, path: '/healthz', status: 503, body: 'not live\n' },
    { name: '/readyz is 200 when ready', path: '/readyz', status: 200, body: 'ok\n' },
    { name: '/readyz is 503 when not ready', options: { ready: () => false }, path: '/readyz', status: 503, body: 'not ready\n' },
    { name: '/readyz gives the reason when one is returned', options: { ready: () => ({ ready: false, reason: 'consumer catching up: 120 pending' }) }, path: '/readyz', status: 503, body: 'consumer catching up: 120 pending\n' },
    { name: '/readyz awaits an async check', options: { ready: async () => Promise.resolve(true) }, path: '/readyz', status: 200, body: 'ok\n' },
    { name: '/readyz treats a throwing check as not ready', options: { ready: () => { throw new Error('db down'); } }, path: '/readyz', status: 503, body: 'readiness check failed: db down\n' },
    { name: '/readyz ignores a query string', path: '/readyz?verbose', status: 200, body: 'ok\n' },
    { name: '/metrics serves Prometheus text', path: '/metrics', status: 200, body: /slicemesh_probe_total\{component="test"\} 1/, contentType: /^text\/plain; version=0\.0\.4/ },
    { name: 'an unknown path is 404', path: '/nope', status: 404, body: 'not found\n' },
    { name: 'POST is 405', method: 'POST', path: '/healthz', status: 405, body: 'method not allowed\n' },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const server = await start(tc.options);
      const res = await fetch(`http://127.0.0.1:${server.port}${tc.path}`, { method: tc.method ?? 'GET' });
      expect(res.status).toBe(tc.status);
      const body = await res.text();
      if (typeof tc.body === 'string') expect(body).toBe(tc.body);
      else expect(body).toMatch(tc.body);
      if (tc.contentType) expect(res.headers.get('content-type')).toMatch(tc.contentType);
    });
  }

  it('binds an ephemeral port for port 0 and stops serving after close', async () => {
    const server = await start();
    expect(server.port).toBeGreaterThan(0);
    await server.close();
    open.splice(open.indexOf(server), 1);
    await expect(fetch(`http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow();
  });

  it('close() does not hang on a keep-alive connection', async () => {
    const server = await start();
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`, { headers: { connection: 'keep-alive' } });
    await res.text();
    open.splice(open.indexOf(server), 1);
    await expect(server.close()).resolves.toBeUndefined();
  });

  it('rejects when the port is taken', async () => {
    const first = await start();
    await expect(startHealthServer({ port: first.port, host: '127.0.0.1', registry: createMetrics('x').registry, ready: () => true })).rejects.toThrow(/EADDRINUSE/);
  });
});
