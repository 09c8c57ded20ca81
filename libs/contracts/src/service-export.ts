// The `exports` bucket of a cluster set (on the hub, shared by every cluster): each cluster's
// exported Services with their endpoints, and each cluster's heartbeat. The multi-cluster
// service of every cluster writes its own entries and reads everyone's to import them (MCS,
// KEP-1645); docs/multicluster.md explains the flow.
//
//   svc.<ns>.<name>.<cluster>   ServiceExportRecord: one cluster's export of one Service
//   hb.<cluster>                ClusterHeartbeat: written every heartbeat; a cluster whose last
//                               one is older than the TTL is withdrawn from every import

import type { EndpointSlice, EndpointSlicePort, Endpoint, AddressType } from '@slicemesh/model';
import { InvalidObjectError, validateEndpointSlice } from '@slicemesh/model';
import { TokenDecodeError } from './errors.ts';
import type { Parsed } from './kube-event.ts';
import { decodeToken, encodeToken } from './tokens.ts';

export const EXPORT_RECORD_VERSION = 1;

/** MCS: how the import is consumed — one virtual IP, or DNS only (headless). */
export type ServiceImportType = 'ClusterSetIP' | 'Headless';

/** A port of an exported Service as the import exposes it (targetPort is the source cluster's business). */
export interface ExportedPort {
  readonly name?: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly port: number;
  readonly appProtocol?: string;
}

/** One of the source cluster's slices of the Service: its endpoints and their ports. */
export interface ExportedSlice {
  readonly name: string;
  readonly addressType: AddressType;
  readonly ports: readonly EndpointSlicePort[];
  readonly endpoints: readonly Endpoint[];
}

export interface ServiceExportRecord {
  readonly v: typeof EXPORT_RECORD_VERSION;
  readonly cluster: string;
  readonly namespace: string;
  readonly name: string;
  /** When the export began (RFC 3339): the precedence of conflict resolution, oldest first. */
  readonly exportedAt: string;
  readonly type: ServiceImportType;
  readonly ports: readonly ExportedPort[];
  readonly sessionAffinity: 'None' | 'ClientIP';
  readonly sessionAffinityTimeoutSeconds?: number;
  readonly slices: readonly ExportedSlice[];
}

export interface ClusterHeartbeat {
  readonly v: typeof EXPORT_RECORD_VERSION;
  readonly cluster: string;
  /** The writer's clock (RFC 3339), for people; liveness is measured by the reader's clock. */
  readonly at: string;
}

export interface ExportKeyAddress {
  readonly namespace: string;
  readonly name: string;
  readonly cluster: string;
}

export type ExportsKey = ({ readonly kind: 'svc' } & ExportKeyAddress) | { readonly kind: 'hb'; readonly cluster: string };

/** `svc.<ns>.<name>.<cluster>`. */
export function exportKey(a: ExportKeyAddress): string {
  return ['svc', encodeToken(a.namespace), encodeToken(a.name), encodeToken(a.cluster)].join('.');
}

/** `hb.<cluster>`. */
export function heartbeatKey(cluster: string): string {
  return `hb.${encodeToken(cluster)}`;
}

/** Watch filters: every export, every heartbeat. */
export const EXPORTS_FILTER = 'svc.>';
export const HEARTBEATS_FILTER = 'hb.>';

/** Inverse of exportKey and heartbeatKey. Throws TokenDecodeError for anything else. */
export function parseExportsKey(key: string): ExportsKey {
  const t = key.split('.');
  if (t[0] === 'svc' && t.length === 4) return { kind: 'svc', namespace: decodeToken(t[1]!), name: decodeToken(t[2]!), cluster: decodeToken(t[3]!) };
  if (t[0] === 'hb' && t.length === 2) return { kind: 'hb', cluster: decodeToken(t[1]!) };
  throw new TokenDecodeError(key, 'not svc.<ns>.<name>.<cluster> or hb.<cluster>');
}

const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = <T>(reason: string, field?: string): Parsed<T> => ({ ok: false, rejection: field === undefined ? { reason } : { reason, field } });

function checkPorts(value: unknown): string | undefined {
  if (!Array.isArray(value)) return 'ports: not a list';
  for (const [i, p] of value.entries()) {
    if (!isObject(p)) return `ports[${i}]: not an object`;
    if (!Number.isInteger(p['port']) || (p['port'] as number) < 1 || (p['port'] as number) > 65_535) return `ports[${i}].port: not a port number`;
    if (!PROTOCOLS.has(p['protocol'] as string)) return `ports[${i}].protocol: not TCP, UDP or SCTP`;
    if (p['name'] !== undefined && typeof p['name'] !== 'string') return `ports[${i}].name: not a string`;
  }
  return undefined;
}

/**
 * Parses the value of `svc.<ns>.<name>.<cluster>`: it must be a version-1 record of the Service
 * and cluster its key names, each slice a valid EndpointSlice body. Never throws.
 */
export function parseServiceExportRecord(key: string, value: unknown): Parsed<ServiceExportRecord> {
  let addr: ExportsKey;
  try {
    addr = parseExportsKey(key);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 'key');
  }
  if (addr.kind !== 'svc') return fail(`${key}: not an export key`, 'key');
  if (!isObject(value)) return fail(`${key}: not an object`);
  if (value['v'] !== EXPORT_RECORD_VERSION) return fail(`${key}: version ${JSON.stringify(value['v'])} is not ${EXPORT_RECORD_VERSION}`, 'v');
  if (value['cluster'] !== addr.cluster || value['namespace'] !== addr.namespace || value['name'] !== addr.name) {
    return fail(`${key}: holds ${String(value['cluster'])}/${String(value['namespace'])}/${String(value['name'])}`, 'metadata');
  }
  if (typeof value['exportedAt'] !== 'string' || Number.isNaN(Date.parse(value['exportedAt']))) return fail(`${key}: exportedAt is not a time`, 'exportedAt');
  if (value['type'] !== 'ClusterSetIP' && value['type'] !== 'Headless') return fail(`${key}: type is not ClusterSetIP or Headless`, 'type');
  if (value['sessionAffinity'] !== 'None' && value['sessionAffinity'] !== 'ClientIP') return fail(`${key}: sessionAffinity is not None or ClientIP`, 'sessionAffinity');
  const ports = checkPorts(value['ports']);
  if (ports !== undefined) return fail(`${key}: ${ports}`, 'ports');
  if (!Array.isArray(value['slices'])) return fail(`${key}: slices is not a list`, 'slices');
  for (const [i, s] of (value['slices'] as unknown[]).entries()) {
    if (!isObject(s) || typeof s['name'] !== 'string') return fail(`${key}: slices[${i}] has no name`, 'slices');
    try {
      validateEndpointSlice({ kind: 'EndpointSlice', metadata: { name: s['name'], namespace: addr.namespace }, addressType: s['addressType'], ports: s['ports'], endpoints: s['endpoints'] }, `${key} slices[${i}]`);
    } catch (e) {
      return fail(e instanceof InvalidObjectError || e instanceof Error ? e.message : String(e), 'slices');
    }
  }
  return { ok: true, value: value as unknown as ServiceExportRecord };
}

/** Parses the value of `hb.<cluster>`. Never throws. */
export function parseClusterHeartbeat(key: string, value: unknown): Parsed<ClusterHeartbeat> {
  let addr: ExportsKey;
  try {
    addr = parseExportsKey(key);
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e), 'key');
  }
  if (addr.kind !== 'hb') return fail(`${key}: not a heartbeat key`, 'key');
  if (!isObject(value) || value['v'] !== EXPORT_RECORD_VERSION || value['cluster'] !== addr.cluster || typeof value['at'] !== 'string') return fail(`${key}: not a version-1 heartbeat of ${addr.cluster}`);
  return { ok: true, value: value as unknown as ClusterHeartbeat };
}

/** The slice of an exported slice as an EndpointSlice body (for tests and tools). */
export function exportedSliceBody(namespace: string, s: ExportedSlice): EndpointSlice {
  return { kind: 'EndpointSlice', metadata: { name: s.name, namespace }, addressType: s.addressType, ports: s.ports, endpoints: s.endpoints };
}
