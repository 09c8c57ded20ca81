// The Kubernetes objects an e2e test writes straight into cluster-sim's store, so that node
// and pod addresses are those of the real namespaces (the simulator's own scheduler and IPAM
// would invent others).

import type { KubeObj } from '@slicemesh/cluster-sim';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_ZONE } from '@slicemesh/model';
import type { LabNode, LabPod } from './netns-cluster.ts';
import { POD_PORT } from './netns-cluster.ts';

export const APP = 'echo';

function readyConditions(ready: boolean, at: string): Record<string, string>[] {
  const s = ready ? 'True' : 'False';
  return [
    { type: 'PodScheduled', status: 'True', lastTransitionTime: at },
    { type: 'Initialized', status: 'True', lastTransitionTime: at },
    { type: 'ContainersReady', status: s, lastTransitionTime: at },
    { type: 'Ready', status: s, lastTransitionTime: at },
  ];
}

/** A Ready node with its zone label, InternalIP and allocatable CPU (topology hints need both). */
export function nodeObject(node: LabNode, cpu: string, at: string): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: node.name, labels: { 'kubernetes.io/hostname': node.name, [LABEL_ZONE]: node.zone } },
    spec: { podCIDR: node.podSubnet, podCIDRs: [node.podSubnet] },
    status: {
      capacity: { cpu, memory: '8Gi', pods: '110' },
      allocatable: { cpu, memory: '8Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: at, lastTransitionTime: at, reason: 'KubeletReady' }],
      addresses: [{ type: 'InternalIP', address: node.ip }, { type: 'Hostname', address: node.name }],
    },
  };
}

/** A running pod bound to its node, at the namespace's address, Ready or not. */
export function podObject(pod: LabPod, ready: boolean, at: string): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: 'default', labels: { app: APP } },
    spec: {
      nodeName: pod.node.name,
      containers: [{ name: 'server', image: 'echo', ports: [{ name: 'http', containerPort: POD_PORT, protocol: 'TCP' }] }],
    },
    status: {
      phase: 'Running',
      hostIP: pod.node.ip,
      podIP: pod.ip,
      podIPs: [{ ip: pod.ip }],
      startTime: at,
      conditions: readyConditions(ready, at),
    },
  };
}

/** `current` with its Ready and ContainersReady conditions set to `ready`. */
export function withReadiness(current: KubeObj, ready: boolean, at: string): KubeObj {
  const status = (current['status'] ?? {}) as Record<string, unknown>;
  const s = ready ? 'True' : 'False';
  const conditions = ((status['conditions'] ?? []) as Record<string, unknown>[]).map((c) =>
    c['type'] === 'Ready' || c['type'] === 'ContainersReady' ? { ...c, status: s, lastTransitionTime: at } : c,
  );
  return { ...current, status: { ...status, conditions } };
}

export interface ServiceShape {
  readonly name: string;
  readonly nodePort: number;
  /** Sets service.kubernetes.io/topology-mode: Auto. */
  readonly topologyAuto: boolean;
}

/** A NodePort service selecting every echo pod on port 80 → the pods' `http` port. */
export function serviceObject(s: ServiceShape): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: s.name, namespace: 'default', ...(s.topologyAuto ? { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } } : {}) },
    spec: {
      type: 'NodePort',
      selector: { app: APP },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP', nodePort: s.nodePort }],
    },
  };
}
