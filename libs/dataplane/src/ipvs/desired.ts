// IPVS virtual and real servers for a state (D.5.1–D.5.3). Only the IPVS part: the iptables
// and ipset companion rules kube-proxy also keeps in IPVS mode (D.5.4: masquerade marks,
// NodePort and LB source-range filtering, no-endpoint rejects) are not rendered here.

import type { DpEndpoint, DpServicePort, DpState } from '../model.ts';
import { joinHostPort, sortedServicePorts } from '../model.ts';
import { portPolicy } from '../policy.ts';

/** Schedulers kube-proxy documents; the kernel name is passed through unchanged (D.5.2). */
export type IpvsScheduler = 'rr' | 'lc' | 'dh' | 'sh' | 'sed' | 'nq';

export interface IpvsRealServer {
  readonly address: string;
  readonly port: number;
  readonly weight: number;
}

export interface IpvsVirtualServer {
  readonly address: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly scheduler: string;
  /** Persistence (ClientIP affinity) timeout in seconds, or null. */
  readonly persistenceTimeout: number | null;
  readonly realServers: readonly IpvsRealServer[];
}

export interface RenderIpvsOptions {
  /** Default `rr`. */
  readonly scheduler?: IpvsScheduler;
  /** Dummy interface holding the service IPs; default `kube-ipvs0`. */
  readonly interface?: string;
}

export interface IpvsRenderResult {
  /** Sorted by protocol, address, port. */
  readonly virtualServers: readonly IpvsVirtualServer[];
  /** Service IPs to bind on the dummy interface (cluster, external and LB IPs), sorted. */
  readonly boundAddresses: readonly string[];
  /** Input for `ipvsadm-restore` on a node without these virtual servers. */
  readonly ipvsadmRestore: string;
  /** `ip addr add` commands binding `boundAddresses`. */
  readonly iproute: readonly string[];
}

/** `ip:port` key of a virtual server, with the protocol: `TCP/10.0.0.1:80`. */
export function virtualServerKey(vs: Pick<IpvsVirtualServer, 'protocol' | 'address' | 'port'>): string {
  return `${vs.protocol}/${joinHostPort(vs.address, vs.port)}`;
}

function realServers(endpoints: readonly DpEndpoint[]): IpvsRealServer[] {
  const seen = new Set<string>();
  const out: IpvsRealServer[] = [];
  for (const ep of endpoints) {
    const k = joinHostPort(ep.ip, ep.port);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ address: ep.ip, port: ep.port, weight: 1 });
  }
  return out;
}

/**
 * Desired IPVS state. Every ClusterIP, external IP and LB IP gets a virtual server, and every
 * node IP one per NodePort (none when `nodeIPs` is empty). ClusterIP servers use the internal
 * policy's endpoints, the others the external policy's; a port without endpoints (or without
 * local ones under a Local policy) keeps its virtual server with no real servers, so new
 * connections fail instead of leaking to another rule.
 */
export function renderIpvs(state: DpState, opts: RenderIpvsOptions = {}): IpvsRenderResult {
  const scheduler = opts.scheduler ?? 'rr';
  const dev = opts.interface ?? 'kube-ipvs0';
  const servers = new Map<string, IpvsVirtualServer>();
  const bound = new Set<string>();
  const add = (sp: DpServicePort, address: string, port: number, eps: readonly DpEndpoint[]): void => {
    const vs: IpvsVirtualServer = {
      address,
      port,
      protocol: sp.protocol,
      scheduler,
      persistenceTimeout: sp.sessionAffinityTimeoutSeconds,
      realServers: realServers(eps),
    };
    servers.set(virtualServerKey(vs), vs);
  };
  for (const sp of sortedServicePorts(state)) {
    const pol = portPolicy(sp);
    const internal = pol.internalVerdict === null ? (pol.internalToLocal ? pol.localEndpoints : pol.clusterEndpoints) : [];
    const external = pol.externalVerdict === null ? (pol.externalToLocal ? pol.localEndpoints : pol.clusterEndpoints) : [];
    if (sp.clusterIP !== null) {
      add(sp, sp.clusterIP, sp.port, internal);
      bound.add(sp.clusterIP);
    }
    for (const ip of [...sp.externalIPs, ...sp.loadBalancerIPs]) {
      add(sp, ip, sp.port, external);
      bound.add(ip);
    }
    const nodePort = sp.nodePort ?? 0;
    if (nodePort > 0) for (const ip of state.nodeIPs) add(sp, ip, nodePort, external);
  }
  const virtualServers = [...servers.entries()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map((e) => e[1]);
  const boundAddresses = [...bound].sort();
  const hostBits = state.family === 'IPv6' ? 128 : 32;
  return {
    virtualServers,
    boundAddresses,
    ipvsadmRestore: ipvsadmRestoreText(virtualServers),
    iproute: boundAddresses.map((ip) => `ip addr add ${ip}/${hostBits} dev ${dev}`),
  };
}

/** ipvsadm's protocol flag for a service address. */
export function ipvsadmService(vs: Pick<IpvsVirtualServer, 'protocol' | 'address' | 'port'>): string {
  const flag = vs.protocol === 'TCP' ? '-t' : vs.protocol === 'UDP' ? '-u' : '--sctp-service';
  return `${flag} ${joinHostPort(vs.address, vs.port)}`;
}

/** `-A` per virtual server followed by its `-a` real servers (masquerading, weight). */
export function ipvsadmRestoreText(virtualServers: readonly IpvsVirtualServer[]): string {
  const out: string[] = [];
  for (const vs of virtualServers) {
    const persist = vs.persistenceTimeout !== null ? ` -p ${vs.persistenceTimeout}` : '';
    out.push(`-A ${ipvsadmService(vs)} -s ${vs.scheduler}${persist}`);
    for (const rs of vs.realServers) out.push(`-a ${ipvsadmService(vs)} -r ${joinHostPort(rs.address, rs.port)} -m -w ${rs.weight}`);
  }
  if (out.length > 0) out.push('');
  return out.join('\n');
}

/** One kernel setting, as `sysctl -w key=value` takes it. */
export interface Sysctl {
  readonly key: string;
  readonly value: string;
}

/**
 * The kernel settings IPVS mode needs (D.5.5): IPVS connection tracking (so the iptables
 * masquerade rules see IPVS traffic), expiring connections whose real server is gone and
 * persistence templates of quiesced ones, and forwarding for the family.
 */
export function ipvsSysctls(family: 'IPv4' | 'IPv6'): Sysctl[] {
  return [
    { key: 'net.ipv4.vs.conntrack', value: '1' },
    { key: 'net.ipv4.vs.expire_nodest_conn', value: '1' },
    { key: 'net.ipv4.vs.expire_quiescent_template', value: '1' },
    family === 'IPv6' ? { key: 'net.ipv6.conf.all.forwarding', value: '1' } : { key: 'net.ipv4.ip_forward', value: '1' },
  ];
}
