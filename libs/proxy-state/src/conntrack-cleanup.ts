// D.7: which UDP conntrack entries a sync leaves stale. UDP has no connection to close, so a
// client that keeps sending (DNS, syslog, statsd) keeps its conntrack entry, and with it the
// NAT decision made for its first datagram, for as long as datagrams keep coming: new rules
// never see them. After a sync changes a UDP Service's endpoints, the entries that would keep
// a flow on the old decision are named here as filters; deleting them (the netfilter adapter
// runs `conntrack -D`) sends the next datagram through the new rules.

import type { IPFamily, Protocol } from '@slicemesh/model';
import type { ProxyModelEntry } from './proxy-plan.ts';
import { compareStrings } from './order.ts';

/** What conntrack cleanup needs to remember of one UDP service port after a sync. */
export interface ConntrackPortState {
  /** `<ns>/<svc>:<portName>/<proto>`. */
  readonly key: string;
  readonly family: IPFamily;
  readonly protocol: Protocol;
  /** Service port on the cluster, external and load-balancer IPs. */
  readonly port: number;
  readonly nodePort: number | null;
  /** ClusterIP, external IPs and load-balancer IPs: every address clients send to. */
  readonly frontends: readonly string[];
  /**
   * The serving endpoints (`ip:port` → ip) of every endpoint the node knows, before any
   * traffic-policy or topology selection: which of them a node routes to may change without
   * the flows already going to one of them being disturbed (D.7).
   */
  readonly serving: ReadonlyMap<string, string>;
}

/** Entries to delete: every field given must match; absent fields match anything. */
export interface ConntrackFlowFilter {
  readonly family: IPFamily;
  readonly protocol: 'UDP';
  /** Original destination address (the service IP the client sent to). */
  readonly origDst?: string;
  /** Original destination port (the service port, or the NodePort). */
  readonly origDstPort?: number;
  /** Source of the reply direction: the endpoint the flow was translated to. */
  readonly replySrc?: string;
}

export type StaleFlowReason = 'endpoint-removed' | 'newly-active' | 'service-removed';

export interface StaleFlows {
  readonly servicePort: string;
  readonly reason: StaleFlowReason;
  readonly filter: ConntrackFlowFilter;
}

/**
 * The UDP ports among `entries` (one Service's model entries) as conntrack cleanup keeps
 * them; other protocols give nothing, so a TCP-only cluster keeps nothing.
 */
export function conntrackPortStates(entries: readonly ProxyModelEntry[]): ConntrackPortState[] {
  const out: ConntrackPortState[] = [];
  for (const e of entries) {
    const sp = e.servicePort;
    if (sp.protocol !== 'UDP' || sp.clusterIP === null) continue;
    const serving = new Map<string, string>();
    for (const ep of e.merged) if (ep.serving) serving.set(ep.endpoint, ep.ip);
    out.push({
      key: e.key,
      family: sp.family,
      protocol: sp.protocol,
      port: sp.port,
      nodePort: sp.nodePort,
      frontends: [...new Set([sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs])],
      serving,
    });
  }
  return out;
}

/** A filter's identity, for de-duplication and a stable order. */
export function flowFilterText(f: ConntrackFlowFilter): string {
  return `${f.family} ${f.protocol} dst=${f.origDst ?? '*'} dport=${f.origDstPort ?? '*'} reply-src=${f.replySrc ?? '*'}`;
}

/**
 * The entries a sync leaves stale, from one Service's UDP ports as the last successful sync
 * applied them (`previous`) and as this sync applies them (`current`), sorted and without
 * repeats:
 *
 * - D.7.1 an endpoint that was serving and is not any more (gone, or no longer serving, or
 *   now at another port): the flows to each service address and port, and to the NodePort,
 *   whose replies came from its IP;
 * - D.7.2 a port that had no serving endpoint and now has one: every flow to its addresses and
 *   port and to its NodePort, which were black-holed or rejected until now;
 * - D.7.3 a port that is gone: every flow to its addresses and port and to its NodePort.
 *
 *     staleConntrackFlows([web53 with 10.244.1.2 serving], [web53 with none])
 *     // [{ servicePort: 'ns/web:dns/UDP', reason: 'endpoint-removed',
 *     //    filter: { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.1.2' } }, …]
 */
export function staleConntrackFlows(previous: readonly ConntrackPortState[], current: readonly ConntrackPortState[]): StaleFlows[] {
  const out = new Map<string, StaleFlows>();
  const add = (servicePort: string, reason: StaleFlowReason, filter: ConntrackFlowFilter) => {
    // One filter deletes what it matches once, whichever port asked for it first.
    const key = flowFilterText(filter);
    if (!out.has(key)) out.set(key, { servicePort, reason, filter });
  };
  const wholeService = (p: ConntrackPortState, reason: StaleFlowReason) => {
    for (const ip of p.frontends) add(p.key, reason, { family: p.family, protocol: 'UDP', origDst: ip, origDstPort: p.port });
    if (p.nodePort !== null) add(p.key, reason, { family: p.family, protocol: 'UDP', origDstPort: p.nodePort });
  };
  const before = new Map(previous.filter((p) => p.protocol === 'UDP').map((p) => [p.key, p]));
  const after = new Map(current.filter((p) => p.protocol === 'UDP').map((p) => [p.key, p]));

  for (const [key, old] of before) {
    const now = after.get(key);
    if (now === undefined) {
      wholeService(old, 'service-removed');
      continue;
    }
    // Flows may run to an address the Service has just dropped as well as to those it keeps.
    const frontends = [...new Set([...now.frontends, ...old.frontends])];
    const nodePorts = [...new Set([now.nodePort, old.nodePort])].filter((p): p is number => p !== null);
    for (const [endpoint, ip] of old.serving) {
      if (now.serving.has(endpoint)) continue;
      for (const dst of frontends) add(key, 'endpoint-removed', { family: now.family, protocol: 'UDP', origDst: dst, origDstPort: now.port, replySrc: ip });
      if (now.port !== old.port) for (const dst of old.frontends) add(key, 'endpoint-removed', { family: now.family, protocol: 'UDP', origDst: dst, origDstPort: old.port, replySrc: ip });
      for (const np of nodePorts) add(key, 'endpoint-removed', { family: now.family, protocol: 'UDP', origDstPort: np, replySrc: ip });
    }
  }
  for (const [key, now] of after) {
    const hadServing = (before.get(key)?.serving.size ?? 0) > 0;
    if (!hadServing && now.serving.size > 0) wholeService(now, 'newly-active');
  }
  return [...out.entries()].sort((a, b) => compareStrings(a[0], b[0])).map(([, v]) => v);
}
