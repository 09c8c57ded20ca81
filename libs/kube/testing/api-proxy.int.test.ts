// The proxy is a test fake: test it (habit 10).
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { startApiProxy } from './api-proxy.ts';
import type { ApiProxy } from './api-proxy.ts';

let sim: ClusterSim;
let proxy: ApiProxy;
beforeEach(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  proxy = await startApiProxy(sim.url);
  sim.store.create('Node', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
});
afterEach(async () => {
  await proxy.close();
  await sim.close();
});

/** GETs `path`; resolves with status and body (for a watch: the first `lines` lines). */
function get(path: string, lines = 0): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${proxy.url}${path}`, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (lines > 0 && body.split('\n').length > lines) {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, body });
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('startApiProxy', () => {
  it('passes lists through unchanged by default, and rewrites every item with mutate', async () => {
    const plain = JSON.parse((await get('/api/v1/nodes')).body) as { items: { metadata: { name: string } }[] };
    expect(plain.items.map((i) => i.metadata.name)).toEqual(['n1']);
    proxy.mutate = (o) => ({ ...o, metadata: { name: 'bad name' } });
    const rewritten = JSON.parse((await get('/api/v1/nodes')).body) as { items: { metadata: { name: string } }[] };
    expect(rewritten.items.map((i) => i.metadata.name)).toEqual(['bad name']);
    expect(proxy.lists).toEqual(['/api/v1/nodes', '/api/v1/nodes']);
  });

  it('rewrites the objects of watch events line by line', async () => {
    proxy.mutate = () => 'not an object';
    const { body } = await get('/api/v1/nodes?watch=true', 1);
    expect(JSON.parse(body.split('\n')[0] ?? '')).toEqual({ type: 'ADDED', object: 'not an object' });
    expect(proxy.watches).toEqual(['/api/v1/nodes?watch=true']);
  });

  it('down() refuses connections until resume() on the same port', async () => {
    const port = proxy.port;
    await proxy.down();
    await expect(get('/api/v1/nodes')).rejects.toThrow(/ECONNREFUSED/);
    await proxy.resume();
    expect(proxy.port).toBe(port);
    expect((await get('/api/v1/nodes')).status).toBe(200);
  });
});
