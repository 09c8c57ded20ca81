// The fixed part of our table (D.6.2, D.6.3, D.6.7): base chains with their hooks, the
// dispatch chains and maps, masquerading. Printed as flat `nft -f` commands.
//
// Not rendered: the ServiceCIDR "drop traffic to unallocated ClusterIPs" rule (the model has
// no ServiceCIDRs) and health-check node port accepts (the filter chains accept by default).
//
// nft 1.0.6 notes (TOOLCHAIN): a one-line `{ ... }` body needs `;` before `}`, and numeric
// priorities are used everywhere because the output hook rejects the `dstnat` keyword.

import type { DpState } from '../model.ts';
import { masqueradeMark } from '../model.ts';
import type { NftDesired } from './desired.ts';
import {
  CLUSTER_IPS_CHECK_CHAIN,
  CLUSTER_IPS_SET,
  FIREWALL_CHECK_CHAIN,
  FIREWALL_IPS_MAP,
  MARK_MASQ_CHAIN,
  MASQUERADING_CHAIN,
  NODEPORT_ENDPOINTS_CHECK_CHAIN,
  NODEPORT_IPS_SET,
  NO_ENDPOINT_NODEPORTS_MAP,
  NO_ENDPOINT_SERVICES_MAP,
  REJECT_CHAIN,
  SERVICES_CHAIN,
  SERVICE_ENDPOINTS_CHECK_CHAIN,
  SERVICE_IPS_MAP,
  SERVICE_NODEPORTS_MAP,
  TABLE_NAME,
} from './names.ts';

/** dstnat is -100, srcnat 100; filter chains run 10 before (and one 10 after) DNAT. */
const BASE_CHAINS = [
  ['filter-prerouting', 'filter', 'prerouting', -110],
  ['filter-input', 'filter', 'input', -110],
  ['filter-forward', 'filter', 'forward', -110],
  ['filter-output', 'filter', 'output', -110],
  ['filter-output-post-dnat', 'filter', 'output', -90],
  ['nat-prerouting', 'nat', 'prerouting', -100],
  ['nat-output', 'nat', 'output', -100],
  ['nat-postrouting', 'nat', 'postrouting', 100],
] as const;

/** Jumps from base chains to regular chains; the filter ones only for new connections. */
const JUMPS = [
  ['filter-input', 'ct state new', NODEPORT_ENDPOINTS_CHECK_CHAIN],
  ['filter-input', 'ct state new', SERVICE_ENDPOINTS_CHECK_CHAIN],
  ['filter-forward', 'ct state new', SERVICE_ENDPOINTS_CHECK_CHAIN],
  ['filter-output', 'ct state new', SERVICE_ENDPOINTS_CHECK_CHAIN],
  ['filter-prerouting', 'ct state new', FIREWALL_CHECK_CHAIN],
  ['filter-output', 'ct state new', FIREWALL_CHECK_CHAIN],
  ['nat-output', '', SERVICES_CHAIN],
  ['nat-prerouting', '', SERVICES_CHAIN],
  ['nat-postrouting', '', MASQUERADING_CHAIN],
  ['filter-forward', 'ct state new', CLUSTER_IPS_CHECK_CHAIN],
  ['filter-output-post-dnat', 'ct state new', CLUSTER_IPS_CHECK_CHAIN],
] as const;

const REGULAR_CHAINS = [
  SERVICES_CHAIN,
  SERVICE_ENDPOINTS_CHECK_CHAIN,
  NODEPORT_ENDPOINTS_CHECK_CHAIN,
  FIREWALL_CHECK_CHAIN,
  CLUSTER_IPS_CHECK_CHAIN,
  REJECT_CHAIN,
  MARK_MASQ_CHAIN,
  MASQUERADING_CHAIN,
] as const;

/** `ip slicemesh` / `ip6 slicemesh`. */
export function tableRef(state: DpState): string {
  return `${state.family === 'IPv6' ? 'ip6' : 'ip'} ${TABLE_NAME}`;
}

/**
 * Commands recreating the fixed part of the table from nothing. They start with the
 * add-then-delete idiom so the same script applies to a node with or without the table.
 */
export function baseCommands(state: DpState, d: NftDesired): string[] {
  const t = tableRef(state);
  const { ipX, addrType } = d;
  const mark = masqueradeMark(state.masqueradeBit);
  const noLocalhost = ipX === 'ip6' ? 'ip6 daddr != ::1' : 'ip daddr != 127.0.0.0/8';
  const matchAll = state.nodeIPs.length === 0;
  const out = [`add table ${t}`, `delete table ${t}`, `add table ${t}`];
  for (const [name, type, hook, prio] of BASE_CHAINS) {
    out.push(`add chain ${t} ${name} { type ${type} hook ${hook} priority ${prio} ; }`);
  }
  for (const name of REGULAR_CHAINS) out.push(`add chain ${t} ${name}`);

  const key = `${addrType} . inet_proto . inet_service`;
  out.push(`add set ${t} ${CLUSTER_IPS_SET} { type ${addrType} ; comment "Active ClusterIPs" ; }`);
  out.push(`add map ${t} ${SERVICE_IPS_MAP} { type ${key} : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`);
  out.push(`add map ${t} ${SERVICE_NODEPORTS_MAP} { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`);
  out.push(`add map ${t} ${NO_ENDPOINT_SERVICES_MAP} { type ${key} : verdict ; comment "drop or reject traffic to services without endpoints" ; }`);
  out.push(`add map ${t} ${NO_ENDPOINT_NODEPORTS_MAP} { type inet_proto . inet_service : verdict ; comment "drop or reject traffic to nodeports without endpoints" ; }`);
  out.push(`add map ${t} ${FIREWALL_IPS_MAP} { type ${key} : verdict ; comment "destinations subject to loadBalancerSourceRanges" ; }`);
  if (!matchAll) {
    out.push(`add set ${t} ${NODEPORT_IPS_SET} { type ${addrType} ; comment "IPs that accept NodePort traffic" ; }`);
    for (const ip of state.nodeIPs) out.push(`add element ${t} ${NODEPORT_IPS_SET} { ${ip} }`);
  }

  for (const [from, match, to] of JUMPS) out.push(`add rule ${t} ${from} ${match ? `${match} ` : ''}jump ${to}`);
  out.push(`add rule ${t} ${MARK_MASQ_CHAIN} mark set mark or ${mark}`);
  out.push(`add rule ${t} ${MASQUERADING_CHAIN} mark and ${mark} == 0 return`);
  out.push(`add rule ${t} ${MASQUERADING_CHAIN} mark set mark xor ${mark}`);
  out.push(`add rule ${t} ${MASQUERADING_CHAIN} masquerade fully-random`);
  out.push(`add rule ${t} ${REJECT_CHAIN} reject`);
  out.push(`add rule ${t} ${CLUSTER_IPS_CHECK_CHAIN} ${ipX} daddr @${CLUSTER_IPS_SET} reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  const tuple = `${ipX} daddr . meta l4proto . th dport`;
  out.push(`add rule ${t} ${SERVICE_ENDPOINTS_CHECK_CHAIN} ${tuple} vmap @${NO_ENDPOINT_SERVICES_MAP}`);
  out.push(`add rule ${t} ${FIREWALL_CHECK_CHAIN} ${tuple} vmap @${FIREWALL_IPS_MAP}`);
  out.push(`add rule ${t} ${SERVICES_CHAIN} ${tuple} vmap @${SERVICE_IPS_MAP}`);
  if (matchAll) {
    out.push(`add rule ${t} ${NODEPORT_ENDPOINTS_CHECK_CHAIN} ${noLocalhost} meta l4proto . th dport vmap @${NO_ENDPOINT_NODEPORTS_MAP}`);
    out.push(`add rule ${t} ${SERVICES_CHAIN} fib daddr type local ${noLocalhost} meta l4proto . th dport vmap @${SERVICE_NODEPORTS_MAP}`);
  } else {
    out.push(`add rule ${t} ${NODEPORT_ENDPOINTS_CHECK_CHAIN} ${ipX} daddr @${NODEPORT_IPS_SET} meta l4proto . th dport vmap @${NO_ENDPOINT_NODEPORTS_MAP}`);
    out.push(`add rule ${t} ${SERVICES_CHAIN} ${ipX} daddr @${NODEPORT_IPS_SET} meta l4proto . th dport vmap @${SERVICE_NODEPORTS_MAP}`);
  }
  return out;
}
