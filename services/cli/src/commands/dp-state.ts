// The adapter from the proxy's endpoint selection (@slicemesh/proxy-state) to the rule
// renderers' input (@slicemesh/dataplane) for one node and one IP family.

import type { DpState, IptablesChainMode } from '@slicemesh/dataplane';
import { defaultMasqueradeBit, dpServicePort } from '@slicemesh/dataplane';
import type { IPFamily, Node } from '@slicemesh/model';
import { parseIP } from '@slicemesh/model';
import type { ProxyInput } from '@slicemesh/proxy-state';
import { proxyModel } from '@slicemesh/proxy-state';

/** The node's first InternalIP of `family`, canonical; null when it has none. */
export function nodeIPOf(node: Node | undefined, family: IPFamily): string | null {
  for (const a of node?.status?.addresses ?? []) {
    if (a.type !== 'InternalIP') continue;
    const ip = parseIP(a.address);
    if (ip?.family === family) return ip.text;
  }
  return null;
}

/**
 * What kube-proxy's `family` proxier on `nodeName` programs, with kube-proxy's defaults for
 * node settings the input cannot carry: NodePorts on every local address (no
 * nodePortAddresses), no local-traffic detector (no --cluster-cidr), no masqueradeAll, and
 * the agent's default masquerade bit for `chains` (D.4.15): 13 for our own chain names (the
 * default), kube-proxy's 14 for its names. No services: a state with no service ports.
 */
export function dpState(input: Omit<ProxyInput, 'family'>, family: IPFamily, chains: IptablesChainMode = 'own'): DpState {
  const node = input.nodes.find((n) => n.metadata.name === input.nodeName);
  return {
    family,
    nodeIPs: [],
    primaryNodeIP: nodeIPOf(node, family),
    podCIDR: null,
    masqueradeAll: false,
    masqueradeBit: defaultMasqueradeBit(chains),
    servicePorts: proxyModel({ ...input, family }).map(dpServicePort),
  };
}
