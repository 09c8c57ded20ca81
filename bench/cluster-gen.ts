// Deterministic synthetic clusters for the benchmarks.

import type { Endpoint, EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, LABEL_ZONE, MANAGED_BY_CONTROLLER } from '@slicemesh/model';

export const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;

export function makeNodes(count: number, zones: readonly string[] = ZONES): Node[] {
  return Array.from({ length: count }, (_, i) => ({
    kind: 'Node' as const,
    metadata: { name: `node-${i}`, uid: `uid-node-${i}`, labels: { [LABEL_ZONE]: zones[i % zones.length] ?? 'zone-a' } },
    status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' as const }] },
  }));
}

export function makeBenchService(name: string, o: { namespace?: string; annotations?: Record<string, string>; trafficDistribution?: string } = {}): Service {
  return {
    kind: 'Service',
    metadata: { name, namespace: o.namespace ?? 'bench', uid: `uid-svc-${name}`, creationTimestamp: '2026-01-01T00:00:00Z', ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      selector: { app: name },
      clusterIP: '10.96.0.10',
      ipFamilies: ['IPv4'],
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
      ...(o.trafficDistribution ? { trafficDistribution: o.trafficDistribution } : {}),
    },
  };
}

/** Pod number `i` (generation `gen`) of service `app`, on node `i % nodes`, with a unique IP. */
export function makeBenchPod(app: string, i: number, nodes: number, gen = 0, ready = true, namespace = 'bench'): Pod {
  const n = i + gen * 1_000_000;
  return {
    kind: 'Pod',
    metadata: { name: `${app}-${gen}-${i}`, namespace, uid: `uid-${app}-${gen}-${i}`, labels: { app } },
    spec: { nodeName: `node-${i % nodes}`, containers: [{ name: 'main', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }] }] },
    status: {
      phase: 'Running',
      podIP: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
      podIPs: [{ ip: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:01Z' }],
    },
  };
}

/**
 * The slice `svc-<i>-abcde` of Service `svc-<i>`: one endpoint per entry, on its node and in the
 * node's zone (none when the node has no zone label), with an address unique across services
 * of the same endpoint count (10.128.0.0/9).
 */
export function makeBenchSlice(i: number, endpoints: readonly { readonly node: Node; readonly ready: boolean }[], namespace = 'bench'): EndpointSlice {
  return {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { name: `svc-${i}-abcde`, namespace, generation: 1, labels: { [LABEL_SERVICE_NAME]: `svc-${i}`, [LABEL_MANAGED_BY]: MANAGED_BY_CONTROLLER } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: endpoints.map(({ node, ready }, e): Endpoint => {
      const n = i * endpoints.length + e;
      const zone = node.metadata.labels?.[LABEL_ZONE];
      return {
        addresses: [`10.${128 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`],
        conditions: { ready, serving: ready, terminating: false },
        nodeName: node.metadata.name,
        ...(zone !== undefined ? { zone } : {}),
        targetRef: { kind: 'Pod', namespace, name: `svc-${i}-${e}` },
      };
    }),
  };
}
