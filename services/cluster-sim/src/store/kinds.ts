// The resource types the simulator serves, with the facts discovery, routing and the store
// need about each. Adding a kind to KINDS makes it stored, listable, watchable and writable;
// VIEWS serve a stored kind under another group/version (events.k8s.io/v1 Events are the
// core Events, converted on the way in and out, as the API server keeps one copy of both).
// ServiceExport and ServiceImport are CRDs' kinds (MCS, multicluster.x-k8s.io): a server may leave their group out
// (servedWithout) to simulate a cluster without the MCS CRDs.
import { coreEventToEventsV1, eventsV1ToCoreEvent, EVENTS_V1_FIELD_LABELS } from './event-codec.ts';
import type { KubeObj } from './types.ts';

/** The MCS API group (KEP-1645), installed as CRDs on a real cluster. */
export const MCS_GROUP = 'multicluster.x-k8s.io';

/** Converts between the stored form of a kind and the form a view serves. */
export interface WireCodec {
  /** The stored object as this resource returns it. */
  toWire(obj: KubeObj): KubeObj;
  /** A body written through this resource, in the stored form. */
  fromWire(obj: KubeObj): KubeObj;
}

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
  /** Field selector keys of a view mapped to the stored kind's field labels. */
  readonly fieldLabelAliases?: Readonly<Record<string, string>>;
  /** Set on views: the store holds `kind` in the core form, this resource serves another. */
  readonly codec?: WireCodec;
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
  {
    ...core, kind: 'Event', listKind: 'EventList', resource: 'events', singular: 'event',
    namespaced: true, shortNames: ['ev'], statusSubresource: false, allowCreateOnUpdate: true,
    returnDeletedObject: false,
    fieldLabels: [
      'involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid',
      'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath',
      'reason', 'reportingComponent', 'source', 'type',
    ],
    categories: [],
  },
  {
    group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', listKind: 'LeaseList', resource: 'leases',
    singular: 'lease', namespaced: true, shortNames: [], statusSubresource: false, allowCreateOnUpdate: false,
    returnDeletedObject: false, fieldLabels: [], categories: [],
  },
  {
    // sigs.k8s.io/mcs-api's CRD: namespaced, a status subresource, short name svcex.
    group: MCS_GROUP, version: 'v1alpha1', kind: 'ServiceExport', listKind: 'ServiceExportList',
    resource: 'serviceexports', singular: 'serviceexport', namespaced: true, shortNames: ['svcex'],
    statusSubresource: true, allowCreateOnUpdate: false, returnDeletedObject: false, fieldLabels: [], categories: [],
  },
  {
    // sigs.k8s.io/mcs-api's CRD: namespaced, a status subresource, short names svcim and svcimport.
    group: MCS_GROUP, version: 'v1alpha1', kind: 'ServiceImport', listKind: 'ServiceImportList',
    resource: 'serviceimports', singular: 'serviceimport', namespaced: true, shortNames: ['svcim', 'svcimport'],
    statusSubresource: true, allowCreateOnUpdate: false, returnDeletedObject: false, fieldLabels: [], categories: [],
  },
];

/** Stored kinds served again under another group/version. */
export const VIEWS: readonly KindInfo[] = [
  {
    group: 'events.k8s.io', version: 'v1', kind: 'Event', listKind: 'EventList', resource: 'events', singular: 'event',
    namespaced: true, shortNames: ['ev'], statusSubresource: false, allowCreateOnUpdate: true,
    returnDeletedObject: false, fieldLabels: Object.keys(EVENTS_V1_FIELD_LABELS), fieldLabelAliases: EVENTS_V1_FIELD_LABELS,
    categories: [], codec: { toWire: coreEventToEventsV1, fromWire: eventsV1ToCoreEvent },
  },
];

/** Every resource the API serves: the stored kinds, then the views. */
export const SERVED: readonly KindInfo[] = [...KINDS, ...VIEWS];

const byKind = new Map(KINDS.map((k) => [k.kind, k]));

export function kindInfo(kind: string): KindInfo {
  const info = byKind.get(kind);
  if (!info) throw new Error(`cluster-sim does not serve kind ${kind}`);
  return info;
}

/** The resource served at `/{prefix}/{resource}` for this group/version, if any. */
export function kindForResource(group: string, version: string, resource: string, served: readonly KindInfo[] = SERVED): KindInfo | undefined {
  return served.find((k) => k.group === group && k.version === version && k.resource === resource);
}

/** Distinct served group/versions, the core group first. */
export function servedGroupVersions(served: readonly KindInfo[] = SERVED): readonly { readonly group: string; readonly version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const k of served) seen.set(`${k.group}/${k.version}`, { group: k.group, version: k.version });
  return [...seen.values()];
}

/** SERVED without the resources of `groups` (a server without those CRDs answers 404 for them). */
export function servedWithout(groups: readonly string[]): readonly KindInfo[] {
  return groups.length === 0 ? SERVED : SERVED.filter((k) => !groups.includes(k.group));
}

/** The object as `info` serves it (views convert from the stored form). */
export function toWire(info: KindInfo, obj: KubeObj): KubeObj {
  return info.codec ? info.codec.toWire(obj) : obj;
}
