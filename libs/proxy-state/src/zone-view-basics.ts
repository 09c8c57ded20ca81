// The vocabulary shared by the full and the incremental zone-view computations: the unzoned
// view, the view a node reads, entry keys, and the node topology both select against.

import type { Node } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import { compareStrings } from './order.ts';
import type { ZoneTopology } from './zone-view-selection.ts';

/**
 * The view for nodes without a zone label: every slice, unfiltered. '_' can never be a zone
 * name: label values must start and end with an alphanumeric character. (A node whose label
 * is literally '_' or '' is treated as unzoned, which is always correct, only less narrow.)
 */
export const UNZONED_VIEW = '_';

/** The opaque, collision-free key of a view entry. */
export function viewEntryKey(zone: string, namespace: string, service: string, sliceName: string): string {
  return JSON.stringify([zone, namespace, service, sliceName]);
}

/** The view a node reads its slices from: its zone label, or UNZONED_VIEW without a usable one. */
export function viewZoneOf(node: Node | undefined): string {
  const z = node?.metadata.labels?.[LABEL_ZONE];
  return z && z !== UNZONED_VIEW ? z : UNZONED_VIEW;
}

/** Each node's zone (null without a usable label) and each zone's nodes, zones in name order. */
export function zoneTopologyOf(nodes: readonly Node[]): ZoneTopology {
  const zoneOfNode = new Map<string, string | null>();
  const members = new Map<string, Set<string>>();
  for (const n of nodes) {
    const z = viewZoneOf(n);
    const zone = z === UNZONED_VIEW ? null : z;
    zoneOfNode.set(n.metadata.name, zone);
    if (zone === null) continue;
    let s = members.get(zone);
    if (!s) members.set(zone, (s = new Set()));
    s.add(n.metadata.name);
  }
  const nodesByZone = new Map<string, readonly string[]>();
  for (const z of [...members.keys()].sort(compareStrings)) nodesByZone.set(z, [...(members.get(z) ?? [])]);
  return { zoneOfNode, nodesByZone };
}

/** Same nodes in the same zones (the order of `nodesByZone` follows from its keys). */
export function sameZoneTopology(a: ZoneTopology, b: ZoneTopology): boolean {
  if (a === b) return true;
  if (a.zoneOfNode.size !== b.zoneOfNode.size || a.nodesByZone.size !== b.nodesByZone.size) return false;
  for (const [node, zone] of a.zoneOfNode) if (b.zoneOfNode.get(node) !== zone || !b.zoneOfNode.has(node)) return false;
  for (const [zone, nodes] of a.nodesByZone) {
    const other = b.nodesByZone.get(zone);
    if (other === undefined || other.length !== nodes.length || other.some((n, i) => n !== nodes[i])) return false;
  }
  return true;
}
