// What one cluster exports: a Service marked for export — by an MCS ServiceExport of the same
// namespace and name, or by an annotation where the MCS CRDs are not installed — with its
// slices as that cluster's EndpointSlice controller and hints finished them.

import type { ExportedPort, ExportedSlice, ServiceExportRecord } from '@slicemesh/contracts';
import { EXPORT_RECORD_VERSION } from '@slicemesh/contracts';
import type { EndpointSlice, Service, ServiceExport } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';

/**
 * The annotation that exports a Service in clusters without the MCS CRDs: `"true"` exports it,
 * as a ServiceExport of the same name would. The export's precedence time is then the
 * Service's creationTimestamp.
 */
export const EXPORT_ANNOTATION = 'multicluster.slicemesh.io/export';

/** Why a Service marked for export cannot be (MCS: ServiceExportValid false), or undefined. */
export function unexportableReason(service: Service): string | undefined {
  if (service.spec.type === 'ExternalName') return 'ExternalName Services cannot be exported';
  return undefined;
}

/** Whether the Service asks to be exported through the annotation. */
export function exportRequested(service: Service): boolean {
  return service.metadata.annotations?.[EXPORT_ANNOTATION] === 'true';
}

/** The epoch, for an object without a creationTimestamp (never so from an API server). */
const EPOCH = new Date(0).toISOString();

/**
 * When the export of `service` began (its precedence time in conflicts), or undefined when
 * nothing exports it. A ServiceExport of the same namespace and name exports it from its own
 * creationTimestamp, annotated or not (the MCS API is the authority where it exists); without
 * one the annotation exports it from the Service's creationTimestamp. A ServiceExport of a
 * missing Service exports nothing (KEP-1645: the export is not valid until the Service exists).
 */
export function exportedSince(service: Service | undefined, serviceExport: ServiceExport | undefined): string | undefined {
  if (service === undefined) return undefined;
  if (serviceExport !== undefined) return serviceExport.metadata.creationTimestamp ?? EPOCH;
  return exportRequested(service) ? (service.metadata.creationTimestamp ?? EPOCH) : undefined;
}

function exportedPorts(service: Service): ExportedPort[] {
  return (service.spec.ports ?? []).map((p) => ({
    ...(p.name !== undefined && p.name !== '' ? { name: p.name } : {}),
    protocol: p.protocol ?? 'TCP',
    port: p.port,
    ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
  }));
}

export interface ExportInput {
  readonly cluster: string;
  readonly service: Service;
  /** The Service's slices in its cluster (other services' slices are ignored). */
  readonly slices: readonly EndpointSlice[];
  /** When the export began; defaults to the Service's creationTimestamp (the annotation's case). */
  readonly exportedAt?: string;
}

/**
 * The export record of a Service, or null when it is not exportable (ExternalName). Slices keep
 * their endpoints (conditions, zone, node, hints) and ports; their metadata stays home. Slices
 * and endpoints are sorted, so the same state always gives the same record.
 */
export function exportOf(input: ExportInput): ServiceExportRecord | null {
  const { service, cluster } = input;
  if (unexportableReason(service) !== undefined) return null;
  const namespace = service.metadata.namespace ?? 'default';
  const name = service.metadata.name;
  const slices: ExportedSlice[] = input.slices
    .filter((s) => (s.metadata.namespace ?? 'default') === namespace && s.metadata.labels?.[LABEL_SERVICE_NAME] === name && s.endpoints.length > 0)
    .map((s) => ({ name: s.metadata.name, addressType: s.addressType, ports: s.ports, endpoints: s.endpoints }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const headless = service.spec.clusterIP === 'None';
  const timeout = service.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
  return {
    v: EXPORT_RECORD_VERSION,
    cluster,
    namespace,
    name,
    exportedAt: input.exportedAt ?? service.metadata.creationTimestamp ?? EPOCH,
    type: headless ? 'Headless' : 'ClusterSetIP',
    ports: exportedPorts(service),
    sessionAffinity: service.spec.sessionAffinity ?? 'None',
    ...(service.spec.sessionAffinity === 'ClientIP' && timeout !== undefined ? { sessionAffinityTimeoutSeconds: timeout } : {}),
    slices,
  };
}
