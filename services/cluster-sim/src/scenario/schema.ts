// A validated scenario: the cluster to build and what happens to it over time. The YAML
// form (see scenarios/default.yaml) is read by parse-scenario.ts into these types, with
// defaults filled in and names expanded.

export interface ObjectRef {
  readonly namespace: string;
  readonly name: string;
}

export interface ClusterSettings {
  /** topology.kubernetes.io/region of every node. */
  readonly region: string;
  /** Pod addresses: each node gets the next /24 (nodeCIDRPrefix) of this block. */
  readonly podCIDR: string;
  readonly nodeCIDRPrefix: number;
  readonly serviceCIDR: string;
  /** Node InternalIPs are taken from this block in node order. */
  readonly nodeIPCIDR: string;
  readonly kubeletVersion: string;
  /** Create the `default/kubernetes` Service and its Endpoints (skip-mirror), like a real cluster. */
  readonly kubernetesService: boolean;
}

export interface NodeGroup {
  /** Expanded node names (`name`, or `namePrefix-1..count`). */
  readonly names: readonly string[];
  /** Absent: the nodes carry no zone label. */
  readonly zone?: string;
  readonly cpuMillis: number;
  readonly memory: string;
  readonly ready: boolean;
  readonly controlPlane: boolean;
  readonly unschedulable: boolean;
  readonly labels: Readonly<Record<string, string>>;
}

export interface ContainerPortSpec {
  readonly name?: string;
  readonly containerPort: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
}

export interface DeploymentSpec extends ObjectRef {
  readonly replicas: number;
  /** Pod labels (the Deployment selector). Defaults to `{app: <name>}`. */
  readonly labels: Readonly<Record<string, string>>;
  readonly containerPorts: readonly ContainerPortSpec[];
  /** Zones pods may be placed in; empty = all zones. */
  readonly zones: readonly string[];
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly cpuMillis: number;
  readonly readinessDelayMs: number;
  readonly terminationGracePeriodSeconds: number;
  readonly maxSurge: number;
  readonly maxUnavailable: number;
}

export interface ServicePortSpec {
  readonly name?: string;
  readonly port: number;
  readonly targetPort?: number | string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly nodePort?: number;
}

export interface StaticEndpointsSpec {
  readonly addresses: readonly { readonly ip: string; readonly nodeName?: string; readonly ready: boolean }[];
  readonly ports: readonly { readonly name?: string; readonly port: number; readonly protocol: 'TCP' | 'UDP' | 'SCTP' }[];
}

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer';

export interface ServiceSpec extends ObjectRef {
  readonly type: ServiceType;
  /** null = selectorless (Endpoints come from `endpoints`, or nobody). */
  readonly selector: Readonly<Record<string, string>> | null;
  readonly ports: readonly ServicePortSpec[];
  readonly headless: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly trafficDistribution?: string;
  readonly internalTrafficPolicy?: 'Cluster' | 'Local';
  readonly externalTrafficPolicy?: 'Cluster' | 'Local';
  readonly publishNotReadyAddresses: boolean;
  readonly endpoints?: StaticEndpointsSpec;
}

export interface ChurnSpec {
  /** Pod deletions per second (the owning deployment replaces them); 0 = none. */
  readonly podsPerSecond: number;
  /** Deployments churn may pick from; empty = all. */
  readonly deployments: readonly ObjectRef[];
}

export interface ServiceUpdate {
  readonly annotations?: Readonly<Record<string, string | null>>;
  readonly trafficDistribution?: string | null;
  readonly internalTrafficPolicy?: 'Cluster' | 'Local';
  readonly externalTrafficPolicy?: 'Cluster' | 'Local';
  readonly publishNotReadyAddresses?: boolean;
}

export type TimelineAction =
  | { readonly action: 'scale'; readonly deployment: ObjectRef; readonly replicas: number }
  | { readonly action: 'rollout'; readonly deployment: ObjectRef }
  | { readonly action: 'failNode'; readonly nodes: readonly string[]; readonly status: 'False' | 'Unknown'; readonly evictAfterMs?: number }
  | { readonly action: 'recoverNode'; readonly nodes: readonly string[] }
  | { readonly action: 'deletePod'; readonly deployment: ObjectRef; readonly count: number }
  | { readonly action: 'churn'; readonly podsPerSecond: number }
  | { readonly action: 'updateService'; readonly service: ObjectRef; readonly update: ServiceUpdate }
  | { readonly action: 'addNodes'; readonly group: NodeGroup }
  | { readonly action: 'removeNode'; readonly nodes: readonly string[] };

export type TimelineStep = TimelineAction & { readonly atMs: number };

export interface Scenario {
  /** Where it came from, for messages (`scenarios/default.yaml` or `<inline>`). */
  readonly source: string;
  readonly seed: string;
  /** When the scenario ends: churn stops and no further steps run. Undefined = never. */
  readonly durationMs?: number;
  readonly cluster: ClusterSettings;
  readonly zones: readonly string[];
  readonly nodes: readonly NodeGroup[];
  readonly deployments: readonly DeploymentSpec[];
  readonly services: readonly ServiceSpec[];
  readonly churn: ChurnSpec;
  /** Sorted by `atMs` (stable). */
  readonly timeline: readonly TimelineStep[];
}

export const DEFAULT_CLUSTER: ClusterSettings = {
  region: 'region-1',
  podCIDR: '10.244.0.0/14',
  nodeCIDRPrefix: 24,
  serviceCIDR: '10.96.0.0/16',
  nodeIPCIDR: '172.18.0.0/16',
  kubeletVersion: 'v1.32.0',
  kubernetesService: true,
};
