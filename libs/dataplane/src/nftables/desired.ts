// The desired contents of our nftables table, as data: map/set elements, per-service chains
// and affinity sets (D.6.3–D.6.7). Both the full script and the update transaction are
// printed from this, so an update is exactly the difference between two of them.

import { createHash } from 'node:crypto';
import type { DpEndpoint, DpServicePort, DpState } from '../model.ts';
import { joinHostPort, masqueradeMark, sortedServicePorts } from '../model.ts';
import type { NoEndpointVerdict, PortPolicy } from '../policy.ts';
import { cidrContains, portPolicy } from '../policy.ts';
import {
  CLUSTER_IPS_SET,
  FIREWALL_IPS_MAP,
  MARK_MASQ_CHAIN,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  REJECT_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  nftEndpointNames,
  nftServiceNames,
} from './names.ts';

/** Maps and sets whose elements follow the services (values are '' for sets). */
export const ELEMENT_CONTAINERS = [
  CLUSTER_IPS_SET,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  NO_ENDPOINT_NODEPORTS_MAP,
  FIREWALL_IPS_MAP,
] as const;
export type ElementContainer = (typeof ELEMENT_CONTAINERS)[number];

export interface NftDesired {
  /** `ip` or `ip6`: the table family and the address-match keyword. */
  readonly ipX: 'ip' | 'ip6';
  readonly addrType: 'ipv4_addr' | 'ipv6_addr';
  /** Element key → value per container; keys like `172.30.0.41 . tcp . 80`. */
  readonly elements: ReadonlyMap<ElementContainer, ReadonlyMap<string, string>>;
  /** Per-service and per-endpoint chains → rule bodies, in render order. */
  readonly chains: ReadonlyMap<string, readonly string[]>;
  /** Affinity sets → timeout in seconds. */
  readonly affinitySets: ReadonlyMap<string, number>;
  /** Chains whose rules name each affinity set (forced rewrites when a set is recreated). */
  readonly affinityUsers: ReadonlyMap<string, readonly string[]>;
  /** Digest of everything in the fixed part of the table; a change needs a full rewrite. */
  readonly baseDigest: string;
}

function verdictOf(v: NoEndpointVerdict): string {
  return v === 'REJECT' ? `goto ${REJECT_CHAIN}` : 'drop';
}

function quote(text: string): string {
  return `comment "${text}"`;
}

interface Builder {
  readonly ipX: 'ip' | 'ip6';
  readonly state: DpState;
  readonly elements: Map<ElementContainer, Map<string, string>>;
  readonly chains: Map<string, string[]>;
  readonly affinitySets: Map<string, number>;
  readonly affinityUsers: Map<string, string[]>;
}

/**
 * Builds the desired table for `state`. No services → only empty containers (the fixed
 * chains come from the script printers). A port without endpoints contributes only
 * no-endpoint elements and its cluster IP.
 */
export function nftDesired(state: DpState): NftDesired {
  const ipX = state.family === 'IPv6' ? 'ip6' : 'ip';
  const b: Builder = {
    ipX,
    state,
    elements: new Map(ELEMENT_CONTAINERS.map((c) => [c, new Map<string, string>()])),
    chains: new Map(),
    affinitySets: new Map(),
    affinityUsers: new Map(),
  };
  for (const sp of sortedServicePorts(state)) addServicePort(b, sp, portPolicy(sp));
  const base = [state.family, masqueradeMark(state.masqueradeBit), state.nodeIPs.join(',')].join('|');
  return {
    ipX,
    addrType: state.family === 'IPv6' ? 'ipv6_addr' : 'ipv4_addr',
    elements: b.elements,
    chains: b.chains,
    affinitySets: b.affinitySets,
    affinityUsers: b.affinityUsers,
    baseDigest: createHash('sha256').update(base).digest('base64'),
  };
}

function element(b: Builder, container: ElementContainer, key: string, value: string): void {
  b.elements.get(container)?.set(key, value);
}

function addServicePort(b: Builder, sp: DpServicePort, pol: PortPolicy): void {
  const { ipX, state } = b;
  const proto = sp.protocol.toLowerCase();
  const names = nftServiceNames(sp);
  const internalChain = pol.internalToLocal ? names.local : names.service;

  if (sp.clusterIP !== null) {
    const key = `${sp.clusterIP} . ${proto} . ${sp.port}`;
    element(b, CLUSTER_IPS_SET, sp.clusterIP, '');
    if (pol.internalVerdict === null) element(b, SERVICE_IPS_MAP, key, `goto ${internalChain}`);
    else element(b, NO_ENDPOINT_SERVICES_MAP, key, verdictOf(pol.internalVerdict));
  }
  for (const ip of [...sp.externalIPs, ...sp.loadBalancerIPs]) {
    const key = `${ip} . ${proto} . ${sp.port}`;
    if (pol.usesExternalChain) element(b, SERVICE_IPS_MAP, key, `goto ${names.external}`);
    if (pol.externalVerdict !== null) element(b, NO_ENDPOINT_SERVICES_MAP, key, verdictOf(pol.externalVerdict));
  }
  if (pol.usesFirewallChain) {
    for (const ip of sp.loadBalancerIPs) element(b, FIREWALL_IPS_MAP, `${ip} . ${proto} . ${sp.port}`, `goto ${names.firewall}`);
  }
  const nodePort = sp.nodePort ?? 0;
  if (nodePort > 0) {
    const key = `${proto} . ${nodePort}`;
    if (pol.usesExternalChain) element(b, SERVICE_NODEPORTS_MAP, key, `goto ${names.external}`);
    if (pol.externalVerdict !== null) element(b, NO_ENDPOINT_NODEPORTS_MAP, key, verdictOf(pol.externalVerdict));
  }
  if (!pol.hasEndpoints) return;

  const chain = (name: string): string[] => {
    let rules = b.chains.get(name);
    if (!rules) {
      rules = [];
      b.chains.set(name, rules);
    }
    return rules;
  };
  if (pol.usesClusterChain) chain(names.service);
  if (pol.usesLocalChain) chain(names.local);

  // Internal traffic: masquerade off-cluster sources (or everything with masqueradeAll).
  if (pol.internalVerdict === null && sp.clusterIP !== null && (state.masqueradeAll || state.podCIDR !== null)) {
    const notPod = state.masqueradeAll ? '' : ` ${ipX} saddr != ${state.podCIDR}`;
    chain(internalChain).push(`${ipX} daddr ${sp.clusterIP} ${proto} dport ${sp.port}${notPod} jump ${MARK_MASQ_CHAIN}`);
  }

  if (pol.usesExternalChain) {
    const ext = chain(names.external);
    if (!pol.externalToLocal) {
      ext.push(`jump ${MARK_MASQ_CHAIN}`);
    } else if (pol.usesClusterChain) {
      if (state.podCIDR !== null) ext.push(`${ipX} saddr ${state.podCIDR} goto ${names.service} ${quote('short-circuit pod traffic')}`);
      ext.push(`fib saddr type local jump ${MARK_MASQ_CHAIN} ${quote('masquerade local traffic')}`);
      ext.push(`fib saddr type local goto ${names.service} ${quote('short-circuit local traffic')}`);
    }
    if (pol.externalVerdict === null) ext.push(`goto ${pol.externalToLocal ? names.local : names.service}`);
  }

  if (pol.usesFirewallChain) {
    const sources = [...sp.loadBalancerSourceRanges];
    const nodeIP = state.primaryNodeIP ?? state.nodeIPs[0] ?? null;
    if (nodeIP !== null && sp.loadBalancerSourceRanges.some((c) => cidrContains(c, nodeIP))) sources.push(...sp.loadBalancerIPs);
    chain(names.firewall).push(`${ipX} saddr != { ${sources.join(', ')} } drop`);
  }

  if (pol.usesClusterChain) endpointDispatch(b, sp, names.service, pol.clusterEndpoints);
  if (pol.usesLocalChain) endpointDispatch(b, sp, names.local, pol.localEndpoints);

  const affinity = sp.sessionAffinityTimeoutSeconds;
  for (const ep of pol.reachable) {
    const epNames = nftEndpointNames(sp, ep);
    const rules = chain(epNames.chain);
    rules.push(`${ipX} saddr ${ep.ip} jump ${MARK_MASQ_CHAIN}`);
    if (affinity !== null) {
      b.affinitySets.set(epNames.affinitySet, affinity);
      rules.push(`update @${epNames.affinitySet} { ${ipX} saddr }`);
      users(b, epNames.affinitySet).push(epNames.chain);
    }
    rules.push(`meta l4proto ${proto} dnat to ${joinHostPort(ep.ip, ep.port)}`);
  }
}

function users(b: Builder, set: string): string[] {
  let list = b.affinityUsers.get(set);
  if (!list) {
    list = [];
    b.affinityUsers.set(set, list);
  }
  return list;
}

/**
 * Affinity lookups, then one rule per endpoint: rule i matches `numgen random mod (n-i) == 0`
 * (probability 1/(n-i)) and the last is unconditional, so each endpoint gets exactly 1/n.
 * Per-endpoint rules rather than an anonymous `numgen … vmap`, which this kernel loads ~20x
 * slower at scale (TOOLCHAIN).
 */
function endpointDispatch(b: Builder, sp: DpServicePort, chainName: string, endpoints: readonly DpEndpoint[]): void {
  const rules = b.chains.get(chainName) ?? [];
  const targets = endpoints.map((ep) => nftEndpointNames(sp, ep));
  if (sp.sessionAffinityTimeoutSeconds !== null) {
    for (const t of targets) {
      rules.push(`${b.ipX} saddr @${t.affinitySet} goto ${t.chain}`);
      users(b, t.affinitySet).push(chainName);
    }
  }
  const n = targets.length;
  targets.forEach((t, i) => {
    rules.push(i < n - 1 ? `numgen random mod ${n - i} == 0 goto ${t.chain}` : `goto ${t.chain}`);
  });
}
