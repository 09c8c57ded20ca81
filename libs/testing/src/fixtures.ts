// Builders for Kubernetes objects in tests. Every builder returns a fresh object with
// sensible defaults; pass overrides for the fields a case is about.

import type { Endpoint, EndpointSlice, Node, Pod, Service, ServicePort } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_ZONE, MANAGED_BY_CONTROLLER } from '@slicemesh/model';

export interface ServiceOpts {
  readonly namespace?: string;
  readonly uid?: string;
  readonly selector?: Record<string, string> | null;
  readonly ports?: readonly ServicePort[];
  readonly clusterIP?: string;
  readonly ipFamilies?: readonly ('IPv4' | 'IPv6')[];
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly publishNotReadyAddresses?: boolean;
  readonly creationTimestamp?: string;
  readonly spec?: Partial<Service['spec']>;
}

export function makeService(name: string, o: ServiceOpts = {}): Service {
  return {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-svc-${name}`,
      creationTimestamp: o.creationTimestamp ?? '2026-01-01T00:00:00Z',
      ...(o.labels ? { labels: o.labels } : {}),
      ...(o.annotations ? { annotations: o.annotations } : {}),
    },
    spec: {
      selector: o.selector === undefined ? { app: name } : o.selector,
      clusterIP: o.clusterIP ?? '10.96.0.10',
      ipFamilies: o.ipFamilies ?? ['IPv4'],
      ports: o.ports ?? [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      ...(o.publishNotReadyAddresses !== undefined ? { publishNotReadyAddresses: o.publishNotReadyAddresses } : {}),
      ...o.spec,
    },
  };
}

export interface PodOpts {
  readonly namespace?: string;
  readonly uid?: string;
  readonly labels?: Record<string, string>;
  readonly ips?: readonly string[];
  readonly nodeName?: string;
  readonly ready?: boolean;
  readonly readyTransition?: string;
  readonly terminating?: boolean;
  readonly phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  readonly hostname?: string;
  readonly subdomain?: string;
  readonly containerPorts?: readonly { name?: string; containerPort: number; protocol?: 'TCP' | 'UDP' | 'SCTP' }[];
  readonly initContainers?: Pod['spec']['initContainers'];
}

export function makePod(name: string, o: PodOpts = {}): Pod {
  const ips = o.ips ?? ['10.0.0.1'];
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: o.uid ?? `uid-pod-${name}`,
      labels: o.labels ?? { app: 'web' },
      ...(o.terminating ? { deletionTimestamp: '2026-01-02T00:00:00Z' } : {}),
    },
    spec: {
      ...(o.nodeName !== '' ? { nodeName: o.nodeName ?? 'node-1' } : {}),
      ...(o.hostname ? { hostname: o.hostname } : {}),
      ...(o.subdomain ? { subdomain: o.subdomain } : {}),
      containers: [{ name: 'main', ports: o.containerPorts ?? [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }],
      ...(o.initContainers ? { initContainers: o.initContainers } : {}),
    },
    status: {
      phase: o.phase ?? 'Running',
      ...(ips.length > 0 ? { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : {}),
      conditions: [
        {
          type: 'Ready',
          status: o.ready === false ? 'False' : 'True',
          lastTransitionTime: o.readyTransition ?? '2026-01-01T00:00:01Z',
        },
      ],
    },
  };
}

export interface NodeOpts {
  readonly zone?: string;
  readonly cpu?: string;
  readonly ready?: boolean;
  readonly labels?: Record<string, string>;
  readonly internalIP?: string;
}

export function makeNode(name: string, o: NodeOpts = {}): Node {
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: {
      name,
      uid: `uid-node-${name}`,
      labels: { ...(o.zone !== undefined ? { [LABEL_ZONE]: o.zone } : {}), ...o.labels },
    },
    status: {
      allocatable: { cpu: o.cpu ?? '4' },
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
      ...(o.internalIP ? { addresses: [{ type: 'InternalIP', address: o.internalIP }] } : {}),
    },
  };
}

export interface SliceOpts {
  readonly namespace?: string;
  readonly service?: string;
  readonly serviceUid?: string;
  readonly addressType?: EndpointSlice['addressType'];
  readonly managedBy?: string;
  readonly ports?: EndpointSlice['ports'];
  readonly generation?: number;
  readonly labels?: Record<string, string>;
}

export function makeSlice(name: string, endpoints: readonly Endpoint[], o: SliceOpts = {}): EndpointSlice {
  const service = o.service ?? 'web';
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      uid: `uid-slice-${name}`,
      generation: o.generation ?? 1,
      labels: { [LABEL_SERVICE_NAME]: service, [LABEL_MANAGED_BY]: o.managedBy ?? MANAGED_BY_CONTROLLER, ...o.labels },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Service', name: service, uid: o.serviceUid ?? `uid-svc-${service}`, controller: true, blockOwnerDeletion: true },
      ],
    },
    addressType: o.addressType ?? 'IPv4',
    endpoints,
    ports: o.ports ?? [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}
