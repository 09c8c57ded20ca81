// Ordered IPVS operations from the observed state to the desired one, with kube-proxy's
// graceful termination (D.5.5): a TCP real server that should go is first quiesced (weight 0)
// and deleted only once it carries no connections; UDP and SCTP real servers go at once.

import { joinHostPort } from '../model.ts';
import type { IpvsRealServer, IpvsRenderResult, IpvsVirtualServer } from './desired.ts';
import { ipvsadmService, virtualServerKey } from './desired.ts';

export type IpvsOperation =
  | { readonly op: 'bindAddress'; readonly address: string }
  | { readonly op: 'addVirtualServer'; readonly virtualServer: IpvsVirtualServer }
  | { readonly op: 'editVirtualServer'; readonly virtualServer: IpvsVirtualServer }
  | { readonly op: 'addRealServer'; readonly virtualServer: IpvsVirtualServer; readonly realServer: IpvsRealServer }
  | { readonly op: 'editRealServer'; readonly virtualServer: IpvsVirtualServer; readonly realServer: IpvsRealServer }
  | { readonly op: 'deleteRealServer'; readonly virtualServer: IpvsVirtualServer; readonly realServer: IpvsRealServer }
  | { readonly op: 'deleteVirtualServer'; readonly virtualServer: IpvsVirtualServer }
  | { readonly op: 'unbindAddress'; readonly address: string };

export interface DiffIpvsOptions {
  /** Quiesce removed TCP real servers instead of deleting them while they have connections. Default true. */
  readonly terminatingGrace?: boolean;
  /**
   * Active plus inactive connections of a real server, as the kernel counts them. Without it
   * every quiesced server is assumed busy (kept at weight 0 until a later diff says otherwise).
   */
  readonly activeConnections?: (vs: IpvsVirtualServer, rs: IpvsRealServer) => number;
}

type IpvsState = Pick<IpvsRenderResult, 'virtualServers' | 'boundAddresses'>;

function rsKey(rs: Pick<IpvsRealServer, 'address' | 'port'>): string {
  return joinHostPort(rs.address, rs.port);
}

/**
 * Operations taking `prev` (observed, including quiesced real servers at weight 0) to `next`,
 * in a safe order: bind addresses, add/edit virtual servers, add/edit real servers, quiesce
 * or delete old real servers, delete virtual servers, unbind addresses. A virtual server
 * that disappears is deleted at once with its real servers. Equal states → [].
 */
export function diffIpvs(prev: IpvsState, next: IpvsState, opts: DiffIpvsOptions = {}): IpvsOperation[] {
  const grace = opts.terminatingGrace ?? true;
  const connections = opts.activeConnections ?? (() => 1);
  const before = new Map(prev.virtualServers.map((vs) => [virtualServerKey(vs), vs]));
  const after = new Map(next.virtualServers.map((vs) => [virtualServerKey(vs), vs]));
  const oldAddresses = new Set(prev.boundAddresses);
  const newAddresses = new Set(next.boundAddresses);

  const binds: IpvsOperation[] = next.boundAddresses.filter((a) => !oldAddresses.has(a)).map((address) => ({ op: 'bindAddress', address }));
  const vsOps: IpvsOperation[] = [];
  const rsAdds: IpvsOperation[] = [];
  const rsRemovals: IpvsOperation[] = [];
  for (const [key, vs] of after) {
    const old = before.get(key);
    if (!old) {
      vsOps.push({ op: 'addVirtualServer', virtualServer: vs });
    } else if (old.scheduler !== vs.scheduler || old.persistenceTimeout !== vs.persistenceTimeout) {
      vsOps.push({ op: 'editVirtualServer', virtualServer: vs });
    }
    const oldReal = new Map((old?.realServers ?? []).map((rs) => [rsKey(rs), rs]));
    const newReal = new Set(vs.realServers.map(rsKey));
    for (const rs of vs.realServers) {
      const was = oldReal.get(rsKey(rs));
      if (!was) rsAdds.push({ op: 'addRealServer', virtualServer: vs, realServer: rs });
      else if (was.weight !== rs.weight) rsAdds.push({ op: 'editRealServer', virtualServer: vs, realServer: rs });
    }
    for (const [k, rs] of oldReal) {
      if (newReal.has(k)) continue;
      const graceful = grace && vs.protocol === 'TCP' && connections(vs, rs) > 0;
      if (!graceful) rsRemovals.push({ op: 'deleteRealServer', virtualServer: vs, realServer: rs });
      else if (rs.weight !== 0) rsRemovals.push({ op: 'editRealServer', virtualServer: vs, realServer: { ...rs, weight: 0 } });
    }
  }
  const vsDeletes: IpvsOperation[] = [];
  for (const [key, vs] of before) if (!after.has(key)) vsDeletes.push({ op: 'deleteVirtualServer', virtualServer: vs });
  const unbinds: IpvsOperation[] = prev.boundAddresses.filter((a) => !newAddresses.has(a)).map((address) => ({ op: 'unbindAddress', address }));
  return [...binds, ...vsOps, ...rsAdds, ...rsRemovals, ...vsDeletes, ...unbinds];
}

/**
 * The `ipvsadm` arguments of one operation (address operations are `ip addr` commands and
 * return null here), e.g. `-e -t 10.0.0.1:80 -r 10.180.0.1:80 -m -w 0`.
 */
export function ipvsadmArgs(op: IpvsOperation): string | null {
  switch (op.op) {
    case 'bindAddress':
    case 'unbindAddress':
      return null;
    case 'addVirtualServer':
    case 'editVirtualServer': {
      const vs = op.virtualServer;
      const persist = vs.persistenceTimeout !== null ? ` -p ${vs.persistenceTimeout}` : '';
      return `${op.op === 'addVirtualServer' ? '-A' : '-E'} ${ipvsadmService(vs)} -s ${vs.scheduler}${persist}`;
    }
    case 'addRealServer':
    case 'editRealServer':
      return `${op.op === 'addRealServer' ? '-a' : '-e'} ${ipvsadmService(op.virtualServer)} -r ${rsKey(op.realServer)} -m -w ${op.realServer.weight}`;
    case 'deleteRealServer':
      return `-d ${ipvsadmService(op.virtualServer)} -r ${rsKey(op.realServer)}`;
    case 'deleteVirtualServer':
      return `-D ${ipvsadmService(op.virtualServer)}`;
    default: {
      const never: never = op;
      return never;
    }
  }
}
