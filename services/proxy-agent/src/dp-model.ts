// From Kubernetes objects to the renderers' input for this node: proxyModel (endpoint
// selection, D.1–D.3) per service, adapted to @slicemesh/dataplane's DpServicePort, one
// service at a time so a partial sync recomputes only the services that changed.

import type { DpServicePort, DpState } from '@slicemesh/dataplane';
import { dpServicePort } from '@slicemesh/dataplane';
import type { EndpointSlice, IPFamily, Node, Service } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import type { ConntrackPortState, ServiceHealthInfo } from '@slicemesh/proxy-state';
import { conntrackPortStates, proxyModel, serviceHealthInfo } from '@slicemesh/proxy-state';

/** What the node contributes to endpoint selection and to the rules. */
export interface NodeSettings {
  readonly nodeName: string;
  /** Zone label value; '' for a node without one (topology hints never apply to it). */
  readonly zone: string;
  readonly family: IPFamily;
  /** Addresses accepting NodePorts ([] = every local address); the first is the node IP. */
  readonly nodeIPs: readonly string[];
  readonly podCIDR: string | null;
  readonly masqueradeAll: boolean;
  readonly masqueradeBit: number;
}

/** The Node object endpoint selection sees: only its name and zone label matter. */
export function selfNode(s: Pick<NodeSettings, 'nodeName' | 'zone'>): Node {
  return { kind: 'Node', apiVersion: 'v1', metadata: { name: s.nodeName, labels: s.zone === '' ? {} : { [LABEL_ZONE]: s.zone } } };
}

/**
 * The ports this node programs for one service from its (view) slices, sorted by key. A
 * headless or ExternalName service, or one without a cluster IP of the family, gives [];
 * a service without slices gives its ports with no endpoints.
 */
export function servicePortsFor(service: Service, slices: readonly EndpointSlice[], node: Node, s: Pick<NodeSettings, 'nodeName' | 'family'>): DpServicePort[] {
  return proxyModel({ services: [service], slices, nodes: [node], nodeName: s.nodeName, family: s.family }).map(dpServicePort);
}

/** What a sync keeps per service: the ports it programs, its health facts (D.9), its UDP ports for conntrack cleanup (D.7). */
export interface ServiceModel {
  readonly ports: readonly DpServicePort[];
  readonly health: ServiceHealthInfo;
  readonly udp: readonly ConntrackPortState[];
}

/** `servicePortsFor` plus the health facts and the UDP ports, from one endpoint selection. */
export function serviceModelFor(service: Service, slices: readonly EndpointSlice[], node: Node, s: Pick<NodeSettings, 'nodeName' | 'family'>): ServiceModel {
  const entries = proxyModel({ services: [service], slices, nodes: [node], nodeName: s.nodeName, family: s.family });
  return { ports: entries.map(dpServicePort), health: serviceHealthInfo(entries), udp: conntrackPortStates(entries) };
}

/** The whole state for the renderers. No ports: a state that programs only the fixed chains. */
export function dpStateOf(servicePorts: readonly DpServicePort[], s: NodeSettings): DpState {
  return {
    family: s.family,
    nodeIPs: s.nodeIPs,
    primaryNodeIP: s.nodeIPs[0] ?? null,
    podCIDR: s.podCIDR,
    masqueradeAll: s.masqueradeAll,
    masqueradeBit: s.masqueradeBit,
    servicePorts,
  };
}
