// What one Service looks like at a point of the replay: its slices with the hints the hints
// service gives them (hintService, the same call), the hints decisions, and the per-zone views
// agents receive (zoneViews from libs/proxy-state). Computed from a Replayer, never stored.

import { hintService } from '@slicemesh/core';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, LABEL_ZONE } from '@slicemesh/model';
import { zoneViews } from '@slicemesh/proxy-state';
import type { HintsDecision } from '@slicemesh/topology';
import { TopologyCache } from '@slicemesh/topology';
import type { Replayer } from './replayer.ts';

export interface ServiceState {
  readonly namespace: string;
  readonly name: string;
  /** null when the Service does not exist at that point (its slices may still, until deleted). */
  readonly service: Service | null;
  /** Every slice of the Service (ours with hints, then other controllers'), sorted by name. */
  readonly slices: readonly EndpointSlice[];
  /** The slicer's own slices as it stored them (before hints), sorted by name: what SLICES carried. */
  readonly ownSlices: readonly EndpointSlice[];
  /** The hints decisions, one per address type with slices. */
  readonly decisions: readonly HintsDecision[];
  /** Per zone (and `_` for nodes without a zone): the slices agents of that zone receive. */
  readonly zoneViews: Readonly<Record<string, readonly EndpointSlice[]>>;
}

export interface NodeInfo {
  readonly name: string;
  /** '' when the node has no zone label. */
  readonly zone: string;
}

export const nodeInfo = (n: Node): NodeInfo => ({ name: n.metadata.name, zone: n.metadata.labels?.[LABEL_ZONE] ?? '' });

/** A topology cache fed `nodes`, as the hints service keeps one. */
export function topologyCacheOf(nodes: readonly Node[]): TopologyCache {
  const cache = new TopologyCache();
  cache.setNodes(nodes);
  return cache;
}

const byName = (a: EndpointSlice, b: EndpointSlice): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

/** `ns/name` of every Service with a spec, slices (ours or foreign) or Endpoints, sorted. */
export function serviceKeys(rep: Replayer): string[] {
  const keys = new Set(rep.state.reconcilableKeys());
  for (const s of rep.foreignSlices()) {
    const svc = s.metadata.labels?.[LABEL_SERVICE_NAME];
    if (svc !== undefined && svc !== '') keys.add(`${s.metadata.namespace ?? 'default'}/${svc}`);
  }
  return [...keys].sort();
}

/** The state of `namespace/name` now (see the file comment); `cache` is the hints service's. */
export function serviceState(rep: Replayer, namespace: string, name: string, cache: TopologyCache, nodes: readonly Node[]): ServiceState {
  const service = rep.state.service(namespace, name) ?? null;
  const foreign = rep.foreignSlices().filter((s) => (s.metadata.namespace ?? 'default') === namespace && s.metadata.labels?.[LABEL_SERVICE_NAME] === name);
  const own = rep.state.slicesOf(namespace, name);
  const all = [...own, ...foreign];
  let slices: readonly EndpointSlice[] = all;
  let decisions: readonly HintsDecision[] = [];
  if (service !== null && all.length > 0) {
    const out = hintService({ service, slices: all, cache, preferSameTrafficDistribution: rep.settings.preferSameTrafficDistribution, managedBy: rep.settings.managedBy });
    slices = out.slices;
    decisions = out.decisions;
  }
  const views = zoneViews({ services: service === null ? [] : [service], slices, nodes, preferSameNodeGate: rep.settings.preferSameTrafficDistribution });
  const zoneViewsOut: Record<string, EndpointSlice[]> = {};
  for (const [zone, entries] of views.byZone) if (entries.length > 0) zoneViewsOut[zone] = entries.map((e) => e.slice);
  return { namespace, name, service, slices: [...slices].sort(byName), ownSlices: own, decisions, zoneViews: zoneViewsOut };
}
