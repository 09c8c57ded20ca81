// One service port's iptables rules (D.4.2–D.4.10): its lines in the shared dispatch chains
// (always rendered) and its own KUBE-SVC/SVL/EXT/FW/SEP chains (rendered when it changed),
// every name taken from the context's naming (D.4.15).

import type { DpEndpoint, DpServicePort } from '../model.ts';
import { joinHostPort, upstreamPortName } from '../model.ts';
import type { PortPolicy } from '../policy.ts';
import { cascadeProbability, cidrContains } from '../policy.ts';
import type { IptablesChainNames, ServiceChainNames } from './chain-names.ts';

/** Node-wide settings the per-service rules depend on. */
export interface IptablesContext {
  /** Every chain name comes from here. */
  readonly chains: IptablesChainNames;
  readonly podCIDR: string | null;
  readonly masqueradeAll: boolean;
  /** Omit per-endpoint comments (D.4.13). */
  readonly largeCluster: boolean;
  /** The node's IP, to let it reach its own LB IPs through source ranges (D.4.10). */
  readonly nodeIP: string | null;
}

/** Lines one service port contributes to the shared chains, grouped per chain. */
export interface DispatchSink {
  readonly natServices: string[];
  readonly natNodePorts: string[];
  readonly filterServices: string[];
  readonly filterExternal: string[];
  readonly filterNodePorts: string[];
  readonly filterFirewall: string[];
}

/** A service's own nat chains: declarations and rules, appended in render order. */
export interface ChainSink {
  readonly declared: string[];
  readonly rules: string[];
}

/** Quotes a comment the way iptables-save does: only when it has spaces. */
export function comment(text: string): string {
  return /^[A-Za-z0-9_./:-]+$/.test(text) ? `-m comment --comment ${text}` : `-m comment --comment "${text}"`;
}

function protoArgs(sp: DpServicePort): string {
  const p = sp.protocol.toLowerCase();
  return `-m ${p} -p ${p}`;
}

/** Appends the port's dispatch lines (nat entry points, filter REJECT/DROP/firewall/health check). */
export function renderDispatch(sp: DpServicePort, pol: PortPolicy, names: ServiceChainNames, chains: IptablesChainNames, out: DispatchSink): void {
  const { services, externalServices, nodePorts, proxyFirewall } = chains;
  const name = upstreamPortName(sp.servicePortName);
  const proto = protoArgs(sp);
  const dport = `--dport ${sp.port}`;
  const noEndpoints = (v: string): string => comment(`${name} ${v === 'REJECT' ? 'has no endpoints' : 'has no local endpoints'}`);
  const internalChain = pol.internalToLocal ? names.svl : names.svc;
  if (sp.clusterIP !== null) {
    if (pol.internalVerdict === null) {
      out.natServices.push(`-A ${services} ${comment(`${name} cluster IP`)} ${proto} -d ${sp.clusterIP} ${dport} -j ${internalChain}`);
    } else {
      out.filterServices.push(`-A ${services} ${noEndpoints(pol.internalVerdict)} ${proto} -d ${sp.clusterIP} ${dport} -j ${pol.internalVerdict}`);
    }
  }
  for (const ip of sp.externalIPs) {
    if (pol.usesExternalChain) {
      out.natServices.push(`-A ${services} ${comment(`${name} external IP`)} ${proto} -d ${ip} ${dport} -j ${names.ext}`);
    }
    if (pol.externalVerdict !== null) {
      out.filterExternal.push(`-A ${externalServices} ${noEndpoints(pol.externalVerdict)} ${proto} -d ${ip} ${dport} -j ${pol.externalVerdict}`);
    }
  }
  for (const ip of sp.loadBalancerIPs) {
    if (pol.usesExternalChain) {
      const target = pol.usesFirewallChain ? names.fw : names.ext;
      out.natServices.push(`-A ${services} ${comment(`${name} loadbalancer IP`)} ${proto} -d ${ip} ${dport} -j ${target}`);
    }
    if (pol.usesFirewallChain) {
      out.filterFirewall.push(
        `-A ${proxyFirewall} ${comment(`${name} traffic not accepted by ${names.fw}`)} ${proto} -d ${ip} ${dport} -j DROP`,
      );
    }
    if (pol.externalVerdict !== null) {
      out.filterExternal.push(`-A ${externalServices} ${noEndpoints(pol.externalVerdict)} ${proto} -d ${ip} ${dport} -j ${pol.externalVerdict}`);
    }
  }
  const nodePort = sp.nodePort ?? 0;
  if (nodePort > 0) {
    if (pol.usesExternalChain) {
      out.natNodePorts.push(`-A ${nodePorts} ${comment(name)} ${proto} --dport ${nodePort} -j ${names.ext}`);
    }
    if (pol.externalVerdict !== null) {
      out.filterExternal.push(
        `-A ${externalServices} ${noEndpoints(pol.externalVerdict)} -m addrtype --dst-type LOCAL ${proto} --dport ${nodePort} -j ${pol.externalVerdict}`,
      );
    }
  }
  if (sp.healthCheckNodePort !== null && sp.healthCheckNodePort > 0) {
    out.filterNodePorts.push(
      `-A ${nodePorts} ${comment(`${name} health check node port`)} -m tcp -p tcp --dport ${sp.healthCheckNodePort} -j ACCEPT`,
    );
  }
}

/**
 * Appends the port's own nat chains and returns their names. A port without endpoints owns no
 * chains (its traffic is handled by the filter REJECT rules alone).
 */
export function renderServiceChains(
  sp: DpServicePort,
  pol: PortPolicy,
  names: ServiceChainNames,
  ctx: IptablesContext,
  out: ChainSink,
): string[] {
  const chains: string[] = [];
  if (!pol.hasEndpoints) return chains;
  const name = upstreamPortName(sp.servicePortName);
  const rules = out.rules;
  const markMasq = ctx.chains.markMasq;
  if (pol.usesClusterChain) chains.push(names.svc);
  if (pol.usesLocalChain) chains.push(names.svl);
  if (pol.usesExternalChain) chains.push(names.ext);
  if (pol.usesFirewallChain) chains.push(names.fw);
  const sepNames = pol.reachable.map((ep) => ctx.chains.endpoint(sp, ep));
  for (const c of chains) out.declared.push(c);
  for (const c of sepNames) out.declared.push(c);

  // Internal traffic: masquerade off-cluster sources (or everything with masqueradeAll).
  if (pol.internalVerdict === null && sp.clusterIP !== null && (ctx.masqueradeAll || ctx.podCIDR !== null)) {
    const internal = pol.internalToLocal ? names.svl : names.svc;
    const notPod = ctx.masqueradeAll ? '' : ` ! -s ${ctx.podCIDR}`;
    rules.push(
      `-A ${internal} ${comment(`${name} cluster IP`)} ${protoArgs(sp)} -d ${sp.clusterIP} --dport ${sp.port}${notPod} -j ${markMasq}`,
    );
  }

  if (pol.usesExternalChain) {
    if (!pol.externalToLocal) {
      rules.push(`-A ${names.ext} ${comment(`masquerade traffic for ${name} external destinations`)} -j ${markMasq}`);
    } else if (pol.usesClusterChain) {
      // Pods and the node itself skip the Local policy, as if they went out to the LB and back.
      if (ctx.podCIDR !== null) {
        rules.push(`-A ${names.ext} ${comment(`pod traffic for ${name} external destinations`)} -s ${ctx.podCIDR} -j ${names.svc}`);
      }
      rules.push(`-A ${names.ext} ${comment(`masquerade LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j ${markMasq}`);
      rules.push(`-A ${names.ext} ${comment(`route LOCAL traffic for ${name} external destinations`)} -m addrtype --src-type LOCAL -j ${names.svc}`);
    }
    if (pol.externalVerdict === null) {
      rules.push(`-A ${names.ext} -j ${pol.externalToLocal ? names.svl : names.svc}`);
    }
  }

  if (pol.usesFirewallChain) {
    const lb = comment(`${name} loadbalancer IP`);
    for (const cidr of sp.loadBalancerSourceRanges) rules.push(`-A ${names.fw} ${lb} -s ${cidr} -j ${names.ext}`);
    const nodeIP = ctx.nodeIP;
    if (nodeIP !== null && sp.loadBalancerSourceRanges.some((c) => cidrContains(c, nodeIP))) {
      for (const ip of sp.loadBalancerIPs) rules.push(`-A ${names.fw} ${lb} -s ${ip} -j ${names.ext}`);
    }
    rules.push(`-A ${names.fw} ${comment(`other traffic to ${name} will be dropped by ${ctx.chains.proxyFirewall}`)}`);
  }

  if (pol.usesClusterChain) endpointJumps(sp, names.svc, pol.clusterEndpoints, ctx, rules);
  if (pol.usesLocalChain) endpointJumps(sp, names.svl, pol.localEndpoints, ctx, rules);

  const svcComment = ctx.largeCluster ? '' : ` ${comment(name)}`;
  const affinity = sp.sessionAffinityTimeoutSeconds;
  pol.reachable.forEach((ep, i) => {
    const sep = sepNames[i] ?? '';
    rules.push(`-A ${sep}${svcComment} -s ${ep.ip} -j ${markMasq}`);
    const recent = affinity !== null ? ` -m recent --name ${sep} --set` : '';
    rules.push(`-A ${sep}${svcComment}${recent} ${protoArgs(sp)} -j DNAT --to-destination ${joinHostPort(ep.ip, ep.port)}`);
  });
  for (const c of sepNames) chains.push(c);
  return chains;
}

/** Affinity checks, then the random cascade: rule i has probability 1/(n-i), the last none. */
function endpointJumps(
  sp: DpServicePort,
  chain: string,
  endpoints: readonly DpEndpoint[],
  ctx: IptablesContext,
  rules: string[],
): void {
  const name = upstreamPortName(sp.servicePortName);
  const n = endpoints.length;
  const seps = endpoints.map((ep) => ctx.chains.endpoint(sp, ep));
  const notes = endpoints.map((ep) => (ctx.largeCluster ? '' : ` ${comment(`${name} -> ${joinHostPort(ep.ip, ep.port)}`)}`));
  const affinity = sp.sessionAffinityTimeoutSeconds;
  if (affinity !== null) {
    for (let i = 0; i < n; i++) {
      rules.push(`-A ${chain}${notes[i]} -m recent --name ${seps[i]} --rcheck --seconds ${affinity} --reap -j ${seps[i]}`);
    }
  }
  for (let i = 0; i < n; i++) {
    const stat = i < n - 1 ? ` -m statistic --mode random --probability ${cascadeProbability(i, n)}` : '';
    rules.push(`-A ${chain}${notes[i]}${stat} -j ${seps[i]}`);
  }
}
