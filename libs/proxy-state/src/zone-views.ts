// Per-zone endpoint views: what an agent in a zone receives instead of every slice in the
// cluster (the subsetting upstream never shipped). A view entry is one slice filtered to a
// zone (same metadata, a subset of its endpoints), keyed by (zone, namespace, service, slice),
// so one endpoint change touches one entry per affected zone. updateZoneViews
// (zone-views-incremental.ts) gives the same views from a previous call's state, redoing only
// the entries of the slices that changed.

import type { EndpointSlice, IPFamily, Node, Service } from '@slicemesh/model';
import { deepEqual } from './deep-equal.ts';
import { orderSlices, sliceServiceName } from './merge-endpoints.ts';
import { compareStrings, sortedBy } from './order.ts';
import { proxiedServicePorts } from './service-port.ts';
import { proxySlice } from './proxy-slice.ts';
import { proxyIgnoresService, proxyIgnoresSlice } from './proxy-ignores.ts';
import { selectForZones } from './zone-view-selection.ts';
import type { KeptBodies } from './zone-view-basics.ts';
import { UNZONED_VIEW, keptBody, viewEntryKey, viewZoneOf, zoneTopologyOf } from './zone-view-basics.ts';

export { UNZONED_VIEW, viewEntryKey, viewZoneOf } from './zone-view-basics.ts';
export { updateZoneViewEntries, updateZoneViews, ZoneViewsState } from './zone-views-incremental.ts';
export type { ZoneViewEntriesUpdate, ZoneViewsUpdate } from './zone-views-incremental.ts';

export interface ZoneViewEntry {
  /** A zone name, or UNZONED_VIEW. */
  readonly zone: string;
  readonly namespace: string;
  readonly service: string;
  readonly sliceName: string;
  /** The slice as proxies read it (proxySlice), with only the endpoints this zone needs (never empty: empty entries are omitted). */
  readonly slice: EndpointSlice;
}

export interface ZoneViews {
  /** Every view, UNZONED_VIEW included, sorted. A view may hold no entries. */
  readonly zones: readonly string[];
  /** All entries by `viewEntryKey`, in key order. */
  readonly entries: ReadonlyMap<string, ZoneViewEntry>;
  /** The entries of each view (same keys as `zones`), in key order. */
  readonly byZone: ReadonlyMap<string, readonly ZoneViewEntry[]>;
}

export interface ZoneViewsInput {
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly nodes: readonly Node[];
  /** As for the proxies reading the views (PreferSameTrafficDistribution gate). Default true. */
  readonly preferSameNodeGate?: boolean;
}

interface SliceGroup {
  readonly namespace: string;
  readonly service: string;
  readonly family: IPFamily;
  readonly slices: EndpointSlice[];
}

/**
 * Computes every zone's view. A zone exists for each distinct zone label among `nodes`.
 * - UNZONED_VIEW holds every slice a proxy reads (service-name label, IPv4/IPv6), unfiltered.
 * - A zone view holds, per slice of a known service, the endpoints a node of that zone could
 *   route to (see zone-view-selection.ts); slices of services not in `services` go unfiltered
 *   to every view (nothing is known to filter by); slices of services the proxy never programs
 *   in that family (headless, ExternalName, other family) go to no zone view.
 * - What kube-proxy never sees (D.2.10, proxy-ignores.ts) goes to no view at all: a Service
 *   labelled for another proxy, with all its slices, and slices labelled so themselves.
 * Entries that would hold no endpoint are omitted, so no slices give views without entries.
 */
export function zoneViews(input: ZoneViewsInput): ZoneViews {
  const topo = zoneTopologyOf(input.nodes);
  const services = new Map<string, Service>();
  const away = new Set<string>();
  for (const s of input.services) {
    const key = `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`;
    if (proxyIgnoresService(s) === null) services.set(key, s);
    else away.add(key);
  }

  const groups = new Map<string, SliceGroup>();
  for (const slice of input.slices) {
    if (proxyIgnoresSlice(slice) !== null || away.has(`${slice.metadata.namespace ?? 'default'}/${sliceServiceName(slice) ?? ''}`)) continue;
    const service = sliceServiceName(slice);
    const family = slice.addressType;
    if (service === null || (family !== 'IPv4' && family !== 'IPv6')) continue;
    const namespace = slice.metadata.namespace ?? 'default';
    const key = `${namespace}/${service}/${family}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { namespace, service, family, slices: [] }));
    g.slices.push(slice);
  }

  const all: ZoneViewEntry[] = [];
  const add = (zone: string, g: SliceGroup, slice: EndpointSlice): void => {
    if (slice.endpoints.length > 0) all.push({ zone, namespace: g.namespace, service: g.service, sliceName: slice.metadata.name, slice });
  };
  for (const g of groups.values()) {
    for (const s of g.slices) add(UNZONED_VIEW, g, proxySlice(s));
    const service = services.get(`${g.namespace}/${g.service}`);
    if (!service) {
      for (const zone of topo.nodesByZone.keys()) for (const s of g.slices) add(zone, g, proxySlice(s));
      continue;
    }
    const ports = proxiedServicePorts(service, g.family);
    if (ports.length === 0) continue;
    const ordered = orderSlices(g.slices);
    const selection = selectForZones(ordered, ports, g.family, topo, input.preferSameNodeGate ?? true);
    // Zones that keep the same endpoints of a slice share one body (as updateZoneViews does).
    const bodies = ordered.map((): KeptBodies => []);
    for (const [zone, perSlice] of selection) {
      ordered.forEach((s, si) => {
        const kept = perSlice[si] ?? [];
        add(zone, g, keptBody(bodies[si] ?? [], s, kept.length === s.endpoints.length ? null : kept));
      });
    }
  }

  const keyed = sortedBy(
    all.map((e) => [viewEntryKey(e.zone, e.namespace, e.service, e.sliceName), e] as const),
    ([k]) => k,
  );
  const zones = [...topo.nodesByZone.keys(), UNZONED_VIEW].sort(compareStrings);
  const byZone = new Map<string, ZoneViewEntry[]>(zones.map((z) => [z, []]));
  for (const [, e] of keyed) byZone.get(e.zone)?.push(e);
  return { zones, entries: new Map(keyed), byZone };
}

/**
 * The slices an agent on `node` receives: its zone's view, or the unfiltered view when the
 * node has no zone label or its zone has no view yet (unknown when the views were computed).
 */
export function viewSlicesForNode(views: ZoneViews, node: Node | undefined): EndpointSlice[] {
  const zone = viewZoneOf(node);
  const entries = views.byZone.get(zone) ?? views.byZone.get(UNZONED_VIEW) ?? [];
  return entries.map((e) => e.slice);
}

export type ZoneViewOp =
  | { readonly op: 'put'; readonly key: string; readonly entry: ZoneViewEntry }
  | {
      readonly op: 'delete';
      readonly key: string;
      readonly zone: string;
      readonly namespace: string;
      readonly service: string;
      readonly sliceName: string;
    };

/**
 * The per-entry operations that turn `prev` into `next`, in key order: `put` for new entries
 * and entries whose slice changed, `delete` for entries gone. Equal views give [].
 */
export function diffZoneViews(prev: ZoneViews, next: ZoneViews): ZoneViewOp[] {
  const ops: ZoneViewOp[] = [];
  for (const [key, entry] of next.entries) {
    const old = prev.entries.get(key);
    if (!old || (old.slice !== entry.slice && !deepEqual(old.slice, entry.slice))) ops.push({ op: 'put', key, entry });
  }
  for (const [key, e] of prev.entries) {
    if (!next.entries.has(key)) {
      ops.push({ op: 'delete', key, zone: e.zone, namespace: e.namespace, service: e.service, sliceName: e.sliceName });
    }
  }
  return ops.sort((a, b) => compareStrings(a.key, b.key));
}
