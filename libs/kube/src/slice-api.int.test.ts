// The EndpointSlice adapter against cluster-sim over real HTTP: the answers the publisher
// depends on (404 as undefined, 409 AlreadyExists/Conflict, 422 with the API's message,
// delete preconditions), and a proxy refusing connections for statusCode 0.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { startApiProxy } from '../testing/api-proxy.ts';
import { buildKubeConfig } from './kube-config.ts';
import type { EndpointSliceApi, KubeJson } from './slice-api.ts';
import { KubeWriteError, endpointSliceApi } from './slice-api.ts';

let sim: ClusterSim;
let api: EndpointSliceApi;
beforeEach(async () => {
  sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  api = endpointSliceApi(buildKubeConfig({ type: 'server', url: sim.url }), { timeoutMs: 5000 });
});
afterEach(async () => {
  await sim.close();
});

const body = (name: string, ip = '10.0.0.1'): KubeJson => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  ports: [{ port: 80 }],
});
const meta = (o: KubeJson): Record<string, string> => o['metadata'] as Record<string, string>;
async function failure(p: Promise<unknown>): Promise<KubeWriteError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof KubeWriteError) return err;
    throw err;
  }
  throw new Error('expected a KubeWriteError');
}

describe('endpointSliceApi over cluster-sim', () => {
  it('get of a missing slice is undefined; create stores it with the API defaults', async () => {
    expect(await api.get('default', 'a')).toBeUndefined();
    const created = await api.create(body('a'));
    expect(meta(created)['uid']).toBeTruthy();
    const live = await api.get('default', 'a');
    expect(live?.['ports']).toEqual([{ name: '', port: 80, protocol: 'TCP' }]);
  });

  it('create of a taken name: 409 AlreadyExists', async () => {
    await api.create(body('a'));
    expect(await failure(api.create(body('a')))).toMatchObject({ statusCode: 409, reason: 'AlreadyExists', verb: 'create' });
  });

  it('replace with a stale resourceVersion: 409 Conflict; with the current one it succeeds; of a missing slice: 404', async () => {
    const created = await api.create(body('a'));
    const rv = meta(created)['resourceVersion'];
    const updated = await api.replace({ ...body('a', '10.0.0.2'), metadata: { ...meta(body('a')), resourceVersion: rv } });
    expect(meta(updated)['resourceVersion']).not.toBe(rv);
    expect(await failure(api.replace({ ...body('a', '10.0.0.3'), metadata: { ...meta(body('a')), resourceVersion: rv } }))).toMatchObject({ statusCode: 409, reason: 'Conflict' });
    expect(await failure(api.replace({ ...body('b'), metadata: { ...meta(body('b')), resourceVersion: '1' } }))).toMatchObject({ statusCode: 404 });
  });

  it('an invalid slice: 422 Invalid with the field in the message', async () => {
    const err = await failure(api.create({ ...body('a'), endpoints: [{ addresses: ['not-an-ip'] }] }));
    expect(err).toMatchObject({ statusCode: 422, reason: 'Invalid' });
    expect(err.apiMessage).toContain('endpoints[0].addresses[0]');
  });

  it('delete honours uid and resourceVersion preconditions; a second delete is 404', async () => {
    const created = await api.create(body('a'));
    const m = meta(created);
    expect(await failure(api.delete('default', 'a', { uid: m['uid'] ?? '', resourceVersion: '1' }))).toMatchObject({ statusCode: 409 });
    await api.delete('default', 'a', { uid: m['uid'] ?? '', resourceVersion: m['resourceVersion'] ?? '' });
    expect(await api.get('default', 'a')).toBeUndefined();
    expect(await failure(api.delete('default', 'a', { uid: m['uid'] ?? '', resourceVersion: m['resourceVersion'] ?? '' }))).toMatchObject({ statusCode: 404 });
  });

  it('lists a namespace page by page, every manager included', async () => {
    for (const n of ['a', 'b', 'c']) await api.create(body(n));
    await api.create({ ...body('d'), metadata: { ...meta(body('d')), labels: { 'endpointslice.kubernetes.io/managed-by': 'other' } } });
    const first = await api.list('default', 3, '');
    expect(first.items).toHaveLength(3);
    expect(first.continue).not.toBe('');
    const second = await api.list('default', 3, first.continue);
    expect([...first.items, ...second.items].map((o) => meta(o)['name']).sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(second.continue).toBe('');
    expect((await api.list('kube-system', 10, '')).items).toEqual([]);
  });

  it('no server: statusCode 0', async () => {
    const proxy = await startApiProxy(sim.url);
    await proxy.down();
    const down = endpointSliceApi(buildKubeConfig({ type: 'server', url: proxy.url }), { timeoutMs: 2000 });
    expect(await failure(down.get('default', 'a'))).toMatchObject({ statusCode: 0 });
    await proxy.close();
  });
});
