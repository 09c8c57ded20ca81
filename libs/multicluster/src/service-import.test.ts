import { describe, expect, it } from 'vitest';
import { exportKey } from '@slicemesh/contracts';
import type { ServiceImportSpec } from '@slicemesh/model';
import { ClusterSetState } from './cluster-set-state.ts';
import { mergeExports } from './merge-exports.ts';
import { serviceImportOf } from './service-import.ts';
import { record } from './test-records.ts';

const IP = '243.0.0.9';

describe('serviceImportOf', () => {
  const cases: { name: string; records: Parameters<typeof mergeExports>[0]; ip: string | null; spec: Partial<ServiceImportSpec>; clusters: string[] }[] = [
    {
      name: 'a ClusterSetIP import has its ClusterSet IP, the ports without targetPort, no affinity',
      records: [record('a')],
      ip: IP,
      spec: { ips: [IP], type: 'ClusterSetIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }], sessionAffinity: 'None' },
      clusters: ['a'],
    },
    {
      name: 'a Headless import has no IPs, even when the import holds one',
      records: [record('a', { type: 'Headless' })],
      ip: IP,
      spec: { ips: [], type: 'Headless' },
      clusters: ['a'],
    },
    {
      name: 'no ClusterSet IP makes it Headless',
      records: [record('a')],
      ip: null,
      spec: { ips: [], type: 'Headless' },
      clusters: ['a'],
    },
    {
      name: 'the ports of every export are merged, appProtocol kept',
      records: [record('a'), record('b', { exportedAt: '2026-02-01T00:00:00Z', ports: [{ name: 'grpc', protocol: 'TCP', port: 9090, appProtocol: 'kubernetes.io/h2c' }] })],
      ip: IP,
      spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }, { name: 'grpc', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c', port: 9090 }] },
      clusters: ['a', 'b'],
    },
    {
      name: 'ClientIP affinity of the oldest export, with its timeout',
      records: [record('b', { sessionAffinity: 'ClientIP', sessionAffinityTimeoutSeconds: 600 }), record('a', { exportedAt: '2026-03-01T00:00:00Z' })],
      ip: IP,
      spec: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } },
      clusters: ['b', 'a'],
    },
    {
      name: 'ClientIP affinity without a timeout gets the Kubernetes default',
      records: [record('a', { sessionAffinity: 'ClientIP' })],
      ip: IP,
      spec: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 10_800 } } },
      clusters: ['a'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = serviceImportOf(mergeExports(tc.records), tc.ip);
      expect(got).toMatchObject({ v: 1, namespace: 'shop', name: 'cart', spec: tc.spec, status: { clusters: tc.clusters.map((cluster) => ({ cluster })) } });
      if (got.spec.sessionAffinity === 'None') expect(got.spec).not.toHaveProperty('sessionAffinityConfig');
    });
  }
});

describe('ClusterSetState.serviceImports', () => {
  it('one entry per import, keyed <cluster>.<ns>.<name> by the exported Service, at the import\'s ClusterSet IP', () => {
    const s = new ClusterSetState({ cluster: 'b', clusterSetCidr: '243.0.0.0/16', ttlMs: 10_000 });
    s.adoptClusterSetIp('shop', 'cart', '243.0.7.7');
    const a = record('a');
    s.setRemoteExport(exportKey(a), a, 'a');
    const search = record('a', { name: 'search', type: 'Headless' });
    s.setRemoteExport(exportKey(search), search, 'a');
    s.heartbeatSeen('a', 0);
    const got = s.serviceImports(s.imports(1));
    expect([...got.keys()]).toEqual(['b.shop.cart', 'b.shop.search']);
    expect(got.get('b.shop.cart')?.spec).toMatchObject({ ips: ['243.0.7.7'], type: 'ClusterSetIP' });
    expect(got.get('b.shop.search')?.spec).toMatchObject({ ips: [], type: 'Headless' });
  });

  it('none once the exporting cluster is withdrawn', () => {
    const s = new ClusterSetState({ cluster: 'b', clusterSetCidr: '243.0.0.0/16', ttlMs: 10_000 });
    const a = record('a');
    s.setRemoteExport(exportKey(a), a, 'a');
    s.heartbeatSeen('a', 0);
    expect(s.serviceImports(s.imports(1)).size).toBe(1);
    expect(s.serviceImports(s.imports(20_000)).size).toBe(0);
  });
});
