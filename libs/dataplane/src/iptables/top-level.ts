// The fixed top-level chains (D.4.1, D.4.6, D.4.9, D.4.11) and the jumps into them from the
// built-in chains, under the names of one naming (D.4.15). Not rendered: KUBE-FIREWALL (the
// localnet guard for localhost NodePorts, which we never open) and the KUBE-PROXY-CANARY
// monitor chain (an agent concern).

import type { DpState } from '../model.ts';
import { masqueradeMark } from '../model.ts';
import type { IptablesChainNames } from './chain-names.ts';
import { OWN_CHAINS } from './chain-names.ts';
import { comment } from './service-rules.ts';

/** Top-level chains in declaration order: filter. */
export function filterChains(n: IptablesChainNames): string[] {
  return [n.nodePorts, n.services, n.externalServices, n.forward, n.proxyFirewall];
}

/** Top-level chains in declaration order: nat. */
export function natChains(n: IptablesChainNames): string[] {
  return [n.nodePorts, n.services, n.markMasq, n.postrouting];
}

/** KUBE-FORWARD: drop INVALID, accept marked service traffic and its replies. */
export function forwardRules(state: DpState, n: IptablesChainNames): string[] {
  const mark = masqueradeMark(state.masqueradeBit);
  return [
    `-A ${n.forward} -m conntrack --ctstate INVALID -j DROP`,
    `-A ${n.forward} ${comment('kubernetes forwarding rules')} -m mark --mark ${mark}/${mark} -j ACCEPT`,
    `-A ${n.forward} ${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
  ];
}

/** KUBE-MARK-MASQ and KUBE-POSTROUTING: set the mark, and turn it into SNAT on the way out. */
export function masqueradeRules(state: DpState, n: IptablesChainNames): string[] {
  const mark = masqueradeMark(state.masqueradeBit);
  return [
    `-A ${n.markMasq} -j MARK --or-mark ${mark}`,
    `-A ${n.postrouting} -m mark ! --mark ${mark}/${mark} -j RETURN`,
    `-A ${n.postrouting} -j MARK --xor-mark ${mark}`,
    `-A ${n.postrouting} ${comment('kubernetes service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
  ];
}

/**
 * The last rules of nat KUBE-SERVICES: NodePort traffic goes on to KUBE-NODEPORTS, for every
 * local address except loopback, or only for the configured node IPs.
 */
export function nodePortJumpRules(state: DpState, n: IptablesChainNames): string[] {
  const note = comment('kubernetes service nodeports; NOTE: this must be the last rule in this chain');
  if (state.nodeIPs.length > 0) {
    return state.nodeIPs.map((ip) => `-A ${n.services} ${note} -d ${ip} -j ${n.nodePorts}`);
  }
  const loopback = state.family === 'IPv6' ? '::1/128' : '127.0.0.0/8';
  return [`-A ${n.services} ${note} -m addrtype --dst-type LOCAL ! -d ${loopback} -j ${n.nodePorts}`];
}

/** One jump from a built-in chain into ours. */
export interface IptablesJump {
  readonly table: 'filter' | 'nat';
  /** Built-in chain holding the jump. */
  readonly chain: 'INPUT' | 'FORWARD' | 'OUTPUT' | 'PREROUTING' | 'POSTROUTING';
  readonly target: string;
  /** Rule arguments after the chain name, e.g. for `iptables -t nat -C PREROUTING <args>`. */
  readonly args: string;
}

function jump(table: IptablesJump['table'], chain: IptablesJump['chain'], target: string, note: string, newOnly: boolean): IptablesJump {
  const match = newOnly ? ' -m conntrack --ctstate NEW' : '';
  return { table, chain, target, args: `${comment(note)}${match} -j ${target}` };
}

/**
 * The jumps from the built-in chains (D.4.1), in the order they should sit at the top of each
 * built-in chain. Restore format cannot test for an existing rule, so an adapter ensures these
 * one by one (`-C` then `-I`), while `renderIptablesFull` inserts them unconditionally.
 * The targets are the chains of `n` (default: our own names), so beside kube-proxy each
 * proxy's jumps lead to its own chains and `-C` never mistakes one for the other.
 */
export function renderIptablesJumps(n: IptablesChainNames = OWN_CHAINS): IptablesJump[] {
  return [
    jump('filter', 'INPUT', n.externalServices, 'kubernetes externally-visible service portals', true),
    jump('filter', 'INPUT', n.nodePorts, 'kubernetes health check service ports', false),
    jump('filter', 'INPUT', n.proxyFirewall, 'kubernetes load balancer firewall', true),
    jump('filter', 'FORWARD', n.proxyFirewall, 'kubernetes load balancer firewall', true),
    jump('filter', 'FORWARD', n.forward, 'kubernetes forwarding rules', false),
    jump('filter', 'FORWARD', n.services, 'kubernetes service portals', true),
    jump('filter', 'FORWARD', n.externalServices, 'kubernetes externally-visible service portals', true),
    jump('filter', 'OUTPUT', n.proxyFirewall, 'kubernetes load balancer firewall', true),
    jump('filter', 'OUTPUT', n.services, 'kubernetes service portals', true),
    jump('nat', 'PREROUTING', n.services, 'kubernetes service portals', false),
    jump('nat', 'OUTPUT', n.services, 'kubernetes service portals', false),
    jump('nat', 'POSTROUTING', n.postrouting, 'kubernetes postrouting rules', false),
  ];
}

/** `-I CHAIN n ...` lines placing the table's jumps at the top of the built-in chains, in order. */
export function jumpInsertLines(table: IptablesJump['table'], n: IptablesChainNames): string[] {
  const position = new Map<string, number>();
  const out: string[] = [];
  for (const j of renderIptablesJumps(n)) {
    if (j.table !== table) continue;
    const at = (position.get(j.chain) ?? 0) + 1;
    position.set(j.chain, at);
    out.push(`-I ${j.chain} ${at} ${j.args}`);
  }
  return out;
}
