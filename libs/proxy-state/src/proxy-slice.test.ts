import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { proxySlice } from './proxy-slice.ts';

/** A slice as the slicer writes it: everything the API carries. */
const full: EndpointSlice = deepFreeze({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'web-abc12',
    namespace: 'shop',
    uid: 'uid-1',
    resourceVersion: '42',
    generation: 3,
    generateName: 'web-',
    creationTimestamp: '2026-11-27T10:00:00Z',
    labels: { 'kubernetes.io/service-name': 'web', 'service.kubernetes.io/service-proxy-name': 'other', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', app: 'web' },
    annotations: { [ANNOTATION_TRIGGER_TIME]: '2026-11-27T10:00:01.5Z', 'example.com/note': 'kept out' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-svc', controller: true, blockOwnerDeletion: true }],
  },
  addressType: 'IPv4',
  endpoints: [
    {
      addresses: ['10.0.0.1'],
      conditions: { ready: true, serving: true, terminating: false },
      hostname: 'web-0',
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-0', uid: 'uid-pod' },
      nodeName: 'n1',
      zone: 'zone-a',
      hints: { forZones: [{ name: 'zone-a' }] },
    },
    { addresses: ['10.0.0.2'], conditions: {} },
  ],
  ports: [{ name: 'http', port: 80, protocol: 'TCP', appProtocol: 'http' }],
});

describe('proxySlice', () => {
  const cases: { name: string; slice: EndpointSlice; want: EndpointSlice }[] = [
    {
      name: 'keeps what proxies program from and drops the rest',
      slice: full,
      want: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'web-abc12',
          namespace: 'shop',
          labels: { 'kubernetes.io/service-name': 'web', 'service.kubernetes.io/service-proxy-name': 'other' },
          annotations: { [ANNOTATION_TRIGGER_TIME]: '2026-11-27T10:00:01.5Z' },
        },
        addressType: 'IPv4',
        endpoints: [
          { addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'zone-a', hints: { forZones: [{ name: 'zone-a' }] } },
          { addresses: ['10.0.0.2'], conditions: {} },
        ],
        ports: full.ports,
      },
    },
    {
      name: 'labels proxies do not read leave no labels at all',
      slice: deepFreeze({ kind: 'EndpointSlice', metadata: { name: 'x', labels: { app: 'web' } }, addressType: 'IPv4', endpoints: [], ports: [] }),
      want: { kind: 'EndpointSlice', metadata: { name: 'x' }, addressType: 'IPv4', endpoints: [], ports: [] },
    },
    {
      name: 'a slice without namespace, labels or annotations stays without them',
      slice: deepFreeze({ kind: 'EndpointSlice', metadata: { name: 'bare', uid: 'u' }, addressType: 'IPv6', endpoints: [], ports: [] }),
      want: { kind: 'EndpointSlice', metadata: { name: 'bare' }, addressType: 'IPv6', endpoints: [], ports: [] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = proxySlice(tc.slice);
      expect(got).toStrictEqual(tc.want);
      expect(proxySlice(tc.slice)).toBe(got);
    });
  }
});
