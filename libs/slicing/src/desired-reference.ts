// The plain reference for desired endpoints (A.2.4, A.3, A.5.4): every pod computed from
// scratch into one identity Map per (port group, address type), as upstream does. No memo of
// any kind, so the fast path (desired-endpoints.ts) can be checked against it, and it is
// what a sync falls back to when two pods share an identity.

import type { Endpoint, EndpointSlicePort, Node, Pod, Service } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { LastSync } from './desired-incremental.ts';
import { MapDesiredSet } from './desired-set.ts';
import type { DesiredSet } from './desired-set.ts';
import { endpointForPod, podAddressesByFamily, shouldPodBeInEndpoints } from './endpoint-from-pod.ts';
import { endpointIdentity } from './endpoint-identity.ts';
import { portMapKey, sortPorts } from './port-map-key.ts';
import { namespaceOf } from './selector.ts';
import { endpointPortsForPod } from './target-port.ts';

/** One port-mapping group (A.5.4): its sorted ports and desired endpoints per address type. */
export interface Group {
  readonly ports: readonly EndpointSlicePort[];
  readonly desired: Readonly<Record<SliceAddressType, DesiredSet>>;
}

export interface DesiredState {
  /** Every group seen, including groups whose pods were all skipped (as upstream), by port-map key. */
  readonly groups: ReadonlyMap<string, Group>;
  /** A.3.4: pods skipped because their node is unknown. */
  readonly errors: readonly string[];
  /** Set by a stamped sync without errors: the plan records the slices it placed here (desired-incremental.ts). */
  readonly sync?: LastSync;
}

const FAMILIES: readonly SliceAddressType[] = ['IPv4', 'IPv6'];

/**
 * Walks the pods once: excluded pods (A.3.1, A.3.2) are skipped; a pod on an unknown node is
 * skipped with an error unless publishNotReadyAddresses (A.3.4), but still opens its port group
 * as upstream does. Two pods with the same identity: the later one wins (Map semantics).
 */
export function resolveReference(service: Service, pods: readonly Pod[], nodes: ReadonlyMap<string, Node>): DesiredState {
  const maps = new Map<string, { ports: EndpointSlicePort[]; byFamily: Record<SliceAddressType, Map<string, Endpoint>> }>();
  const errors: string[] = [];
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  const svcName = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod)) continue;
    const ports = endpointPortsForPod(service, pod);
    const key = portMapKey(ports);
    let group = maps.get(key);
    if (group === undefined) {
      group = { ports: sortPorts(ports), byFamily: { IPv4: new Map(), IPv6: new Map() } };
      maps.set(key, group);
    }
    const nodeName = pod.spec.nodeName ?? '';
    const node = nodes.get(nodeName);
    if (node === undefined && !publishNotReady) {
      errors.push(`skipping Pod ${pod.metadata.name} for Service ${svcName}: Node ${nodeName} Not Found`);
      continue;
    }
    const addresses = podAddressesByFamily(pod);
    for (const family of FAMILIES) {
      if (addresses[family].length === 0) continue; // A.2.5
      const endpoint = endpointForPod(pod, node, service, addresses[family]);
      group.byFamily[family].set(endpointIdentity(endpoint), endpoint);
    }
  }
  const groups = new Map<string, Group>();
  for (const [key, g] of maps) {
    groups.set(key, { ports: g.ports, desired: { IPv4: new MapDesiredSet(g.byFamily.IPv4), IPv6: new MapDesiredSet(g.byFamily.IPv6) } });
  }
  return { groups, errors };
}
