// iptables chain names (D.4.2). Every chain we own starts with `KUBE-`; per-service chains
// are a prefix plus 16 base32 characters of sha256, so they fit iptables' 28-character limit.

import { hash16 } from '../hash.ts';
import type { DpEndpoint, DpServicePort } from '../model.ts';
import { joinHostPort, upstreamPortName } from '../model.ts';

export const KUBE_SERVICES = 'KUBE-SERVICES';
export const KUBE_EXTERNAL_SERVICES = 'KUBE-EXTERNAL-SERVICES';
export const KUBE_FORWARD = 'KUBE-FORWARD';
export const KUBE_NODEPORTS = 'KUBE-NODEPORTS';
export const KUBE_PROXY_FIREWALL = 'KUBE-PROXY-FIREWALL';
export const KUBE_POSTROUTING = 'KUBE-POSTROUTING';
export const KUBE_MARK_MASQ = 'KUBE-MARK-MASQ';

/** Prefixes of the per-service chains: only these are ever deleted as stale. */
export const SERVICE_CHAIN_PREFIXES = ['KUBE-SVC-', 'KUBE-SVL-', 'KUBE-EXT-', 'KUBE-FW-', 'KUBE-SEP-'] as const;

export interface ServiceChainNames {
  /** Cluster-policy endpoints. */
  readonly svc: string;
  /** Local-policy endpoints. */
  readonly svl: string;
  /** Entry point for NodePort, external and LB IP traffic. */
  readonly ext: string;
  /** loadBalancerSourceRanges filter. */
  readonly fw: string;
}

/** Chain names of one service port: hash of `ns/name:port` + lowercase protocol. */
export function serviceChainNames(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>): ServiceChainNames {
  const h = hash16(upstreamPortName(sp.servicePortName) + sp.protocol.toLowerCase());
  return { svc: `KUBE-SVC-${h}`, svl: `KUBE-SVL-${h}`, ext: `KUBE-EXT-${h}`, fw: `KUBE-FW-${h}` };
}

/** `KUBE-SEP-` chain of one endpoint: hash of `ns/name:port` + protocol + `ip:port`. */
export function endpointChainName(
  sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>,
  ep: Pick<DpEndpoint, 'ip' | 'port'>,
): string {
  return `KUBE-SEP-${hash16(upstreamPortName(sp.servicePortName) + sp.protocol.toLowerCase() + joinHostPort(ep.ip, ep.port))}`;
}

/** True for chains this library creates per service (and may delete when they go stale). */
export function isServiceChain(chain: string): boolean {
  return SERVICE_CHAIN_PREFIXES.some((p) => chain.startsWith(p));
}
