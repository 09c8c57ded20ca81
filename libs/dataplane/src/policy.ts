// The traffic-policy decisions every backend shares (D.4.7, D.4.8): which policy chains exist,
// where internal and external traffic goes, and what happens when there is nowhere to go.

import type { DpEndpoint, DpServicePort } from './model.ts';
import { joinHostPort } from './model.ts';
import { parseIP } from '@slicemesh/model';

/** What to do with traffic that has no usable endpoint: REJECT (none at all) or DROP (none local). */
export type NoEndpointVerdict = 'REJECT' | 'DROP';

export interface PortPolicy {
  /** The service has usable endpoints somewhere (D.3.4). */
  readonly hasEndpoints: boolean;
  /** NodePort, LB IPs or external IPs exist (D.1.2). */
  readonly externallyAccessible: boolean;
  /** Cluster-policy chain exists: Cluster endpoints are used and there is at least one. */
  readonly usesClusterChain: boolean;
  /** Local-policy chain exists: Local endpoints are used and there is at least one. */
  readonly usesLocalChain: boolean;
  /** Internal (ClusterIP) traffic goes to the Local chain rather than the Cluster chain. */
  readonly internalToLocal: boolean;
  /** External traffic finally goes to the Local chain rather than the Cluster chain. */
  readonly externalToLocal: boolean;
  /** The external chain exists (kept even without external endpoints for the short-circuit). */
  readonly usesExternalChain: boolean;
  /** The firewall chain (loadBalancerSourceRanges) exists. */
  readonly usesFirewallChain: boolean;
  /** null when internal traffic has endpoints. */
  readonly internalVerdict: NoEndpointVerdict | null;
  /** null when external traffic has endpoints. */
  readonly externalVerdict: NoEndpointVerdict | null;
  /** Every endpoint some policy chain may send to, de-duplicated by ip:port, first copy kept. */
  readonly reachable: readonly DpEndpoint[];
  readonly clusterEndpoints: readonly DpEndpoint[];
  readonly localEndpoints: readonly DpEndpoint[];
}

/**
 * Decides the policy plumbing of one service port.
 * No endpoints at all → both verdicts REJECT and no chains; a Local policy without local
 * endpoints → that direction DROPs; an all-terminating port is whatever the caller's
 * categorisation put in the endpoint lists (serving+terminating fallbacks count as endpoints).
 * A policy whose list is empty while `hasAnyEndpoints` is true gets DROP (cannot happen with
 * upstream categorisation for Cluster, which falls back to terminating endpoints).
 */
export function portPolicy(sp: DpServicePort): PortPolicy {
  const cluster = sp.clusterEndpoints ?? [];
  const local = sp.localEndpoints ?? [];
  const hasEndpoints = sp.hasAnyEndpoints;
  const externallyAccessible =
    (sp.nodePort ?? 0) > 0 || sp.loadBalancerIPs.length > 0 || sp.externalIPs.length > 0;
  const usesClusterChain = hasEndpoints && sp.clusterEndpoints !== null && cluster.length > 0;
  const usesLocalChain = hasEndpoints && sp.localEndpoints !== null && local.length > 0;
  const internalToLocal = sp.internalPolicyLocal;
  const externalToLocal = sp.externalPolicyLocal;
  const hasInternal = internalToLocal ? usesLocalChain : usesClusterChain;
  const hasExternal = externalToLocal ? usesLocalChain : usesClusterChain;
  const none: NoEndpointVerdict | null = hasEndpoints ? null : 'REJECT';
  const reachable: DpEndpoint[] = [];
  const seen = new Set<string>();
  for (const ep of [...(usesClusterChain ? cluster : []), ...(usesLocalChain ? local : [])]) {
    const key = joinHostPort(ep.ip, ep.port);
    if (seen.has(key)) continue;
    seen.add(key);
    reachable.push(ep);
  }
  return {
    hasEndpoints,
    externallyAccessible,
    usesClusterChain,
    usesLocalChain,
    internalToLocal,
    externalToLocal,
    usesExternalChain: hasEndpoints && externallyAccessible,
    usesFirewallChain: hasEndpoints && sp.loadBalancerIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0,
    internalVerdict: none ?? (hasInternal ? null : 'DROP'),
    // Without external entry points there is no external traffic to drop.
    externalVerdict: none ?? (hasExternal || !externallyAccessible ? null : 'DROP'),
    reachable,
    clusterEndpoints: usesClusterChain ? cluster : [],
    localEndpoints: usesLocalChain ? local : [],
  };
}

/** Probability for rule i of n in kube-proxy's cascade: 1/(n-i), 10 decimals (D.4.3). */
export function cascadeProbability(i: number, n: number): string {
  return (1 / (n - i)).toFixed(10);
}

/** Whether `ip` lies inside `cidr` (same family, masked or not). Pure text arithmetic. */
export function cidrContains(cidr: string, ip: string): boolean {
  const slash = cidr.indexOf('/');
  const base = slash < 0 ? cidr : cidr.slice(0, slash);
  const a = parseIP(base)?.bytes;
  const b = parseIP(ip)?.bytes;
  if (!a || !b || a.length !== b.length) return false;
  const bits = slash < 0 ? a.length * 8 : Number(cidr.slice(slash + 1));
  for (let i = 0; i < a.length; i++) {
    const take = Math.max(0, Math.min(8, bits - i * 8));
    if (take === 0) return true;
    const mask = (0xff << (8 - take)) & 0xff;
    if (((a[i] ?? 0) & mask) !== ((b[i] ?? 0) & mask)) return false;
  }
  return true;
}
