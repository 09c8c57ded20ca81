// Kubernetes objects for the scenario's cluster, built the way real components would
// write them (kubelet-registered nodes, controller-created pods, user services).
import { ANNOTATION_TOPOLOGY_MODE, LABEL_CONTROL_PLANE, LABEL_SKIP_MIRROR, LABEL_ZONE } from '@slicemesh/model';
import type { ContainerPortSpec, NodeGroup, ServiceSpec } from '../scenario/schema.ts';
import { formatCpu } from '../scenario/quantities.ts';
import type { KubeObj } from '../store/types.ts';

export const LABEL_REGION = 'topology.kubernetes.io/region';
export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_POD_TEMPLATE_HASH = 'pod-template-hash';
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
export { ANNOTATION_TOPOLOGY_MODE };

export interface NodeBuild {
  readonly name: string;
  readonly group: NodeGroup;
  readonly region: string;
  readonly internalIP: string;
  readonly podCIDR: string;
  readonly kubeletVersion: string;
  readonly at: string;
}

export function buildNode(b: NodeBuild): KubeObj {
  const { group } = b;
  const ready = group.ready ? 'True' : 'False';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: b.name,
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        [LABEL_HOSTNAME]: b.name,
        [LABEL_REGION]: b.region,
        ...(group.zone !== undefined ? { [LABEL_ZONE]: group.zone } : {}),
        ...(group.controlPlane ? { [LABEL_CONTROL_PLANE]: '' } : {}),
        ...group.labels,
      },
    },
    spec: {
      podCIDR: b.podCIDR,
      podCIDRs: [b.podCIDR],
      ...(group.unschedulable ? { unschedulable: true } : {}),
      ...(group.controlPlane ? { taints: [{ key: LABEL_CONTROL_PLANE, effect: 'NoSchedule' }] } : {}),
    },
    status: {
      capacity: { cpu: formatCpu(group.cpuMillis), memory: group.memory, pods: '110' },
      allocatable: { cpu: formatCpu(group.cpuMillis), memory: group.memory, pods: '110' },
      conditions: [
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: b.at, lastTransitionTime: b.at, reason: 'KubeletHasSufficientMemory' },
        { type: 'DiskPressure', status: 'False', lastHeartbeatTime: b.at, lastTransitionTime: b.at, reason: 'KubeletHasNoDiskPressure' },
        { type: 'PIDPressure', status: 'False', lastHeartbeatTime: b.at, lastTransitionTime: b.at, reason: 'KubeletHasSufficientPID' },
        { type: 'Ready', status: ready, lastHeartbeatTime: b.at, lastTransitionTime: b.at, reason: group.ready ? 'KubeletReady' : 'KubeletNotReady' },
      ],
      addresses: [{ type: 'InternalIP', address: b.internalIP }, { type: 'Hostname', address: b.name }],
      nodeInfo: { kubeletVersion: b.kubeletVersion, kubeProxyVersion: b.kubeletVersion, operatingSystem: 'linux', architecture: 'amd64', containerRuntimeVersion: 'containerd://1.7.0', osImage: 'cluster-sim', kernelVersion: '6.0.0' },
    },
  };
}

export function buildNamespace(name: string): KubeObj {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function buildService(s: ServiceSpec): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: s.name,
      namespace: s.namespace,
      ...(Object.keys(s.labels).length > 0 ? { labels: s.labels } : {}),
      ...(Object.keys(s.annotations).length > 0 ? { annotations: s.annotations } : {}),
    },
    spec: {
      type: s.type,
      ...(s.selector ? { selector: s.selector } : {}),
      ...(s.headless ? { clusterIP: 'None' } : {}),
      ports: s.ports.map((p) => ({ ...p })),
      ...(s.publishNotReadyAddresses ? { publishNotReadyAddresses: true } : {}),
      ...(s.trafficDistribution ? { trafficDistribution: s.trafficDistribution } : {}),
      ...(s.internalTrafficPolicy ? { internalTrafficPolicy: s.internalTrafficPolicy } : {}),
      ...(s.externalTrafficPolicy ? { externalTrafficPolicy: s.externalTrafficPolicy } : {}),
    },
  };
}

/** Endpoints a user maintains by hand for a selectorless service. */
export function buildStaticEndpoints(s: ServiceSpec): KubeObj | undefined {
  if (!s.endpoints) return undefined;
  const address = (a: { ip: string; nodeName?: string }) => ({ ip: a.ip, ...(a.nodeName ? { nodeName: a.nodeName } : {}) });
  const ready = s.endpoints.addresses.filter((a) => a.ready).map(address);
  const notReady = s.endpoints.addresses.filter((a) => !a.ready).map(address);
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: s.name, namespace: s.namespace, ...(Object.keys(s.labels).length > 0 ? { labels: s.labels } : {}) },
    subsets: s.endpoints.addresses.length === 0 ? [] : [{
      ...(ready.length > 0 ? { addresses: ready } : {}),
      ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
      ports: s.endpoints.ports.map((p) => ({ ...p })),
    }],
  };
}

/** The `default/kubernetes` Service (selectorless, first service IP) and its Endpoints. */
export function buildKubernetesService(clusterIP: string, apiServerIPs: readonly string[]): readonly [KubeObj, KubeObj] {
  const labels = { component: 'apiserver', provider: 'kubernetes' };
  return [
    {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: 'kubernetes', namespace: 'default', labels },
      spec: { type: 'ClusterIP', clusterIP, ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
    },
    {
      apiVersion: 'v1', kind: 'Endpoints',
      // The API server manages its own EndpointSlice, so the mirroring controller must skip these.
      metadata: { name: 'kubernetes', namespace: 'default', labels: { [LABEL_SKIP_MIRROR]: 'true' } },
      subsets: apiServerIPs.length === 0 ? [] : [{ addresses: apiServerIPs.map((ip) => ({ ip })), ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }],
    },
  ];
}

export interface PodBuild {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owner: { readonly name: string; readonly uid: string };
  readonly containerPorts: readonly ContainerPortSpec[];
  readonly cpuMillis: number;
  readonly zones: readonly string[];
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly terminationGracePeriodSeconds: number;
}

/** A controller-created pod, not yet scheduled (the kubelet simulation takes it from here). */
export function buildPod(b: PodBuild): KubeObj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: b.name,
      namespace: b.namespace,
      labels: b.labels,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: b.owner.name, uid: b.owner.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [{
        name: 'app',
        image: PAUSE_IMAGE,
        ...(b.containerPorts.length > 0 ? { ports: b.containerPorts.map((p) => ({ ...p })) } : {}),
        resources: { requests: { cpu: formatCpu(b.cpuMillis) } },
      }],
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      terminationGracePeriodSeconds: b.terminationGracePeriodSeconds,
      ...(Object.keys(b.nodeSelector).length > 0 ? { nodeSelector: b.nodeSelector } : {}),
      ...(b.zones.length > 0
        ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: LABEL_ZONE, operator: 'In', values: [...b.zones] }] }] } } } }
        : {}),
    },
    status: { phase: 'Pending' },
  };
}
