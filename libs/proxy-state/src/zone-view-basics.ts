// The vocabulary shared by the full and the incremental zone-view computations: the unzoned
// view, the view a node reads, entry keys, the node topology both select against, and the
// bodies the zones of one slice share.

import type { EndpointSlice, Node } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import { compareStrings } from './order.ts';
import { proxySlice } from './proxy-slice.ts';
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

/** Same kept endpoint indexes (null = the whole slice). */
export const sameKept = (a: readonly number[] | null, b: readonly number[] | null): boolean =>
  a === b || (a !== null && b !== null && a.length === b.length && a.every((x, i) => x === b[i]));

/**
 * The view bodies made for one slice, by the endpoints they keep (null = all): zones that keep
 * the same endpoints (every zone of a Service without topology keeps its ready ones) share one
 * body, which callers then serialise once (their caches are per body object). A slice has one
 * body per distinct selection, a handful at most, so they are searched, not hashed: joining a
 * 1000-index selection into a key for every zone cost more than the serialisations it saved.
 */
export type KeptBodies = { readonly kept: readonly number[] | null; readonly body: EndpointSlice }[];

/** The body of `slice` keeping `kept` (null = all, as proxies read it): one of `bodies`, or a new one added to them. */
export function keptBody(bodies: KeptBodies, slice: EndpointSlice, kept: readonly number[] | null): EndpointSlice {
  const found = bodies.find((b) => sameKept(b.kept, kept));
  if (found !== undefined) return found.body;
  const whole = proxySlice(slice);
  const body = kept === null ? whole : { ...whole, endpoints: kept.map((i) => whole.endpoints[i]).filter((e) => e !== undefined) };
  bodies.push({ kept, body });
  return body;
}
