// Which endpoints of one service's slices (one family) a zone's view must hold so that every
// node of the zone computes exactly the proxy model it would compute from all slices.
//
// Per service port, with R = ready merged endpoints:
// - Cluster policy. A node applies node hints if the gate is on, every r in R has a node hint
//   and some r is hinted for it; else zone hints if every r has a zone hint and some r is
//   hinted for its zone; else nothing. If some node of the zone filters nothing, the view
//   holds all of R (or, when R is empty, every serving+terminating endpoint). Otherwise it
//   holds R hinted for the zone and, under node hints, R hinted for the zone's nodes. When
//   node hints are incomplete but some r names a node of the zone, one ready endpoint without
//   a node hint is kept too, so no node of the zone mistakes the view for complete node hints.
// - Local policy. Endpoints on the zone's nodes, and on nodes nobody knows (the agent may be
//   newer than our node list). A Local-only port keeps one usable endpoint as a witness, so
//   `hasAnyEndpoints` (reject vs drop) stays right on nodes without local endpoints.
// - Duplicates. De-duplication picks one copy of an IP:port; if a view held only some copies
//   it could pick another. So the selection is closed over "copy of" across all ports: any
//   kept copy keeps every copy. Extra endpoints are harmless: they add no hint level, are
//   never hinted for the zone's nodes, and are not local to them.

import type { EndpointSlice, IPFamily } from '@slicemesh/model';
import type { EndpointRef, MergedEntry } from './merge-endpoints.ts';
import { mergeOrderedSlices, portKey } from './merge-endpoints.ts';
import { compareStrings } from './order.ts';
import type { ServicePortInfo } from './service-port.ts';

export interface ZoneTopology {
  /** Known nodes and their zone (null: no usable zone label). */
  readonly zoneOfNode: ReadonlyMap<string, string | null>;
  /** Zone -> its node names; only zones with at least one node. */
  readonly nodesByZone: ReadonlyMap<string, readonly string[]>;
}

/** Per zone, for every slice (merge order), the kept endpoint indexes in slice order. */
export type ZoneSelection = Map<string, number[][]>;

function push<K>(m: Map<K, number[]>, k: K, id: number): void {
  const list = m.get(k);
  if (list) list.push(id);
  else m.set(k, [id]);
}

/** The entry with the smallest endpoint key among those `pick` accepts. */
function first(entries: readonly MergedEntry[], pick: (e: MergedEntry) => boolean): MergedEntry | null {
  let best: MergedEntry | null = null;
  for (const e of entries) if (pick(e) && (best === null || compareStrings(e.info.endpoint, best.info.endpoint) < 0)) best = e;
  return best;
}

class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = new Int32Array(n);
    for (let i = 0; i < n; i++) this.parent[i] = i;
  }
  find(i: number): number {
    let r = i;
    while (this.parent[r] !== r) r = this.parent[r] ?? r;
    while (this.parent[i] !== r) {
      const next = this.parent[i] ?? r;
      this.parent[i] = r;
      i = next;
    }
    return r;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[rb] = ra;
  }
}

/** What one service port needs per zone, computed once from its merged endpoints. */
function markPort(
  entries: readonly MergedEntry[],
  sp: ServicePortInfo,
  topo: ZoneTopology,
  gate: boolean,
  idOf: (ref: EndpointRef) => number,
  marks: ReadonlyMap<string, Uint8Array>,
): void {
  const ready = entries.filter((e) => e.info.ready);
  const st = entries.filter((e) => e.info.serving && e.info.terminating);
  const allNodeHints = ready.length > 0 && ready.every((e) => e.info.nodeHints.length > 0);
  const allZoneHints = ready.length > 0 && ready.every((e) => e.info.zoneHints.length > 0);
  const zoneHinted = new Map<string, number[]>();
  const nodeHinted = new Map<string, number[]>(); // by the zone of the hinted node
  const hintedNodes = new Map<string, Set<string>>(); // zone -> its nodes some r is hinted for
  for (const e of ready) {
    const id = idOf(e.ref);
    for (const z of e.info.zoneHints) push(zoneHinted, z, id);
    for (const n of e.info.nodeHints) {
      const z = topo.zoneOfNode.get(n);
      if (!z) continue;
      push(nodeHinted, z, id);
      let s = hintedNodes.get(z);
      if (!s) hintedNodes.set(z, (s = new Set()));
      s.add(n);
    }
  }
  const localByZone = new Map<string, number[]>();
  const usableZones = new Set<string>();
  const unknownNode: number[] = [];
  let unknownUsable = false;
  const usable = (e: MergedEntry): boolean => e.info.ready || (e.info.serving && e.info.terminating);
  if (sp.usesLocalEndpoints) {
    for (const e of entries) {
      const n = e.info.nodeName;
      if (n === null) continue;
      const z = topo.zoneOfNode.get(n);
      if (z === undefined) {
        unknownNode.push(idOf(e.ref));
        unknownUsable ||= usable(e);
      } else if (z !== null) {
        push(localByZone, z, idOf(e.ref));
        if (usable(e)) usableZones.add(z);
      }
    }
  }
  const witness = first(entries, usable);
  const spoiler = first(ready, (e) => e.info.nodeHints.length === 0);

  for (const [zone, nodes] of topo.nodesByZone) {
    const m = marks.get(zone);
    if (!m) continue;
    const mark = (ids: readonly number[] | undefined): void => {
      for (const id of ids ?? []) m[id] = 1;
    };
    if (sp.usesClusterEndpoints) {
      const zoneMode = allZoneHints && zoneHinted.has(zone);
      const everyNodeByNode = gate && allNodeHints && (hintedNodes.get(zone)?.size ?? 0) === nodes.length;
      if (!zoneMode && !everyNodeByNode) {
        mark((ready.length > 0 ? ready : st).map((e) => idOf(e.ref)));
      } else {
        if (zoneMode) mark(zoneHinted.get(zone));
        if (gate && allNodeHints) mark(nodeHinted.get(zone));
        if (gate && !allNodeHints && hintedNodes.has(zone) && spoiler) mark([idOf(spoiler.ref)]);
      }
    }
    if (sp.usesLocalEndpoints) {
      mark(localByZone.get(zone));
      mark(unknownNode);
      if (!sp.usesClusterEndpoints && !usableZones.has(zone) && !unknownUsable && witness) mark([idOf(witness.ref)]);
    }
  }
}

/**
 * For the slices of ONE service and ONE family, already in merge order, and that family's
 * programmed ports: per zone of `topo`, which endpoints of each slice the zone's view keeps.
 * No ports, no slices or no endpoints give empty selections for every zone.
 */
export function selectForZones(
  ordered: readonly EndpointSlice[],
  ports: readonly ServicePortInfo[],
  family: IPFamily,
  topo: ZoneTopology,
  gate: boolean,
): ZoneSelection {
  const offsets: number[] = [];
  let total = 0;
  for (const s of ordered) {
    offsets.push(total);
    total += s.endpoints.length;
  }
  const idOf = (ref: EndpointRef): number => (offsets[ref.slice] ?? 0) + ref.endpoint;
  const copies = new UnionFind(total);
  const merged = mergeOrderedSlices(ordered, { nodeName: '', family }, (seen, copy) => copies.union(idOf(seen), idOf(copy)));

  const marks = new Map<string, Uint8Array>();
  for (const zone of topo.nodesByZone.keys()) marks.set(zone, new Uint8Array(total));
  for (const sp of ports) {
    const group = merged.get(portKey(sp.portName, sp.protocol));
    if (group) markPort([...group.values()], sp, topo, gate, idOf, marks);
  }

  const out: ZoneSelection = new Map();
  for (const [zone, m] of marks) {
    const keptRoots = new Uint8Array(total);
    for (let id = 0; id < total; id++) if (m[id]) keptRoots[copies.find(id)] = 1;
    out.set(
      zone,
      ordered.map((s, si) => {
        const kept: number[] = [];
        const base = offsets[si] ?? 0;
        for (let ei = 0; ei < s.endpoints.length; ei++) if (keptRoots[copies.find(base + ei)]) kept.push(ei);
        return kept;
      }),
    );
  }
  return out;
}
