// The userspace proxy mode (D.10, the "Virtual IPs and service proxies" document's oldest mode): per
// service port a proxy socket on the node, and nat REDIRECT rules sending every virtual IP of
// the port (ClusterIP, NodePort, external and LB IPs) to that socket. This file is the pure
// half: which proxies exist, with which endpoints, and the rules. The sockets live in
// @slicemesh/netfilter (userspace-proxy.ts).
//
// Endpoint selection is the one every backend shares (portPolicy): ClusterIP traffic uses the
// internal policy's endpoints, NodePort/external/LB traffic the external policy's. When both
// pick the same endpoints one proxy serves everything; otherwise the external entry points get
// a proxy of their own (key suffix `#external`). Ports without usable endpoints get no proxy
// and no rule.

import type { IptablesChainNames } from './iptables/chain-names.ts';
import { OWN_CHAINS } from './iptables/chain-names.ts';
import type { IptablesJump } from './iptables/top-level.ts';
import type { DpEndpoint, DpState } from './model.ts';
import { servicePortKey, sortedServicePorts } from './model.ts';
import { portPolicy } from './policy.ts';

export interface UserspaceEndpoint {
  readonly ip: string;
  readonly port: number;
}

/** A virtual address the rules redirect; `ip: null` is a NodePort (every local address, or the node IPs). */
export interface UserspaceVip {
  readonly ip: string | null;
  readonly port: number;
}

/** One proxy socket: what it serves and where it sends. */
export interface UserspaceProxySpec {
  /** `<ns>/<svc>:<port>/<proto>`, plus `#external` for a separate external-traffic proxy. */
  readonly key: string;
  readonly servicePortName: string;
  readonly protocol: 'TCP' | 'UDP';
  readonly vips: readonly UserspaceVip[];
  /** Ready endpoints (or the serving+terminating fallback), in a stable order. */
  readonly endpoints: readonly UserspaceEndpoint[];
  /** ClientIP affinity timeout; null without affinity. */
  readonly affinityTimeoutSeconds: number | null;
}

function eps(list: readonly DpEndpoint[]): UserspaceEndpoint[] {
  const seen = new Set<string>();
  const out: UserspaceEndpoint[] = [];
  for (const e of list) {
    const k = `${e.ip}|${e.port}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ ip: e.ip, port: e.port });
  }
  return out;
}

function sameEndpoints(a: readonly UserspaceEndpoint[], b: readonly UserspaceEndpoint[]): boolean {
  return a.length === b.length && a.every((e, i) => e.ip === b[i]?.ip && e.port === b[i]?.port);
}

/** The proxies of `state`, sorted by key. SCTP ports are skipped (the userspace mode proxies TCP and UDP). */
export function userspaceProxies(state: DpState): UserspaceProxySpec[] {
  const out: UserspaceProxySpec[] = [];
  for (const sp of sortedServicePorts(state)) {
    if (sp.protocol === 'SCTP') continue;
    const protocol = sp.protocol;
    const pol = portPolicy(sp);
    const internal = pol.internalVerdict === null ? eps(pol.internalToLocal ? pol.localEndpoints : pol.clusterEndpoints) : [];
    const external = pol.externalVerdict === null ? eps(pol.externalToLocal ? pol.localEndpoints : pol.clusterEndpoints) : [];
    const internalVips: UserspaceVip[] = sp.clusterIP !== null ? [{ ip: sp.clusterIP, port: sp.port }] : [];
    const externalVips: UserspaceVip[] = [
      ...sp.externalIPs.map((ip) => ({ ip, port: sp.port })),
      ...sp.loadBalancerIPs.map((ip) => ({ ip, port: sp.port })),
      ...(sp.nodePort !== null && sp.nodePort > 0 ? [{ ip: null, port: sp.nodePort }] : []),
    ];
    const base = { servicePortName: sp.servicePortName, protocol, affinityTimeoutSeconds: sp.sessionAffinityTimeoutSeconds };
    const key = servicePortKey(sp);
    if (sameEndpoints(internal, external)) {
      if (internal.length > 0 && internalVips.length + externalVips.length > 0) out.push({ ...base, key, vips: [...internalVips, ...externalVips], endpoints: internal });
      continue;
    }
    if (internal.length > 0 && internalVips.length > 0) out.push({ ...base, key, vips: internalVips, endpoints: internal });
    if (external.length > 0 && externalVips.length > 0) out.push({ ...base, key: `${key}#external`, vips: externalVips, endpoints: external });
  }
  return out;
}

/** The two nat chains of the userspace rules: traffic arriving (PREROUTING) and made on the node (OUTPUT). */
export function userspaceChains(names: IptablesChainNames = OWN_CHAINS): { readonly container: string; readonly host: string } {
  return { container: `${names.prefix}-PORTALS-CONTAINER`, host: `${names.prefix}-PORTALS-HOST` };
}

/** The jumps into the userspace chains, at the top of nat PREROUTING and OUTPUT. */
export function userspaceJumps(names: IptablesChainNames = OWN_CHAINS): IptablesJump[] {
  const c = userspaceChains(names);
  return [
    { table: 'nat', chain: 'PREROUTING', target: c.container, args: `-m comment --comment "handle ClusterIPs; NOTE: this must be before the NodePort rules" -j ${c.container}` },
    { table: 'nat', chain: 'OUTPUT', target: c.host, args: `-m comment --comment "handle ClusterIPs; NOTE: this must be before the NodePort rules" -j ${c.host}` },
  ];
}

export interface UserspaceRulesOptions {
  readonly chains?: IptablesChainNames;
  /** Addresses accepting NodePorts; empty: every local address (`addrtype LOCAL`). */
  readonly nodeIPs?: readonly string[];
  readonly family?: 'IPv4' | 'IPv6';
}

/**
 * The `iptables-restore --noflush` script (nat only) redirecting every VIP of every proxy to
 * its local proxy port (`ports`: key → port; proxies without a port get no rule). Declaring
 * the two chains flushes them, so each script replaces the previous one whole.
 */
export function renderUserspaceRules(proxies: readonly UserspaceProxySpec[], ports: Readonly<Record<string, number>>, opts: UserspaceRulesOptions = {}): { script: string; ruleCount: number } {
  const c = userspaceChains(opts.chains);
  const bits = opts.family === 'IPv6' ? 128 : 32;
  const rules: string[] = [];
  for (const p of proxies) {
    const to = ports[p.key];
    if (to === undefined) continue;
    const proto = p.protocol.toLowerCase();
    for (const v of p.vips) {
      const name = `${p.servicePortName}${v.ip === null ? ' nodePort' : ''}`;
      const dests = v.ip !== null ? [`-d ${v.ip}/${bits}`] : (opts.nodeIPs ?? []).length > 0 ? (opts.nodeIPs ?? []).map((ip) => `-d ${ip}/${bits}`) : ['-m addrtype --dst-type LOCAL'];
      for (const chain of [c.container, c.host]) {
        for (const d of dests) rules.push(`-A ${chain} -m comment --comment "${name}" ${d} -p ${proto} -m ${proto} --dport ${v.port} -j REDIRECT --to-ports ${to}`);
      }
    }
  }
  const script = ['*nat', `:${c.container} - [0:0]`, `:${c.host} - [0:0]`, ...rules, 'COMMIT', ''].join('\n');
  return { script, ruleCount: rules.length };
}
