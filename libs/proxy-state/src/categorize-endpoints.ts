// D.3: which of a service port's endpoints this node sends traffic to.

import { LABEL_ZONE } from '@slicemesh/model';
import type { EndpointInfo } from './merge-endpoints.ts';
import type { ServicePortInfo } from './service-port.ts';

export interface CategorizeOptions {
  /** The PreferSameTrafficDistribution gate (GA in 1.35): node hints are honoured. Default true. */
  readonly preferSameNodeGate?: boolean;
}

export interface CategorizedEndpoints {
  /** Endpoints for Cluster policy; null when the port never uses Cluster policy. */
  readonly clusterEndpoints: readonly EndpointInfo[] | null;
  /** Endpoints for Local policy; null when the port never uses Local policy. */
  readonly localEndpoints: readonly EndpointInfo[] | null;
  /** Union of the two, in input order: every endpoint this node may send to. */
  readonly allReachableEndpoints: readonly EndpointInfo[];
  /** Some endpoint anywhere is usable (ready, or serving and terminating), even if unreachable from here. */
  readonly hasAnyEndpoints: boolean;
}

export type TopologyMode = 'PreferSameNode' | 'PreferSameZone' | null;

const usableWhenTerminating = (ep: EndpointInfo): boolean => ep.serving && ep.terminating;

/**
 * D.3.1: the hint level this node applies. Only ready endpoints count; one ready endpoint
 * without a hint of a level disables that level for every node. A node with no zone ('')
 * never matches a zone hint.
 */
export function topologyMode(endpoints: readonly EndpointInfo[], nodeName: string, zone: string, preferSameNodeGate: boolean): TopologyMode {
  let anyReady = false;
  let allNodeHints = true;
  let forThisNode = false;
  let allZoneHints = true;
  let forThisZone = false;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    anyReady = true;
    if (ep.nodeHints.length === 0) allNodeHints = false;
    else if (ep.nodeHints.includes(nodeName)) forThisNode = true;
    if (ep.zoneHints.length === 0) allZoneHints = false;
    else if (zone !== '' && ep.zoneHints.includes(zone)) forThisZone = true;
  }
  if (!anyReady) return null;
  if (preferSameNodeGate && allNodeHints && forThisNode) return 'PreferSameNode';
  if (allZoneHints && forThisZone) return 'PreferSameZone';
  return null;
}

function allowedBy(mode: TopologyMode, ep: EndpointInfo, nodeName: string, zone: string): boolean {
  if (mode === 'PreferSameNode') return ep.nodeHints.includes(nodeName);
  if (mode === 'PreferSameZone') return ep.zoneHints.includes(zone);
  return true;
}

/**
 * Splits `endpoints` (one service port, as merged for this node) into what Cluster and Local
 * policies may use on node `nodeName` with `nodeLabels`. Output lists keep input order.
 * No endpoints: the used policies get [], the others null, allReachable [] and hasAny false.
 * All endpoints terminating: Cluster (and Local, per node) fall back to serving+terminating ones.
 */
export function categorizeEndpoints(
  endpoints: readonly EndpointInfo[],
  svcPort: Pick<ServicePortInfo, 'usesClusterEndpoints' | 'usesLocalEndpoints'>,
  nodeName: string,
  nodeLabels: Readonly<Record<string, string>> | undefined,
  opts: CategorizeOptions = {},
): CategorizedEndpoints {
  const zone = nodeLabels?.[LABEL_ZONE] ?? '';
  let cluster: EndpointInfo[] | null = null;
  let mode: TopologyMode = null;
  if (svcPort.usesClusterEndpoints) {
    mode = topologyMode(endpoints, nodeName, zone, opts.preferSameNodeGate ?? true);
    cluster = endpoints.filter((ep) => ep.ready && allowedBy(mode, ep, nodeName, zone));
    // The mode already falls back to "none" when nothing matches, so an empty set here means
    // no ready endpoint anywhere: use the ones still serving while terminating.
    if (cluster.length === 0) cluster = endpoints.filter(usableWhenTerminating);
  }
  const hasAnyEndpoints = endpoints.some((ep) => ep.ready || usableWhenTerminating(ep));
  if (!svcPort.usesLocalEndpoints) {
    return { clusterEndpoints: cluster, localEndpoints: null, allReachableEndpoints: cluster ?? [], hasAnyEndpoints };
  }

  // Topology never narrows Local: the node's own endpoints are as close as it gets.
  let local = endpoints.filter((ep) => ep.isLocal && ep.ready);
  const localFallback = local.length === 0;
  if (localFallback) local = endpoints.filter((ep) => ep.isLocal && usableWhenTerminating(ep));
  if (cluster === null) return { clusterEndpoints: null, localEndpoints: local, allReachableEndpoints: local, hasAnyEndpoints };
  // Unfiltered ready Cluster endpoints already contain every local ready endpoint.
  if (mode === null && !(localFallback && local.length > 0)) {
    return { clusterEndpoints: cluster, localEndpoints: local, allReachableEndpoints: cluster, hasAnyEndpoints };
  }
  const reachable = new Set<EndpointInfo>([...cluster, ...local]);
  return {
    clusterEndpoints: cluster,
    localEndpoints: local,
    allReachableEndpoints: endpoints.filter((ep) => reachable.has(ep)),
    hasAnyEndpoints,
  };
}
