import type { EndpointSlice, IPFamily, Node, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceEndpoint as ep } from '../testing/builders.ts';
import type { ProxyPlanEntry } from './proxy-plan.ts';
import { proxyModel, proxyPlan } from './proxy-plan.ts';

const http = [{ name: 'http', port: 8080, protocol: 'TCP' as const }];
const nodes = [makeNode('node-1', { zone: 'zone-a' }), makeNode('node-2', { zone: 'zone-b' })];
const dualWeb = makeService('web', {
  ipFamilies: ['IPv4', 'IPv6'],
  spec: { clusterIPs: ['10.96.0.10', 'fd00::10'] },
});

interface Case {
  readonly name: string;
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly nodes?: readonly Node[];
  readonly nodeName?: string;
  readonly family?: IPFamily;
  readonly want: readonly ProxyPlanEntry[];
}

const row = (endpoint: string, isLocal = false, ready = true, serving = true, terminating = false) => ({ endpoint, isLocal, ready, serving, terminating });

const cases: Case[] = [
  {
    name: 'contract: one entry per service port with the merged endpoints (unready included), cluster and local sets',
    services: [makeService('web', { spec: { type: 'NodePort', externalTrafficPolicy: 'Local' }, ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
    slices: [makeSlice('web-1', [ep('10.0.0.2', { node: 'node-2' }), ep('10.0.0.1', { node: 'node-1' }), ep('10.0.0.3', { ready: false })], { ports: http })],
    want: [
      {
        servicePort: 'default/web:http/TCP',
        endpoints: [row('10.0.0.1:8080', true), row('10.0.0.2:8080'), row('10.0.0.3:8080', false, false)],
        clusterEndpoints: ['10.0.0.1:8080', '10.0.0.2:8080'],
        localEndpoints: ['10.0.0.1:8080'],
      },
    ],
  },
  {
    name: 'contract: localEndpoints is null without a Local policy; ports without endpoints are listed',
    services: [makeService('web', { ports: [{ name: 'http', port: 80 }, { name: 'dns', port: 53, protocol: 'UDP' }] })],
    slices: [makeSlice('web-1', [ep('10.0.0.1')], { ports: http })],
    want: [
      { servicePort: 'default/web:dns/UDP', endpoints: [], clusterEndpoints: [], localEndpoints: null },
      { servicePort: 'default/web:http/TCP', endpoints: [row('10.0.0.1:8080')], clusterEndpoints: ['10.0.0.1:8080'], localEndpoints: null },
    ],
  },
  {
    name: 'contract: clusterEndpoints is [] when the port only uses Local policy',
    services: [makeService('web', { spec: { internalTrafficPolicy: 'Local' } })],
    slices: [makeSlice('web-1', [ep('10.0.0.1', { node: 'node-1' }), ep('10.0.0.2', { node: 'node-2' })], { ports: http })],
    want: [{ servicePort: 'default/web:http/TCP', endpoints: [row('10.0.0.1:8080', true), row('10.0.0.2:8080')], clusterEndpoints: [], localEndpoints: ['10.0.0.1:8080'] }],
  },
  {
    name: 'D.3 zone hints narrow the cluster endpoints on a zoned node; the merged view keeps both',
    services: [makeService('web')],
    slices: [makeSlice('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })], { ports: http })],
    want: [{ servicePort: 'default/web:http/TCP', endpoints: [row('10.0.0.1:8080'), row('10.0.0.2:8080')], clusterEndpoints: ['10.0.0.1:8080'], localEndpoints: null }],
  },
  {
    name: 'D.3 a node absent from the node list is treated as a node without labels',
    services: [makeService('web')],
    slices: [makeSlice('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })], { ports: http })],
    nodeName: 'node-9',
    want: [
      {
        servicePort: 'default/web:http/TCP',
        endpoints: [row('10.0.0.1:8080'), row('10.0.0.2:8080')],
        clusterEndpoints: ['10.0.0.1:8080', '10.0.0.2:8080'],
        localEndpoints: null,
      },
    ],
  },
  {
    name: 'D.1 dual-stack: both families, sorted by servicePort with IPv4 first',
    services: [makeService('api', { ports: [{ name: 'http', port: 80 }] }), dualWeb],
    slices: [
      makeSlice('web-v6', [ep('fd00::1')], { ports: http, addressType: 'IPv6' }),
      makeSlice('web-v4', [ep('10.0.0.1')], { ports: http }),
      makeSlice('api-1', [ep('10.0.1.1')], { ports: http, service: 'api' }),
    ],
    want: [
      { servicePort: 'default/api:http/TCP', endpoints: [row('10.0.1.1:8080')], clusterEndpoints: ['10.0.1.1:8080'], localEndpoints: null },
      { servicePort: 'default/web:http/TCP', endpoints: [row('10.0.0.1:8080')], clusterEndpoints: ['10.0.0.1:8080'], localEndpoints: null },
      { servicePort: 'default/web:http/TCP', endpoints: [row('[fd00::1]:8080')], clusterEndpoints: ['[fd00::1]:8080'], localEndpoints: null },
    ],
  },
  {
    name: 'D.1 a single family can be asked for',
    services: [dualWeb],
    slices: [makeSlice('web-v6', [ep('fd00::1')], { ports: http, addressType: 'IPv6' })],
    family: 'IPv6',
    want: [{ servicePort: 'default/web:http/TCP', endpoints: [row('[fd00::1]:8080')], clusterEndpoints: ['[fd00::1]:8080'], localEndpoints: null }],
  },
  {
    name: 'D.1 headless and ExternalName services are not programmed',
    services: [makeService('web', { clusterIP: 'None' }), makeService('ext', { spec: { type: 'ExternalName', externalName: 'x.example' } })],
    slices: [makeSlice('web-1', [ep('10.0.0.1')], { ports: http })],
    want: [],
  },
  {
    name: 'D.2 slices of another service or namespace do not leak in',
    services: [makeService('web')],
    slices: [makeSlice('other-1', [ep('10.0.9.1')], { ports: http, service: 'other' }), makeSlice('web-x', [ep('10.0.9.2')], { ports: http, namespace: 'x' })],
    want: [{ servicePort: 'default/web:http/TCP', endpoints: [], clusterEndpoints: [], localEndpoints: null }],
  },
  {
    name: 'D.3.2 terminating endpoints show their conditions when used as fallback',
    services: [makeService('web')],
    slices: [makeSlice('web-1', [ep('10.0.0.1', { ready: false, serving: true, terminating: true, node: 'node-1' })], { ports: http })],
    want: [{ servicePort: 'default/web:http/TCP', endpoints: [row('10.0.0.1:8080', true, false, true, true)], clusterEndpoints: ['10.0.0.1:8080'], localEndpoints: null }],
  },
  { name: 'no services give an empty plan', services: [], slices: [makeSlice('web-1', [ep('10.0.0.1')], { ports: http })], want: [] },
];

describe('proxyPlan', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze({
        services: tc.services,
        slices: tc.slices,
        nodes: tc.nodes ?? nodes,
        nodeName: tc.nodeName ?? 'node-1',
        ...(tc.family ? { family: tc.family } : {}),
      });
      expect(proxyPlan(input)).toEqual(tc.want);
    });
  }

  it('proxyModel carries the port model and hasAnyEndpoints beside the categorized endpoints', () => {
    const input = deepFreeze({
      services: [makeService('web', { spec: { internalTrafficPolicy: 'Local' } })],
      slices: [makeSlice('web-1', [ep('10.0.0.2', { node: 'node-2' })], { ports: http })],
      nodes,
      nodeName: 'node-1',
    });
    const [m] = proxyModel(input);
    expect(m?.servicePort).toMatchObject({ servicePortName: 'default/web:http', clusterIP: '10.96.0.10', usesLocalEndpoints: true });
    expect(m?.localEndpoints).toEqual([]);
    expect(m?.hasAnyEndpoints).toBe(true);
  });
});

describe('D.2.9, D.2.10 proxyModel: every manager\'s slices merged; what kube-proxy never lists left out', () => {
  const web = makeService('web');
  const labelled = <T extends Service | EndpointSlice>(o: T, labels: Record<string, string>): T => deepFreeze({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, ...labels } } });
  const ours = makeSlice('web-1', [ep('10.0.0.1')], { ports: http });
  const imported = makeSlice('imported-1', [ep('10.0.9.1')], { ports: http, managedBy: 'mcs-importer' });
  const cases: { name: string; services: readonly Service[]; slices: readonly EndpointSlice[]; want: readonly string[] }[] = [
    { name: "ours and another controller's merged", services: [web], slices: [ours, imported], want: ['10.0.0.1:8080', '10.0.9.1:8080'] },
    { name: 'a Service labelled for another proxy: not programmed', services: [labelled(web, { 'service.kubernetes.io/service-proxy-name': 'other' })], slices: [ours, imported], want: [] },
    { name: 'a slice labelled for another proxy: left out', services: [web], slices: [ours, labelled(imported, { 'service.kubernetes.io/service-proxy-name': 'other' })], want: ['10.0.0.1:8080'] },
    { name: 'a slice labelled headless: left out', services: [web], slices: [labelled(ours, { 'service.kubernetes.io/headless': '' }), imported], want: ['10.0.9.1:8080'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const model = proxyModel({ services: tc.services, slices: tc.slices, nodes, nodeName: 'node-1' });
      expect(model.flatMap((m) => m.merged.map((e) => e.endpoint))).toEqual(tc.want);
    });
  }
});
