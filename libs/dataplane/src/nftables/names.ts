// nftables object names (D.6.1, D.6.4). Everything lives in our own table, so names carry no
// `kube-` prefix; per-service names are an 8-character base32 sha256 prefix (unique even if
// truncated, and visually distinct) followed by the readable `ns/name/proto/port` text.

import { hash16 } from '../hash.ts';
import type { DpEndpoint, DpServicePort } from '../model.ts';
import { splitPortName } from '../model.ts';

export const TABLE_NAME = 'slicemesh';

export const SERVICES_CHAIN = 'services';
export const SERVICE_IPS_MAP = 'service-ips';
export const SERVICE_NODEPORTS_MAP = 'service-nodeports';
export const NODEPORT_IPS_SET = 'nodeport-ips';
export const CLUSTER_IPS_SET = 'cluster-ips';
export const SERVICE_ENDPOINTS_CHECK_CHAIN = 'service-endpoints-check';
export const NODEPORT_ENDPOINTS_CHECK_CHAIN = 'nodeport-endpoints-check';
export const NO_ENDPOINT_SERVICES_MAP = 'no-endpoint-services';
export const NO_ENDPOINT_NODEPORTS_MAP = 'no-endpoint-nodeports';
export const REJECT_CHAIN = 'reject-chain';
export const CLUSTER_IPS_CHECK_CHAIN = 'cluster-ips-check';
export const FIREWALL_IPS_MAP = 'firewall-ips';
export const FIREWALL_CHECK_CHAIN = 'firewall-check';
export const MARK_MASQ_CHAIN = 'mark-for-masquerade';
export const MASQUERADING_CHAIN = 'masquerading';

/** nft's limit on object names, and room left after our longest prefix ("firewall-"). */
const NAME_LENGTH_MAX = 256;
const PREFIX_LENGTH_MAX = 16;
const BASE_LENGTH_MAX = NAME_LENGTH_MAX - PREFIX_LENGTH_MAX;

function hashAndTruncate(name: string): string {
  const full = `${hash16(name).slice(0, 8)}-${name}`;
  return full.length > BASE_LENGTH_MAX ? `${full.slice(0, BASE_LENGTH_MAX - 3)}...` : full;
}

export interface NftServiceNames {
  readonly service: string;
  readonly local: string;
  readonly external: string;
  readonly firewall: string;
}

/** Chain names of one service port, e.g. `service-ULMVA6XW-ns1/svc1/tcp/p80`. */
export function nftServiceNames(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>): NftServiceNames {
  const { namespace, name, port } = splitPortName(sp.servicePortName);
  const base = hashAndTruncate(`${namespace}/${name}/${sp.protocol.toLowerCase()}/${port}`);
  return { service: `service-${base}`, local: `local-${base}`, external: `external-${base}`, firewall: `firewall-${base}` };
}

export interface NftEndpointNames {
  readonly chain: string;
  readonly affinitySet: string;
}

/** Endpoint chain and affinity set, e.g. `endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80`. */
export function nftEndpointNames(
  sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>,
  ep: Pick<DpEndpoint, 'ip' | 'port'>,
): NftEndpointNames {
  const { namespace, name, port } = splitPortName(sp.servicePortName);
  // ':' is not allowed in names; IPv6 colons become dots.
  const ip = ep.ip.replaceAll(':', '.');
  const base = hashAndTruncate(`${namespace}/${name}/${sp.protocol.toLowerCase()}/${port}__${ip}/${ep.port}`);
  return { chain: `endpoint-${base}`, affinitySet: `affinity-${base}` };
}

/** Per-service chains and sets carry a '/' in their names; the fixed ones never do. */
export function isServiceObjectName(name: string): boolean {
  return name.includes('/');
}
