// The ipsets and iptables rules kube-proxy keeps beside IPVS (D.5.4). IPVS only balances; the
// masquerade marks, NodePort masquerading, loadBalancerSourceRanges filtering and the hairpin
// (an endpoint reaching itself through its service) are iptables rules matching ipsets, so the
// rule count stays constant and only set members change with the services.
//
// Set names follow the chain prefix (D.4.15): KUBE-CLUSTER-IP under kube-proxy's names,
// SLICEMESH-CLUSTER-IP under ours; IPv6 sets put `6-` after the prefix (KUBE-6-CLUSTER-IP) as
// kube-proxy does in dual stack. A name longer than ipset's 31 characters is abbreviated
// (LOAD-BALANCER → LB, NODE-PORT → NP, SOURCE → SRC, HEALTH-CHECK → HC).
// Beyond kube-proxy: service addresses whose port has no endpoints are in a NO-ENDPOINTS set
// that the filter table rejects (and NO-LOCAL-ENDPOINTS, dropped, for a Local policy with no
// local endpoint), where kube-proxy's IPVS mode lets such connections time out.

import type { DpServicePort, DpState } from '../model.ts';
import { sortedServicePorts } from '../model.ts';
import { cidrContains, portPolicy } from '../policy.ts';
import type { IptablesChainNames } from '../iptables/chain-names.ts';
import { IPTABLES_CHAIN_NAME_MAX, OWN_CHAINS } from '../iptables/chain-names.ts';
import { comment } from '../iptables/service-rules.ts';
import type { IptablesJump } from '../iptables/top-level.ts';
import { filterChains, forwardRules, masqueradeRules, natChains, nodePortJumpRules, renderIptablesJumps } from '../iptables/top-level.ts';

/** ipset's longest set name (IPSET_MAXNAMELEN is 32 with the terminating NUL). */
export const IPSET_NAME_MAX = 31;

export type IpsetType = 'hash:ip' | 'hash:ip,port' | 'hash:ip,port,ip' | 'hash:ip,port,net' | 'bitmap:port';

export interface IpsetSpec {
  readonly name: string;
  readonly type: IpsetType;
  readonly comment: string;
  /** Members in ipset's text form (`10.96.0.10,tcp:80`, `30080`), sorted, without duplicates. */
  readonly entries: readonly string[];
}

/** The sets of IPVS mode, by role. */
const SETS = {
  loopBack: ['LOOP-BACK', 'hash:ip,port,ip', 'endpoint ip:port and source ip, for hairpin masquerade'],
  clusterIP: ['CLUSTER-IP', 'hash:ip,port', 'service cluster ip:port, for masquerade'],
  externalIP: ['EXTERNAL-IP', 'hash:ip,port', 'service external ip:port, for masquerade'],
  externalIPLocal: ['EXTERNAL-IP-LOCAL', 'hash:ip,port', 'external ip:port with externalTrafficPolicy Local'],
  loadBalancer: ['LOAD-BALANCER', 'hash:ip,port', 'load-balancer ingress ip:port'],
  loadBalancerFW: ['LOAD-BALANCER-FW', 'hash:ip,port', 'load-balancer ip:port with source ranges'],
  loadBalancerLocal: ['LOAD-BALANCER-LOCAL', 'hash:ip,port', 'load-balancer ip:port with externalTrafficPolicy Local'],
  loadBalancerSourceIP: ['LOAD-BALANCER-SOURCE-IP', 'hash:ip,port,ip', 'load-balancer ip:port and an allowed node source ip'],
  loadBalancerSourceCIDR: ['LOAD-BALANCER-SOURCE-CIDR', 'hash:ip,port,net', 'load-balancer ip:port and an allowed source range'],
  nodePortTCP: ['NODE-PORT-TCP', 'bitmap:port', 'TCP node ports'],
  nodePortLocalTCP: ['NODE-PORT-LOCAL-TCP', 'bitmap:port', 'TCP node ports with externalTrafficPolicy Local'],
  nodePortUDP: ['NODE-PORT-UDP', 'bitmap:port', 'UDP node ports'],
  nodePortLocalUDP: ['NODE-PORT-LOCAL-UDP', 'bitmap:port', 'UDP node ports with externalTrafficPolicy Local'],
  nodePortSCTP: ['NODE-PORT-SCTP-HASH', 'hash:ip,port', 'SCTP node ip:port'],
  nodePortLocalSCTP: ['NODE-PORT-LOCAL-SCTP-HASH', 'hash:ip,port', 'SCTP node ip:port with externalTrafficPolicy Local'],
  healthCheckNodePort: ['HEALTH-CHECK-NODE-PORT', 'bitmap:port', 'health check node ports'],
  ipvsIPs: ['IPVS-IPS', 'hash:ip', 'addresses on the IPVS interface'],
  noEndpoints: ['NO-ENDPOINTS', 'hash:ip,port', 'service ip:port without endpoints, rejected'],
  noLocalEndpoints: ['NO-LOCAL-ENDPOINTS', 'hash:ip,port', 'service ip:port without local endpoints, dropped'],
} as const satisfies Record<string, readonly [string, IpsetType, string]>;

export type IpvsSetRole = keyof typeof SETS;
export type IpvsSetNames = Readonly<Record<IpvsSetRole, string>>;

const ABBREVIATIONS: readonly (readonly [string, string])[] = [
  ['LOAD-BALANCER', 'LB'],
  ['NODE-PORT', 'NP'],
  ['SOURCE', 'SRC'],
  ['HEALTH-CHECK', 'HC'],
];

function shorten(name: string, max: number): string {
  let out = name;
  for (const [long, short] of ABBREVIATIONS) {
    if (out.length <= max) break;
    out = out.split(long).join(short);
  }
  if (out.length > max) throw new Error(`name ${out} is longer than ${max} characters`);
  return out;
}

/** The set names for a chain prefix and family (kube-proxy's names exactly for `KUBE`). */
export function ipvsSetNames(prefix: string, family: 'IPv4' | 'IPv6' = 'IPv4'): IpvsSetNames {
  const head = family === 'IPv6' ? `${prefix}-6-` : `${prefix}-`;
  const out: Partial<Record<IpvsSetRole, string>> = {};
  for (const role of Object.keys(SETS) as IpvsSetRole[]) out[role] = shorten(head + SETS[role][0], IPSET_NAME_MAX);
  return out as IpvsSetNames;
}

/** The extra iptables chains of IPVS mode: nat load-balancer dispatch and the filter source-range check. */
export function ipvsExtraChains(n: IptablesChainNames): { loadBalancer: string; sourceRangesFirewall: string; ipvsFilter: string } {
  const fit = (long: string, short: string): string => (long.length <= IPTABLES_CHAIN_NAME_MAX ? long : short);
  return {
    loadBalancer: fit(`${n.prefix}-LOAD-BALANCER`, `${n.prefix}-LB`),
    sourceRangesFirewall: fit(`${n.prefix}-SOURCE-RANGES-FIREWALL`, `${n.prefix}-SRC-RANGES-FW`),
    ipvsFilter: fit(`${n.prefix}-IPVS-FILTER`, `${n.prefix}-IPVS-FLT`),
  };
}

/**
 * The jumps from the built-in chains in IPVS mode: the iptables mode's, plus filter INPUT to
 * the IPVS access filter (new connections to a service address on a port that is no service
 * are rejected, since the address is local to the node and anything listening on it would
 * otherwise answer).
 */
export function ipvsCompanionJumps(n: IptablesChainNames = OWN_CHAINS): IptablesJump[] {
  const target = ipvsExtraChains(n).ipvsFilter;
  return [...renderIptablesJumps(n), { table: 'filter', chain: 'INPUT', target, args: `${comment('kubernetes ipvs access filter')} -j ${target}` }];
}

function insertLines(table: IptablesJump['table'], jumps: readonly IptablesJump[]): string[] {
  const position = new Map<string, number>();
  return jumps
    .filter((j) => j.table === table)
    .map((j) => {
      const at = (position.get(j.chain) ?? 0) + 1;
      position.set(j.chain, at);
      return `-I ${j.chain} ${at} ${j.args}`;
    });
}

export interface IpvsCompanionResult {
  /** Every set, in a fixed order, with its members. */
  readonly sets: readonly IpsetSpec[];
  /** Input for `ipset restore -exist`: create each set, flush it, add its members. */
  readonly ipsetRestore: string;
  /** Input for `iptables-restore --noflush` (or `ip6tables-restore`): filter and nat, with the jumps unless left out. */
  readonly iptablesRestore: string;
}

function member(sp: DpServicePort, ip: string, port: number): string {
  return `${ip},${sp.protocol.toLowerCase()}:${port}`;
}

function collectMembers(state: DpState): Map<IpvsSetRole, Set<string>> {
  const m = new Map<IpvsSetRole, Set<string>>();
  for (const role of Object.keys(SETS) as IpvsSetRole[]) m.set(role, new Set());
  const add = (role: IpvsSetRole, entry: string): void => void m.get(role)?.add(entry);
  for (const sp of sortedServicePorts(state)) {
    const pol = portPolicy(sp);
    const eps = [...(sp.clusterEndpoints ?? []), ...(sp.localEndpoints ?? [])];
    for (const ep of eps) add('loopBack', `${ep.ip},${sp.protocol.toLowerCase()}:${ep.port},${ep.ip}`);
    const verdictSet = (v: 'REJECT' | 'DROP' | null): IpvsSetRole | null => (v === 'REJECT' ? 'noEndpoints' : v === 'DROP' ? 'noLocalEndpoints' : null);
    if (sp.clusterIP !== null) {
      add('clusterIP', member(sp, sp.clusterIP, sp.port));
      add('ipvsIPs', sp.clusterIP);
      const v = verdictSet(pol.internalVerdict);
      if (v) add(v, member(sp, sp.clusterIP, sp.port));
    }
    const ext = verdictSet(pol.externalVerdict);
    for (const ip of sp.externalIPs) {
      add('externalIP', member(sp, ip, sp.port));
      if (sp.externalPolicyLocal) add('externalIPLocal', member(sp, ip, sp.port));
      add('ipvsIPs', ip);
      if (ext) add(ext, member(sp, ip, sp.port));
    }
    for (const ip of sp.loadBalancerIPs) {
      const e = member(sp, ip, sp.port);
      add('loadBalancer', e);
      if (sp.externalPolicyLocal) add('loadBalancerLocal', e);
      if (sp.loadBalancerSourceRanges.length > 0) {
        add('loadBalancerFW', e);
        for (const cidr of sp.loadBalancerSourceRanges) add('loadBalancerSourceCIDR', `${e},${cidr}`);
        const self = state.primaryNodeIP ?? state.nodeIPs[0] ?? null;
        if (self !== null && sp.loadBalancerSourceRanges.some((c) => cidrContains(c, self))) add('loadBalancerSourceIP', `${e},${self}`);
      }
      add('ipvsIPs', ip);
      if (ext) add(ext, e);
    }
    const nodePort = sp.nodePort ?? 0;
    if (nodePort > 0) {
      if (sp.protocol === 'SCTP') {
        for (const ip of state.nodeIPs) {
          add('nodePortSCTP', member(sp, ip, nodePort));
          if (sp.externalPolicyLocal) add('nodePortLocalSCTP', member(sp, ip, nodePort));
        }
      } else {
        add(sp.protocol === 'TCP' ? 'nodePortTCP' : 'nodePortUDP', String(nodePort));
        if (sp.externalPolicyLocal) add(sp.protocol === 'TCP' ? 'nodePortLocalTCP' : 'nodePortLocalUDP', String(nodePort));
      }
    }
    if (sp.healthCheckNodePort !== null && sp.healthCheckNodePort > 0) add('healthCheckNodePort', String(sp.healthCheckNodePort));
  }
  return m;
}

function sortEntries(entries: Iterable<string>): string[] {
  return [...entries].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The companion sets and rules of IPVS mode for `state`, under the chain names `n` (default
 * our own; the set names follow its prefix). Deterministic: sets in a fixed order, members
 * sorted, the same rules for the same state. `includeJumps: false` leaves out the `-I` jumps
 * from the built-in chains (`ipvsCompanionJumps(n)`, for an adapter that ensures them);
 * the script is then safe to apply every sync, since declaring a chain flushes it.
 */
export function renderIpvsCompanion(state: DpState, n: IptablesChainNames = OWN_CHAINS, opts: { readonly includeJumps?: boolean } = {}): IpvsCompanionResult {
  const jumps = (table: 'filter' | 'nat'): string[] => ((opts.includeJumps ?? true) ? insertLines(table, ipvsCompanionJumps(n)) : []);
  const names = ipvsSetNames(n.prefix, state.family);
  const extra = ipvsExtraChains(n);
  const members = collectMembers(state);
  const sets: IpsetSpec[] = (Object.keys(SETS) as IpvsSetRole[]).map((role) => ({
    name: names[role],
    type: SETS[role][1],
    comment: SETS[role][2],
    entries: sortEntries(members.get(role) ?? []),
  }));
  const inet = state.family === 'IPv6' ? 'inet6' : 'inet';
  const ipset: string[] = [];
  for (const s of sets) {
    const opts = s.type === 'bitmap:port' ? 'range 0-65535' : `family ${inet} hashsize 1024 maxelem 65536`;
    ipset.push(`create ${s.name} ${s.type} ${opts}`, `flush ${s.name}`);
    for (const e of s.entries) ipset.push(`add ${s.name} ${e}`);
  }
  const set = (role: IpvsSetRole, match: string): string => `-m set --match-set ${names[role]} ${match}`;
  const filter = [
    ...filterChains(n).map((c) => `:${c} - [0:0]`),
    `:${extra.sourceRangesFirewall} - [0:0]`,
    `:${extra.ipvsFilter} - [0:0]`,
    ...jumps('filter'),
    ...forwardRules(state, n),
    `-A ${n.nodePorts} ${comment('kubernetes health check node port')} ${set('healthCheckNodePort', 'dst')} -j ACCEPT`,
    `-A ${n.externalServices} ${comment('service without endpoints')} ${set('noEndpoints', 'dst,dst')} -j REJECT`,
    `-A ${n.externalServices} ${comment('service without local endpoints')} ${set('noLocalEndpoints', 'dst,dst')} -j DROP`,
    `-A ${n.proxyFirewall} ${set('loadBalancerFW', 'dst,dst')} -j ${extra.sourceRangesFirewall}`,
    `-A ${extra.sourceRangesFirewall} ${set('loadBalancerSourceCIDR', 'dst,dst,src')} -j RETURN`,
    `-A ${extra.sourceRangesFirewall} ${set('loadBalancerSourceIP', 'dst,dst,src')} -j RETURN`,
    `-A ${extra.sourceRangesFirewall} ${comment('source not in loadBalancerSourceRanges')} -j DROP`,
    ...(['loadBalancer', 'clusterIP', 'externalIP', 'externalIPLocal'] as const).map((r) => `-A ${extra.ipvsFilter} ${set(r, 'dst,dst')} -j RETURN`),
    `-A ${extra.ipvsFilter} ${set('healthCheckNodePort', 'dst')} -j RETURN`,
    `-A ${extra.ipvsFilter} ${comment('service address, but no service on this port')} -m conntrack --ctstate NEW ${set('ipvsIPs', 'dst')} -j REJECT`,
  ];
  const clusterMasq = state.masqueradeAll
    ? [`-A ${n.services} ${comment('Kubernetes service cluster ip + port for masquerade purpose')} ${set('clusterIP', 'dst,dst')} -j ${n.markMasq}`]
    : state.podCIDR !== null
      ? [`-A ${n.services} ${comment('Kubernetes service cluster ip + port for masquerade purpose')} ${set('clusterIP', 'dst,dst')} ! -s ${state.podCIDR} -j ${n.markMasq}`]
      : [];
  const nodePortRules = (['TCP', 'UDP', 'SCTP'] as const).flatMap((p) => {
    const [local, all, match]: [IpvsSetRole, IpvsSetRole, string] =
      p === 'TCP' ? ['nodePortLocalTCP', 'nodePortTCP', 'dst'] : p === 'UDP' ? ['nodePortLocalUDP', 'nodePortUDP', 'dst'] : ['nodePortLocalSCTP', 'nodePortSCTP', 'dst,dst'];
    const proto = p.toLowerCase();
    return [`-A ${n.nodePorts} -p ${proto} ${set(local, match)} -j RETURN`, `-A ${n.nodePorts} -p ${proto} ${set(all, match)} -j ${n.markMasq}`];
  });
  const nat = [
    ...natChains(n).map((c) => `:${c} - [0:0]`),
    `:${extra.loadBalancer} - [0:0]`,
    ...jumps('nat'),
    `-A ${n.postrouting} ${comment('Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose')} ${set('loopBack', 'dst,dst,src')} -j MASQUERADE`,
    ...masqueradeRules(state, n),
    ...clusterMasq,
    `-A ${n.services} ${set('clusterIP', 'dst,dst')} -j ACCEPT`,
    `-A ${n.services} ${set('externalIPLocal', 'dst,dst')} -j ACCEPT`,
    `-A ${n.services} ${comment('Kubernetes service external ip + port for masquerade and filter purpose')} ${set('externalIP', 'dst,dst')} -j ${n.markMasq}`,
    `-A ${n.services} ${set('externalIP', 'dst,dst')} -j ACCEPT`,
    `-A ${n.services} ${comment('Kubernetes service lb portal')} ${set('loadBalancer', 'dst,dst')} -j ${extra.loadBalancer}`,
    ...nodePortJumpRules(state, n),
    `-A ${extra.loadBalancer} ${set('loadBalancerLocal', 'dst,dst')} -j RETURN`,
    `-A ${extra.loadBalancer} -j ${n.markMasq}`,
    ...nodePortRules,
  ];
  return {
    sets,
    ipsetRestore: `${ipset.join('\n')}\n`,
    iptablesRestore: ['*filter', ...filter, 'COMMIT', '*nat', ...nat, 'COMMIT', ''].join('\n'),
  };
}
