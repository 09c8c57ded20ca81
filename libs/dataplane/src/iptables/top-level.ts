// The fixed top-level chains (D.4.1, D.4.6, D.4.9, D.4.11) and the jumps into them from the
// built-in chains. Not rendered: KUBE-FIREWALL (the localnet guard for localhost NodePorts,
// which we never open) and the KUBE-PROXY-CANARY monitor chain (an agent concern).

import type { DpState } from '../model.ts';
import { masqueradeMark } from '../model.ts';
import {
  KUBE_EXTERNAL_SERVICES,
  KUBE_FORWARD,
  KUBE_MARK_MASQ,
  KUBE_NODEPORTS,
  KUBE_POSTROUTING,
  KUBE_PROXY_FIREWALL,
  KUBE_SERVICES,
} from './chain-names.ts';
import { comment } from './service-rules.ts';

/** Top-level chains in declaration order, per table. */
export const FILTER_CHAINS = [KUBE_NODEPORTS, KUBE_SERVICES, KUBE_EXTERNAL_SERVICES, KUBE_FORWARD, KUBE_PROXY_FIREWALL] as const;
export const NAT_CHAINS = [KUBE_NODEPORTS, KUBE_SERVICES, KUBE_MARK_MASQ, KUBE_POSTROUTING] as const;

/** KUBE-FORWARD: drop INVALID, accept marked service traffic and its replies. */
export function forwardRules(state: DpState): string[] {
  const mark = masqueradeMark(state.masqueradeBit);
  return [
    `-A ${KUBE_FORWARD} -m conntrack --ctstate INVALID -j DROP`,
    `-A ${KUBE_FORWARD} ${comment('kubernetes forwarding rules')} -m mark --mark ${mark}/${mark} -j ACCEPT`,
    `-A ${KUBE_FORWARD} ${comment('kubernetes forwarding conntrack rule')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
  ];
}

/** KUBE-MARK-MASQ and KUBE-POSTROUTING: set the mark, and turn it into SNAT on the way out. */
export function masqueradeRules(state: DpState): string[] {
  const mark = masqueradeMark(state.masqueradeBit);
  return [
    `-A ${KUBE_MARK_MASQ} -j MARK --or-mark ${mark}`,
    `-A ${KUBE_POSTROUTING} -m mark ! --mark ${mark}/${mark} -j RETURN`,
    `-A ${KUBE_POSTROUTING} -j MARK --xor-mark ${mark}`,
    `-A ${KUBE_POSTROUTING} ${comment('kubernetes service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
  ];
}

/**
 * The last rules of nat KUBE-SERVICES: NodePort traffic goes on to KUBE-NODEPORTS, for every
 * local address except loopback, or only for the configured node IPs.
 */
export function nodePortJumpRules(state: DpState): string[] {
  const note = comment('kubernetes service nodeports; NOTE: this must be the last rule in this chain');
  if (state.nodeIPs.length > 0) {
    return state.nodeIPs.map((ip) => `-A ${KUBE_SERVICES} ${note} -d ${ip} -j ${KUBE_NODEPORTS}`);
  }
  const loopback = state.family === 'IPv6' ? '::1/128' : '127.0.0.0/8';
  return [`-A ${KUBE_SERVICES} ${note} -m addrtype --dst-type LOCAL ! -d ${loopback} -j ${KUBE_NODEPORTS}`];
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
 */
export function renderIptablesJumps(): IptablesJump[] {
  return [
    jump('filter', 'INPUT', KUBE_EXTERNAL_SERVICES, 'kubernetes externally-visible service portals', true),
    jump('filter', 'INPUT', KUBE_NODEPORTS, 'kubernetes health check service ports', false),
    jump('filter', 'INPUT', KUBE_PROXY_FIREWALL, 'kubernetes load balancer firewall', true),
    jump('filter', 'FORWARD', KUBE_PROXY_FIREWALL, 'kubernetes load balancer firewall', true),
    jump('filter', 'FORWARD', KUBE_FORWARD, 'kubernetes forwarding rules', false),
    jump('filter', 'FORWARD', KUBE_SERVICES, 'kubernetes service portals', true),
    jump('filter', 'FORWARD', KUBE_EXTERNAL_SERVICES, 'kubernetes externally-visible service portals', true),
    jump('filter', 'OUTPUT', KUBE_PROXY_FIREWALL, 'kubernetes load balancer firewall', true),
    jump('filter', 'OUTPUT', KUBE_SERVICES, 'kubernetes service portals', true),
    jump('nat', 'PREROUTING', KUBE_SERVICES, 'kubernetes service portals', false),
    jump('nat', 'OUTPUT', KUBE_SERVICES, 'kubernetes service portals', false),
    jump('nat', 'POSTROUTING', KUBE_POSTROUTING, 'kubernetes postrouting rules', false),
  ];
}

/** `-I CHAIN n ...` lines placing the table's jumps at the top of the built-in chains, in order. */
export function jumpInsertLines(table: IptablesJump['table']): string[] {
  const position = new Map<string, number>();
  const out: string[] = [];
  for (const j of renderIptablesJumps()) {
    if (j.table !== table) continue;
    const n = (position.get(j.chain) ?? 0) + 1;
    position.set(j.chain, n);
    out.push(`-I ${j.chain} ${n} ${j.args}`);
  }
  return out;
}
