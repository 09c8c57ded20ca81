import { describe, expect, it } from 'vitest';
import { kindInfo, VIEWS } from '../store/kinds.ts';
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

  const sliceCases: readonly [string, Record<string, unknown>, Record<string, string>][] = [
    ['numbered ports and addresses', { ports: [{ port: 8080 }], endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }] }, { Ports: '8080', Endpoints: '10.0.0.1,10.0.0.2' }],
    ['a port without a number shows its name, or *', { ports: [{ name: 'http' }, {}], endpoints: [] }, { Ports: 'http,*', Endpoints: '<unset>' }],
    ['more than three of each are abbreviated', { ports: [1, 2, 3, 4, 5].map((port) => ({ port })), endpoints: [{ addresses: ['a', 'b'] }, { addresses: ['c', 'd'] }] }, { Ports: '1,2,3 + 2 more...', Endpoints: 'a,b,c + 1 more...' }],
    ['no ports at all', { endpoints: [{ addresses: ['10.0.0.1'] }] }, { Ports: '<unset>', Endpoints: '10.0.0.1' }],
  ];
  for (const [name, fields, want] of sliceCases) {
    it(`endpointslices: NAME ADDRESSTYPE PORTS ENDPOINTS AGE; ${name}`, () => {
      const slice: KubeObj = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: meta('web-abc'), addressType: 'IPv4', ...fields };
      expect(cells('EndpointSlice', slice)).toEqual({ Name: 'web-abc', AddressType: 'IPv4', Age: '10m', ...want });
    });
  }

  const event = (fields: Record<string, unknown>): KubeObj => ({ apiVersion: 'v1', kind: 'Event', metadata: meta('web.17f'), ...fields });
  const eventCases: readonly [string, KubeObj, Record<string, unknown>][] = [
    [
      'an old-style event: last/first timestamps, count, source component and host',
      event({ type: 'Normal', reason: 'Scheduled', message: ' Assigned shop/web to n1 \n', involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{c}' }, source: { component: 'default-scheduler', host: 'cp-1' }, firstTimestamp: '2026-01-01T00:01:00Z', lastTimestamp: '2026-01-01T00:08:00Z', count: 4 }),
      { 'Last Seen': '2m', Type: 'Normal', Reason: 'Scheduled', Object: 'pod/web', Subobject: 'spec.containers{c}', Source: 'default-scheduler, cp-1', Message: 'Assigned shop/web to n1', 'First Seen': '9m', Count: 4, Name: 'web.17f' },
    ],
    [
      'a new-style event: eventTime for both times, count 1, the reporting controller as source',
      event({ type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints', involvedObject: { kind: 'Service', name: 'web' }, eventTime: '2026-01-01T00:09:30.000000Z', firstTimestamp: null, lastTimestamp: null, reportingComponent: 'slicemesh.io/hints', reportingInstance: '' }),
      { 'Last Seen': '30s', Type: 'Warning', Reason: 'TopologyAwareHintsDisabled', Object: 'service/web', Subobject: '', Source: 'slicemesh.io/hints', Message: 'Insufficient number of endpoints', 'First Seen': '30s', Count: 1, Name: 'web.17f' },
    ],
    [
      'a series: last seen from lastObservedTime, count from the series',
      event({ type: 'Warning', reason: 'R', message: 'm', involvedObject: { kind: 'Service', name: 'web' }, eventTime: '2026-01-01T00:00:00.000000Z', series: { count: 7, lastObservedTime: '2026-01-01T00:09:00.000000Z' }, reportingComponent: 'x.io/y', reportingInstance: 'y-0' }),
      { 'Last Seen': '60s', 'First Seen': '10m', Count: 7, Source: 'x.io/y, y-0' },
    ],
    [
      'no times at all, and an object without a name',
      event({ involvedObject: { kind: 'Node' } }),
      { 'Last Seen': '<unknown>', 'First Seen': '<unknown>', Object: 'node', Count: 1 },
    ],
  ];
  for (const [name, obj, want] of eventCases) {
    it(`events: LAST SEEN TYPE REASON OBJECT MESSAGE (wide adds the rest); ${name}`, () => {
      expect(cells('Event', obj, true)).toMatchObject(want);
    });
  }

  it('events: the default columns are the five kubectl get events prints', () => {
    expect(Object.keys(cells('Event', event({})))).toEqual(['Last Seen', 'Type', 'Reason', 'Object', 'Message']);
  });

  it('leases: NAME HOLDER AGE, an empty holder when nobody holds it', () => {
    const lease = (spec: Record<string, unknown>): KubeObj => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: meta('l'), spec });
    expect([cells('Lease', lease({ holderIdentity: 'publisher-0' })), cells('Lease', lease({}))]).toEqual([{ Name: 'l', Holder: 'publisher-0', Age: '10m' }, { Name: 'l', Holder: '', Age: '10m' }]);
  });

  it('a view serves its own form as the row object (includeObject=Object)', () => {
    const events = VIEWS.find((v) => v.group === 'events.k8s.io')!;
    const table = toTable(events, [event({ message: 'hello', involvedObject: { kind: 'Node', name: 'n1' } })], NOW, {}, 'Object') as { rows: { object: Record<string, unknown>; cells: unknown[] }[] };
    expect([table.rows[0]!.object['apiVersion'], table.rows[0]!.object['note'], table.rows[0]!.cells[6]]).toEqual(['events.k8s.io/v1', 'hello', 'hello']);
  });

  it('rows carry the object metadata so kubectl can print the namespace column', () => {
    const table = toTable(kindInfo('Service'), [{ apiVersion: 'v1', kind: 'Service', metadata: meta('s'), spec: {} }], NOW, {}) as { rows: { object: { kind: string; metadata: { namespace: string } } }[] };
    expect([table.rows[0]!.object.kind, table.rows[0]!.object.metadata.namespace]).toEqual(['PartialObjectMetadata', 'shop']);
  });
});
