// The per-zone views of one import in the importing cluster, with locality: the cluster's own
// endpoints when one of them is ready (narrowed to the zone by its own hints, as for a local
// Service), the other clusters' endpoints only when none is. The agents read these views like
// any other, so imported Services need nothing of their own on the nodes.

import type { ServiceExportRecord } from '@slicemesh/contracts';
import { fnv1a32 } from '@slicemesh/contracts';
import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@slicemesh/model';
import type { ZoneViews } from '@slicemesh/proxy-state';
import { zoneViews } from '@slicemesh/proxy-state';
import { LABEL_MCS_SERVICE_NAME, LABEL_SOURCE_CLUSTER, MANAGED_BY_MCS, derivedService, derivedServiceName } from './derived-service.ts';
import { mergeExports } from './merge-exports.ts';
import type { MergedImport } from './merge-exports.ts';

export interface ImportInput {
  /** The importing cluster. */
  readonly cluster: string;
  /** The live exports of one Service (this cluster's among them, if it exports it). */
  readonly records: readonly ServiceExportRecord[];
  /** The import's ClusterSet IP; null for a headless import. */
  readonly clusterSetIp: string | null;
  /** The importing cluster's nodes (their zones shape the views). */
  readonly nodes: readonly Node[];
}

/** Where an import's endpoints come from in this cluster. */
export type ImportSource = 'local' | 'remote';

export interface ImportedService {
  readonly merged: MergedImport;
  readonly service: Service;
  /** One slice per exported slice of the clusters used, labelled with its source cluster. */
  readonly slices: readonly EndpointSlice[];
  readonly source: ImportSource;
  readonly views: ZoneViews;
}

const isReady = (e: Endpoint): boolean => e.conditions.ready !== false;

/** Another cluster's endpoint: its node names and hints mean nothing here (a node "worker-1" may exist in both). */
function remoteEndpoint(e: Endpoint): Endpoint {
  const { nodeName: _node, hints: _hints, ...rest } = e;
  return rest;
}

function importedSlices(record: ServiceExportRecord, derived: string, local: boolean, headless: boolean): EndpointSlice[] {
  return record.slices.map((s) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      // One name per source slice, stable, a valid DNS subdomain.
      name: `${derived}-${fnv1a32(`${record.cluster}/${s.name}`).toString(36)}`,
      namespace: record.namespace,
      labels: {
        [LABEL_SERVICE_NAME]: derived,
        [LABEL_MCS_SERVICE_NAME]: record.name,
        [LABEL_SOURCE_CLUSTER]: record.cluster,
        [LABEL_MANAGED_BY]: MANAGED_BY_MCS,
        // As the EndpointSlice controller marks a headless Service's slices: no proxy programs them.
        ...(headless ? { [LABEL_HEADLESS]: '' } : {}),
      },
    },
    addressType: s.addressType,
    ports: s.ports,
    endpoints: local ? s.endpoints : s.endpoints.map(remoteEndpoint),
  }));
}

/**
 * The import of one Service in `cluster`. Throws (RangeError, from mergeExports) for an empty
 * list or records of different Services.
 */
export function importService(input: ImportInput): ImportedService {
  const merged = mergeExports(input.records);
  const derived = derivedServiceName(merged.namespace, merged.name);
  const service = derivedService(merged, input.clusterSetIp);
  const own = input.records.find((r) => r.cluster === input.cluster);
  const localReady = own !== undefined && own.slices.some((s) => s.endpoints.some(isReady));
  const used = localReady ? [own] : [...input.records].sort((a, b) => (a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0));
  const headless = service.spec.clusterIP === 'None';
  const slices = used.flatMap((r) => importedSlices(r, derived, r.cluster === input.cluster, headless));
  return { merged, service, slices, source: localReady ? 'local' : 'remote', views: zoneViews({ services: [service], slices, nodes: input.nodes }) };
}
