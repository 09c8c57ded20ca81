// The resource types the simulator serves, with the facts discovery, routing and the store
// need about each. Adding a kind here makes it listable, watchable and writable.

export interface KindInfo {
  readonly kind: string;
  readonly listKind: string;
  /** Plural resource name used in URLs. */
  readonly resource: string;
  readonly singular: string;
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  /** PUT on the main resource keeps the stored status; PUT/PATCH on /status changes only status. */
  readonly statusSubresource: boolean;
  /** PUT of a missing object creates it (true for Endpoints upstream). */
  readonly allowCreateOnUpdate: boolean;
  /** DELETE answers with the deleted object rather than a Status. */
  readonly returnDeletedObject: boolean;
  /** Field selector keys accepted besides metadata.name and metadata.namespace. */
  readonly fieldLabels: readonly string[];
  readonly categories: readonly string[];
}

export function apiVersionOf(info: KindInfo): string {
  return info.group ? `${info.group}/${info.version}` : info.version;
}

/** `services` or `endpointslices.discovery.k8s.io`, as upstream error messages name a resource. */
export function qualifiedResource(info: KindInfo): string {
  return info.group ? `${info.resource}.${info.group}` : info.resource;
}

const core = { group: '', version: 'v1' } as const;

export const KINDS: readonly KindInfo[] = [
  {
    ...core, kind: 'Namespace', listKind: 'NamespaceList', resource: 'namespaces', singular: 'namespace',
    namespaced: false, shortNames: ['ns'], statusSubresource: true, allowCreateOnUpdate: false,
    returnDeletedObject: true, fieldLabels: ['status.phase'], categories: [],
  },
  {
    ...core, kind: 'Node', listKind: 'NodeList', resource: 'nodes', singular: 'node',
    namespaced: false, shortNames: ['no'], statusSubresource: true, allowCreateOnUpdate: false,
    returnDeletedObject: false, fieldLabels: ['spec.unschedulable'], categories: [],
  },
  {
    ...core, kind: 'Pod', listKind: 'PodList', resource: 'pods', singular: 'pod',
    namespaced: true, shortNames: ['po'], statusSubresource: true, allowCreateOnUpdate: false,
    returnDeletedObject: true,
    fieldLabels: ['spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
    categories: ['all'],
  },
  {
    ...core, kind: 'Service', listKind: 'ServiceList', resource: 'services', singular: 'service',
    namespaced: true, shortNames: ['svc'], statusSubresource: true, allowCreateOnUpdate: false,
    returnDeletedObject: true, fieldLabels: ['spec.clusterIP', 'spec.type'], categories: ['all'],
  },
  {
    ...core, kind: 'Endpoints', listKind: 'EndpointsList', resource: 'endpoints', singular: 'endpoints',
    namespaced: true, shortNames: ['ep'], statusSubresource: false, allowCreateOnUpdate: true,
    returnDeletedObject: false, fieldLabels: [], categories: [],
  },
  {
    group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice', listKind: 'EndpointSliceList',
    resource: 'endpointslices', singular: 'endpointslice', namespaced: true, shortNames: [],
    statusSubresource: false, allowCreateOnUpdate: false, returnDeletedObject: false,
    fieldLabels: ['addressType'], categories: [],
  },
];

const byKind = new Map(KINDS.map((k) => [k.kind, k]));

export function kindInfo(kind: string): KindInfo {
  const info = byKind.get(kind);
  if (!info) throw new Error(`cluster-sim does not serve kind ${kind}`);
  return info;
}

/** The kind served at `/{prefix}/{resource}` for this group/version, if any. */
export function kindForResource(group: string, version: string, resource: string): KindInfo | undefined {
  return KINDS.find((k) => k.group === group && k.version === version && k.resource === resource);
}

/** Distinct served group/versions, the core group first. */
export function servedGroupVersions(): readonly { readonly group: string; readonly version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const k of KINDS) seen.set(`${k.group}/${k.version}`, { group: k.group, version: k.version });
  return [...seen.values()];
}
