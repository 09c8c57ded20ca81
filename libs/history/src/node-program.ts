// What a node programs at a point: kube-proxy's endpoint selection (libs/proxy-state) over the
// Services and the hinted slices of a StateAt — the `proxy-plan` answer, at any time.

import type { EndpointSlice, Service } from '@slicemesh/model';
import type { ProxyModelEntry, ProxyPlanEntry } from '@slicemesh/proxy-state';
import { planEntryOf, proxyModel } from '@slicemesh/proxy-state';
import type { StateAt } from './state-at.ts';

export interface NodeProgram {
  readonly node: string;
  /** '' when the node has no zone label (or is not in the log: then `known` is false). */
  readonly zone: string;
  readonly known: boolean;
  /** Per service port: every endpoint, and the ones Cluster and Local policies send to. */
  readonly ports: readonly ProxyPlanEntry[];
}

/** The proxy model entries of node `node` at `state` (every Service, or only `only`). */
export function nodeModel(state: StateAt, node: string, only?: { readonly namespace: string; readonly name: string }): ProxyModelEntry[] {
  const chosen = state.services.filter((s) => only === undefined || (s.namespace === only.namespace && s.name === only.name));
  const services: Service[] = chosen.flatMap((s) => (s.service === null ? [] : [s.service]));
  const slices: EndpointSlice[] = chosen.flatMap((s) => s.slices);
  return proxyModel({ services, slices, nodes: state.nodeObjects, nodeName: node, preferSameNodeGate: state.settings.preferSameTrafficDistribution });
}

/** What `node` programs at `state`, per service port, sorted by port key. */
export function nodeProgram(state: StateAt, node: string): NodeProgram {
  const info = state.nodes.find((n) => n.name === node);
  return { node, zone: info?.zone ?? '', known: info !== undefined, ports: nodeModel(state, node).map(planEntryOf) };
}
