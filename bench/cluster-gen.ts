// Deterministic synthetic clusters for the benchmarks.

import type { Node, Pod, Service } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';

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
