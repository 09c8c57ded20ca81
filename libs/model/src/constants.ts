// Well-known label, annotation and controller names (upstream values).

export const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';
export const LABEL_MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
export const LABEL_HEADLESS = 'service.kubernetes.io/headless';
export const LABEL_SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';
export const LABEL_CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';
export const LABEL_MASTER = 'node-role.kubernetes.io/master';

export const ANNOTATION_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';
export const ANNOTATION_LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const ANNOTATION_LEADER = 'control-plane.alpha.kubernetes.io/leader';
export const ANNOTATION_TOPOLOGY_AWARE_HINTS = 'service.kubernetes.io/topology-aware-hints';
export const ANNOTATION_TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';

export const MANAGED_BY_CONTROLLER = 'endpointslice-controller.k8s.io';
export const MANAGED_BY_MIRRORING = 'endpointslicemirroring-controller.k8s.io';

export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;
export const MAX_MAX_ENDPOINTS_PER_SLICE = 1000;
export const DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET = 1000;

/** API validation caps on an EndpointSlice (discovery validation). */
export const API_MAX_ENDPOINTS_PER_SLICE = 1000;
export const API_MAX_ADDRESSES_PER_ENDPOINT = 100;
export const API_MAX_PORTS_PER_SLICE = 20000;
export const API_MAX_ZONE_HINTS = 8;

export const DISCOVERY_API_VERSION = 'discovery.k8s.io/v1';

/** The MCS API (KEP-1645, sigs.k8s.io/mcs-api): a CRD group, served only where it is installed. */
export const MCS_API_GROUP = 'multicluster.x-k8s.io';
export const MCS_API_VERSION = 'multicluster.x-k8s.io/v1alpha1';
