// The Service an import becomes inside the importing cluster — the "derived Service" of MCS
// implementations, which kube-proxy-like agents program without knowing about imports — and
// the ClusterSet IP it is reached at.

import { createHash } from 'node:crypto';
import type { MergedImport } from './merge-exports.ts';
import type { Service } from '@slicemesh/model';
import { parseIP } from '@slicemesh/model';

/** MCS labels of imported slices and of the derived Service. */
export const LABEL_SOURCE_CLUSTER = 'multicluster.kubernetes.io/source-cluster';
export const LABEL_MCS_SERVICE_NAME = 'multicluster.kubernetes.io/service-name';
/** The managed-by value of imported slices: neither EndpointSlice controller touches them. */
export const MANAGED_BY_MCS = 'multicluster.slicemesh.io';
/** The derived Service's annotations: the exporting clusters, and the conflicts when there are any. */
export const ANNOTATION_IMPORT_CLUSTERS = 'multicluster.slicemesh.io/clusters';
export const ANNOTATION_IMPORT_CONFLICTS = 'multicluster.slicemesh.io/conflicts';

const DERIVED_PREFIX = 'derived-';
const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

function base32hex(bytes: Uint8Array, chars: number): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= chars) break;
  }
  return out;
}

/**
 * `derived-` and 10 characters of the namespaced name's SHA-256 in lowercase base32hex, as the
 * MCS reference controller names them: a valid DNS label, stable in every cluster.
 */
export function derivedServiceName(namespace: string, name: string): string {
  return DERIVED_PREFIX + base32hex(createHash('sha256').update(`${namespace}/${name}`).digest(), 10);
}

/** Whether a Service name is one derivedServiceName makes (the keys the multi-cluster service owns). */
export function isDerivedServiceName(name: string): boolean {
  return name.length === DERIVED_PREFIX.length + 10 && name.startsWith(DERIVED_PREFIX) && /^[0-9a-v]{10}$/.test(name.slice(DERIVED_PREFIX.length));
}

/** An IPv4 CIDR as its first address and size; throws RangeError for anything else or a range under /30. */
export function parseIPv4Cidr(cidr: string): { readonly base: number; readonly size: number } {
  const m = /^([0-9.]+)\/(\d{1,2})$/.exec(cidr);
  const ip = m ? parseIP(m[1] as string) : null;
  const bits = m ? Number(m[2]) : NaN;
  if (!m || ip === null || ip.family !== 'IPv4' || !(bits >= 8 && bits <= 30)) throw new RangeError(`${JSON.stringify(cidr)} is not an IPv4 CIDR from /8 to /30`);
  const parts = (m[1] as string).split('.').map(Number);
  const addr = (((parts[0] as number) << 24) | ((parts[1] as number) << 16) | ((parts[2] as number) << 8) | (parts[3] as number)) >>> 0;
  const size = 2 ** (32 - bits);
  return { base: addr - (addr % size), size };
}

const ipText = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/**
 * The ClusterSet IP of `namespace/name` in `cidr`: a host address picked by hash, then the next
 * free one (wrapping) when `taken` holds it. The same Service gets the same address in every
 * cluster unless two hash alike; throws RangeError when the range is full.
 */
export function allocateClusterSetIp(cidr: string, namespace: string, name: string, taken: ReadonlySet<string>): string {
  const { base, size } = parseIPv4Cidr(cidr);
  const hosts = size - 2; // no network or broadcast address
  const start = createHash('sha256').update(`${namespace}/${name}`).digest().readUInt32BE(0) % hosts;
  for (let i = 0; i < hosts; i++) {
    const ip = ipText(base + 1 + ((start + i) % hosts));
    if (!taken.has(ip)) return ip;
  }
  throw new RangeError(`the ClusterSet IP range ${cidr} is full (${hosts} addresses)`);
}

/**
 * The derived Service of an import: ClusterIP at the ClusterSet IP (or headless), the merged
 * ports, the session affinity with precedence; no selector, so nothing slices it but us.
 */
export function derivedService(merged: MergedImport, clusterSetIp: string | null): Service {
  const name = derivedServiceName(merged.namespace, merged.name);
  const headless = merged.type === 'Headless' || clusterSetIp === null;
  const ip = headless ? 'None' : clusterSetIp;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: merged.namespace,
      labels: { [LABEL_MCS_SERVICE_NAME]: merged.name },
      annotations: {
        [ANNOTATION_IMPORT_CLUSTERS]: merged.clusters.join(','),
        ...(merged.conflicts.length > 0 ? { [ANNOTATION_IMPORT_CONFLICTS]: merged.conflicts.join('; ') } : {}),
      },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP: ip,
      clusterIPs: [ip],
      ipFamilies: ['IPv4'],
      ports: merged.ports.map((p) => ({ ...(p.name !== undefined ? { name: p.name } : {}), protocol: p.protocol, port: p.port, targetPort: p.port, ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}) })),
      sessionAffinity: merged.sessionAffinity,
      ...(merged.sessionAffinity === 'ClientIP' ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: merged.sessionAffinityTimeoutSeconds ?? 10_800 } } } : {}),
    },
  };
}
