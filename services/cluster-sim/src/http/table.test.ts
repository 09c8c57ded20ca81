import { describe, expect, it } from 'vitest';
import { kindInfo } from '../store/kinds.ts';
import type { KubeObj } from '../store/types.ts';
import { toTable, wantsTable } from './table.ts';

const NOW = Date.UTC(2026, 0, 1, 0, 10);
const meta = (name: string) => ({ name, namespace: 'shop', creationTimestamp: '2026-01-01T00:00:00Z' });

function cells(kind: string, obj: KubeObj, wide = false): Record<string, unknown> {
  const table = toTable(kindInfo(kind), [obj], NOW, { resourceVersion: '1' }) as { columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[] }[] };
  return Object.fromEntries(table.columnDefinitions.map((c, i) => [c.name, table.rows[0]!.cells[i]]).filter((_, i) => wide || table.columnDefinitions[i]!.priority === 0));
}

describe('Table output (kubectl get)', () => {
  it('is requested with as=Table;g=meta.k8s.io', () => {
    expect(wantsTable('application/json;as=Table;v=v1;g=meta.k8s.io,application/json')).toBe(true);
    expect(wantsTable('application/json')).toBe(false);
  });

  it('pods: ready count, status (Terminating when deleting), age', () => {
    const pod: KubeObj = { apiVersion: 'v1', kind: 'Pod', metadata: { ...meta('p'), deletionTimestamp: '2026-01-01T00:11:00Z' }, spec: { containers: [{ name: 'a' }], nodeName: 'n1' }, status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(cells('Pod', pod, true)).toEqual({ Name: 'p', Ready: '1/1', Status: 'Terminating', Restarts: '0', Age: '10m', IP: '10.0.0.1', Node: 'n1', 'Nominated Node': '<none>', 'Readiness Gates': '<none>' });
  });

  it('services: type, cluster IP, ports with node ports', () => {
    const svc: KubeObj = { apiVersion: 'v1', kind: 'Service', metadata: meta('s'), spec: { type: 'NodePort', clusterIP: '10.96.0.10', ports: [{ port: 443, nodePort: 30443, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] } };
    expect(cells('Service', svc)).toEqual({ Name: 's', Type: 'NodePort', 'Cluster-IP': '10.96.0.10', 'External-IP': '<none>', 'Port(s)': '443:30443/TCP,53/UDP', Age: '10m' });
  });

  it('nodes: Ready/NotReady with SchedulingDisabled, roles from labels', () => {
    const node: KubeObj = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', creationTimestamp: '2026-01-01T00:00:00Z', labels: { 'node-role.kubernetes.io/control-plane': '' } }, spec: { unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }], nodeInfo: { kubeletVersion: 'v1.32.0' } } };
    expect(cells('Node', node)).toEqual({ Name: 'n', Status: 'Unknown,SchedulingDisabled', Roles: 'control-plane', Age: '10m', Version: 'v1.32.0' });
  });

  it('endpoints: ip:port pairs, abbreviated past three', () => {
    const ep: KubeObj = { apiVersion: 'v1', kind: 'Endpoints', metadata: meta('e'), subsets: [{ addresses: ['1', '2', '3', '4'].map((i) => ({ ip: `10.0.0.${i}` })), ports: [{ port: 80 }] }] };
    expect(cells('Endpoints', ep)['Endpoints']).toBe('10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 1 more...');
  });

  it('rows carry the object metadata so kubectl can print the namespace column', () => {
    const table = toTable(kindInfo('Service'), [{ apiVersion: 'v1', kind: 'Service', metadata: meta('s'), spec: {} }], NOW, {}) as { rows: { object: { kind: string; metadata: { namespace: string } } }[] };
    expect([table.rows[0]!.object.kind, table.rows[0]!.object.metadata.namespace]).toEqual(['PartialObjectMetadata', 'shop']);
  });
});
