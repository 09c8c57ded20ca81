// The subset of Kubernetes API objects slicemesh reads and writes, as plain readonly data.
// Field names and shapes follow the Kubernetes JSON wire format so that `kubectl get -o json`
// output can be used as is; unknown fields are tolerated and ignored.

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly generateName?: string;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly ownerReferences?: readonly OwnerReference[];
}

export type Protocol = 'TCP' | 'UDP' | 'SCTP';
export type IPFamily = 'IPv4' | 'IPv6';
/** `IP` is the deprecated EndpointSlice address type; `FQDN` is never produced here. */
export type AddressType = 'IPv4' | 'IPv6' | 'FQDN' | 'IP';

export interface ServicePort {
  readonly name?: string;
  readonly protocol?: Protocol;
  readonly appProtocol?: string;
  readonly port: number;
  /** A number, or the name of a container port. Absent means "same as port". */
  readonly targetPort?: number | string;
  readonly nodePort?: number;
}

export interface LoadBalancerIngress {
  readonly ip?: string;
  readonly hostname?: string;
  readonly ipMode?: 'VIP' | 'Proxy';
}

export interface ServiceSpec {
  readonly type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** nil selector = selectorless Service (no EndpointSlice controller; maybe mirrored). */
  readonly selector?: Readonly<Record<string, string>> | null;
  readonly clusterIP?: string;
  readonly clusterIPs?: readonly string[];
  readonly ipFamilies?: readonly IPFamily[];
  readonly ports?: readonly ServicePort[];
  readonly publishNotReadyAddresses?: boolean;
  readonly externalIPs?: readonly string[];
  readonly externalName?: string;
  readonly sessionAffinity?: 'None' | 'ClientIP';
  readonly sessionAffinityConfig?: { readonly clientIP?: { readonly timeoutSeconds?: number } };
  readonly externalTrafficPolicy?: 'Cluster' | 'Local';
  readonly internalTrafficPolicy?: 'Cluster' | 'Local';
  readonly healthCheckNodePort?: number;
  readonly loadBalancerSourceRanges?: readonly string[];
  readonly trafficDistribution?: string;
}

export interface Service {
  readonly apiVersion?: string;
  readonly kind: 'Service';
  readonly metadata: ObjectMeta;
  readonly spec: ServiceSpec;
  readonly status?: { readonly loadBalancer?: { readonly ingress?: readonly LoadBalancerIngress[] } };
}

export interface ContainerPort {
  readonly name?: string;
  readonly containerPort: number;
  readonly protocol?: Protocol;
}

export interface Container {
  readonly name: string;
  readonly ports?: readonly ContainerPort[];
  /** Only meaningful on init containers: `Always` makes it a sidecar. */
  readonly restartPolicy?: string;
}

export interface PodCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly lastTransitionTime?: string;
}

export interface Pod {
  readonly apiVersion?: string;
  readonly kind: 'Pod';
  readonly metadata: ObjectMeta;
  readonly spec: {
    readonly nodeName?: string;
    readonly hostname?: string;
    readonly subdomain?: string;
    readonly containers: readonly Container[];
    readonly initContainers?: readonly Container[];
  };
  readonly status?: {
    readonly phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
    readonly podIP?: string;
    readonly podIPs?: readonly { readonly ip: string }[];
    readonly conditions?: readonly PodCondition[];
  };
}

export interface NodeCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
}

export interface Node {
  readonly apiVersion?: string;
  readonly kind: 'Node';
  readonly metadata: ObjectMeta;
  readonly spec?: { readonly unschedulable?: boolean };
  readonly status?: {
    readonly allocatable?: Readonly<Record<string, string>>;
    readonly conditions?: readonly NodeCondition[];
    readonly addresses?: readonly { readonly type: string; readonly address: string }[];
  };
}

export interface ObjectReference {
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export interface EndpointAddress {
  readonly ip: string;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly targetRef?: ObjectReference;
}

export interface EndpointPort {
  readonly name?: string;
  readonly port: number;
  readonly protocol?: Protocol;
  readonly appProtocol?: string;
}

export interface EndpointSubset {
  readonly addresses?: readonly EndpointAddress[];
  readonly notReadyAddresses?: readonly EndpointAddress[];
  readonly ports?: readonly EndpointPort[];
}

export interface Endpoints {
  readonly apiVersion?: string;
  readonly kind: 'Endpoints';
  readonly metadata: ObjectMeta;
  readonly subsets?: readonly EndpointSubset[];
}

export interface EndpointConditions {
  readonly ready?: boolean;
  readonly serving?: boolean;
  readonly terminating?: boolean;
}

export interface EndpointHints {
  readonly forZones?: readonly { readonly name: string }[];
  readonly forNodes?: readonly { readonly name: string }[];
}

export interface Endpoint {
  readonly addresses: readonly string[];
  readonly conditions: EndpointConditions;
  readonly hostname?: string;
  readonly targetRef?: ObjectReference;
  readonly nodeName?: string;
  readonly zone?: string;
  readonly hints?: EndpointHints;
}

export interface EndpointSlicePort {
  readonly name?: string;
  readonly port?: number;
  readonly protocol?: Protocol;
  readonly appProtocol?: string;
}

export interface EndpointSlice {
  readonly apiVersion?: string;
  readonly kind: 'EndpointSlice';
  readonly metadata: ObjectMeta;
  readonly addressType: AddressType;
  readonly endpoints: readonly Endpoint[];
  readonly ports: readonly EndpointSlicePort[];
}

/** One condition of a ServiceExport (metav1.Condition; older CRDs leave all but type and status optional). */
export interface ServiceExportCondition {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string;
  readonly observedGeneration?: number;
}

/**
 * MCS ServiceExport (multicluster.x-k8s.io/v1alpha1, KEP-1645): exports the Service of the same
 * namespace and name to the cluster set. It has no spec; its status is the MCS controller's.
 */
export interface ServiceExport {
  readonly apiVersion?: string;
  readonly kind: 'ServiceExport';
  readonly metadata: ObjectMeta;
  readonly status?: { readonly conditions?: readonly ServiceExportCondition[] };
}

/** A port of a ServiceImport (mcs-api ServicePort: no targetPort, the exporting clusters own that). */
export interface ServiceImportPort {
  readonly name?: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly appProtocol?: string;
  readonly port: number;
}

export interface ServiceImportSpec {
  /** The ClusterSet IP; empty for a Headless import. */
  readonly ips: readonly string[];
  readonly type: 'ClusterSetIP' | 'Headless';
  readonly ports: readonly ServiceImportPort[];
  readonly sessionAffinity: 'None' | 'ClientIP';
  readonly sessionAffinityConfig?: { readonly clientIP: { readonly timeoutSeconds: number } };
}

export interface ServiceImportStatus {
  /** The exporting clusters the import is made of. */
  readonly clusters: readonly { readonly cluster: string }[];
}

/**
 * MCS ServiceImport (multicluster.x-k8s.io/v1alpha1, KEP-1645): a Service imported from the
 * cluster set, in each importing cluster. Written by the multi-cluster controller, read by people.
 */
export interface ServiceImport {
  readonly apiVersion: 'multicluster.x-k8s.io/v1alpha1';
  readonly kind: 'ServiceImport';
  readonly metadata: ObjectMeta;
  readonly spec: ServiceImportSpec;
  readonly status?: ServiceImportStatus;
}

/** The core kinds of input files and the slicer's projection (ServiceExport, a CRD, is not one). */
export type KubeObject = Service | Pod | Node | Endpoints | EndpointSlice;
export type KubeKind = KubeObject['kind'];
