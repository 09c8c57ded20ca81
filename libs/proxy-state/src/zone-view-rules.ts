// The zone selection of zone-view-selection.ts split in two halves, so that a change to one
// slice can be judged without merging the others again:
// - facts: what one slice contributes to each service port's decisions (counts, hinted
//   zones and nodes, the smallest candidate endpoints), summed per service into totals;
// - rules: what the totals decide per port and zone (filter or not, by zone hints, node
//   hints, the spoiler and witness endpoints), and the marks they give one slice's endpoints.
// Both halves restate selectForZones and hold only while no endpoint identity (port, ip:port)
// is held by two slices: de-duplication and "a kept copy keeps every copy" cross slices, so
// callers check `identities` first. The property test compares the two computations.

import type { EndpointSlice, IPFamily } from '@slicemesh/model';
import type { EndpointInfo, MergedEntry } from './merge-endpoints.ts';
import { mergeOrderedSlices, portKey } from './merge-endpoints.ts';
import { compareStrings } from './order.ts';
import type { ServicePortInfo } from './service-port.ts';
import type { ZoneTopology } from './zone-view-selection.ts';

/** What one slice's endpoints contribute to one service port. */
export interface PortFacts {
  readonly ready: number;
  readonly readyWithoutNodeHints: number;
  readonly readyWithoutZoneHints: number;
  /** Usable = ready, or serving and terminating. */
  readonly usable: number;
  /** Zone -> ready endpoints hinted for it. */
  readonly zoneHinted: ReadonlyMap<string, number>;
  /** Node (one with a zone) -> ready endpoints hinted for it. */
  readonly hintedNodes: ReadonlyMap<string, number>;
  /** Zone -> usable endpoints on its nodes. */
  readonly usableByZone: ReadonlyMap<string, number>;
  /** Usable endpoints on nodes the topology does not know. */
  readonly unknownUsable: number;
  /** The smallest ready endpoint without node hints (the spoiler candidate). */
  readonly spoiler: string | null;
  /** The smallest usable endpoint (the witness candidate). */
  readonly witness: string | null;
}

export interface SliceFacts {
  /** Every (port key, endpoint) the slice holds after its own de-duplication, each once. */
  readonly identities: readonly string[];
  /** Per service port, in the order of the ports given. */
  readonly ports: readonly PortFacts[];
}

const usable = (i: EndpointInfo): boolean => i.ready || (i.serving && i.terminating);

function bump(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n === 0) m.delete(k);
  else m.set(k, n);
}

function smaller(a: string | null, b: string): string {
  return a === null || compareStrings(b, a) < 0 ? b : a;
}

function mergeOne(slice: EndpointSlice, family: IPFamily, onDuplicate?: (seen: number, copy: number) => void): Map<string, Map<string, MergedEntry>> {
  return mergeOrderedSlices([slice], { nodeName: '', family }, onDuplicate && ((seen, copy) => onDuplicate(seen.endpoint, copy.endpoint)));
}

function portFacts(entries: Iterable<MergedEntry>, topo: ZoneTopology): PortFacts {
  let ready = 0;
  let readyWithoutNodeHints = 0;
  let readyWithoutZoneHints = 0;
  let usableCount = 0;
  let unknownUsable = 0;
  let spoiler: string | null = null;
  let witness: string | null = null;
  const zoneHinted = new Map<string, number>();
  const hintedNodes = new Map<string, number>();
  const usableByZone = new Map<string, number>();
  for (const { info } of entries) {
    if (info.ready) {
      ready++;
      if (info.zoneHints.length === 0) readyWithoutZoneHints++;
      for (const z of info.zoneHints) bump(zoneHinted, z, 1);
      if (info.nodeHints.length === 0) {
        readyWithoutNodeHints++;
        spoiler = smaller(spoiler, info.endpoint);
      }
      for (const n of info.nodeHints) if (topo.zoneOfNode.get(n)) bump(hintedNodes, n, 1);
    }
    if (!usable(info)) continue;
    usableCount++;
    witness = smaller(witness, info.endpoint);
    if (info.nodeName === null) continue;
    const z = topo.zoneOfNode.get(info.nodeName);
    if (z === undefined) unknownUsable++;
    else if (z !== null) bump(usableByZone, z, 1);
  }
  return { ready, readyWithoutNodeHints, readyWithoutZoneHints, usable: usableCount, zoneHinted, hintedNodes, usableByZone, unknownUsable, spoiler, witness };
}

/** The facts of one slice (of one family) for the service's `ports`. */
export function sliceFacts(slice: EndpointSlice, ports: readonly ServicePortInfo[], family: IPFamily, topo: ZoneTopology): SliceFacts {
  const merged = mergeOne(slice, family);
  const identities: string[] = [];
  for (const [key, group] of merged) for (const endpoint of group.keys()) identities.push(`${key}\u0000${endpoint}`);
  return {
    identities,
    ports: ports.map((sp) => portFacts(merged.get(portKey(sp.portName, sp.protocol))?.values() ?? [], topo)),
  };
}

/** Running sums of PortFacts over a service's slices (candidates excluded: see `zoneRules`). */
export class PortTotals {
  ready = 0;
  readyWithoutNodeHints = 0;
  readyWithoutZoneHints = 0;
  usable = 0;
  unknownUsable = 0;
  readonly zoneHinted = new Map<string, number>();
  readonly hintedNodes = new Map<string, number>();
  readonly usableByZone = new Map<string, number>();

  /** Adds (sign 1) or removes (sign -1) one slice's facts. */
  add(f: PortFacts, sign: 1 | -1): void {
    this.ready += sign * f.ready;
    this.readyWithoutNodeHints += sign * f.readyWithoutNodeHints;
    this.readyWithoutZoneHints += sign * f.readyWithoutZoneHints;
    this.usable += sign * f.usable;
    this.unknownUsable += sign * f.unknownUsable;
    for (const [z, n] of f.zoneHinted) bump(this.zoneHinted, z, sign * n);
    for (const [k, n] of f.hintedNodes) bump(this.hintedNodes, k, sign * n);
    for (const [z, n] of f.usableByZone) bump(this.usableByZone, z, sign * n);
  }
}

interface ZoneRule {
  /** Cluster endpoints: no usable hint mode, so the zone keeps every ready (or usable terminating) endpoint. */
  readonly fallback: boolean;
  readonly zoneHints: boolean;
  readonly spoiler: boolean;
  readonly witness: boolean;
}

/** What one service port's totals decide, per zone. */
export interface PortRule {
  readonly readyAny: boolean;
  /** Node hints are complete and honoured: a zone also keeps endpoints hinted for its nodes. */
  readonly nodeHints: boolean;
  readonly zones: ReadonlyMap<string, ZoneRule>;
  readonly spoiler: string | null;
  readonly witness: string | null;
  /** Equal signatures give equal marks to every endpoint of the same slice. */
  readonly signature: string;
}

/**
 * The rule of port `sp` from its totals. `candidate` yields the smallest spoiler or witness
 * over all slices; it is asked only when some zone needs one.
 */
export function portRule(sp: ServicePortInfo, t: PortTotals, topo: ZoneTopology, gate: boolean, candidate: (kind: 'spoiler' | 'witness') => string | null): PortRule {
  const readyAny = t.ready > 0;
  const allNode = readyAny && t.readyWithoutNodeHints === 0;
  const allZone = readyAny && t.readyWithoutZoneHints === 0;
  const zones = new Map<string, ZoneRule>();
  let needSpoiler = false;
  let needWitness = false;
  for (const [zone, nodes] of topo.nodesByZone) {
    let fallback = false;
    let zoneHints = false;
    let spoiler = false;
    if (sp.usesClusterEndpoints) {
      let hinted = 0;
      for (const n of nodes) if (t.hintedNodes.has(n)) hinted++;
      zoneHints = allZone && t.zoneHinted.has(zone);
      fallback = !zoneHints && !(gate && allNode && hinted === nodes.length);
      spoiler = !fallback && gate && !allNode && hinted > 0 && t.readyWithoutNodeHints > 0;
    }
    const witness = sp.usesLocalEndpoints && !sp.usesClusterEndpoints && !t.usableByZone.has(zone) && t.unknownUsable === 0 && t.usable > 0;
    needSpoiler ||= spoiler;
    needWitness ||= witness;
    zones.set(zone, { fallback, zoneHints, spoiler, witness });
  }
  const spoiler = needSpoiler ? candidate('spoiler') : null;
  const witness = needWitness ? candidate('witness') : null;
  const nodeHints = gate && allNode;
  const parts = [readyAny ? 'r' : '-', nodeHints ? 'n' : '-', JSON.stringify(spoiler), JSON.stringify(witness)];
  for (const [zone, r] of zones) parts.push(`${zone}=${+r.fallback}${+r.zoneHints}${+r.spoiler}${+r.witness}`);
  return { readyAny, nodeHints, zones, spoiler, witness, signature: parts.join('|') };
}

class Copies {
  readonly #parent: Int32Array;
  constructor(n: number) {
    this.#parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  root(i: number): number {
    while (this.#parent[i] !== i) {
      const up = this.#parent[i] ?? i;
      this.#parent[i] = this.#parent[up] ?? up; // path halving
      i = up;
    }
    return i;
  }
  join(a: number, b: number): void {
    const ra = this.root(a);
    const rb = this.root(b);
    if (ra !== rb) this.#parent[rb] = ra;
  }
}

function marks(info: EndpointInfo, sp: ServicePortInfo, rule: PortRule, zr: ZoneRule, zone: string, topo: ZoneTopology): boolean {
  if (sp.usesClusterEndpoints) {
    if (zr.fallback) {
      if (rule.readyAny ? info.ready : info.serving && info.terminating) return true;
    } else if (info.ready) {
      if (zr.zoneHints && info.zoneHints.includes(zone)) return true;
      if (rule.nodeHints && info.nodeHints.some((n) => topo.zoneOfNode.get(n) === zone)) return true;
      if (zr.spoiler && info.endpoint === rule.spoiler) return true;
    }
  }
  if (sp.usesLocalEndpoints) {
    if (info.nodeName !== null) {
      const z = topo.zoneOfNode.get(info.nodeName);
      if (z === undefined || z === zone) return true;
    }
    if (zr.witness && info.endpoint === rule.witness) return true;
  }
  return false;
}

/**
 * Per zone of `topo`, the endpoint indexes of `slice` its view keeps under `rules` (one per
 * port, same order as `ports`), in slice order: what selectForZones gives this slice when no
 * other slice shares an endpoint identity with it.
 */
export function selectSlice(slice: EndpointSlice, ports: readonly ServicePortInfo[], family: IPFamily, topo: ZoneTopology, rules: readonly PortRule[]): Map<string, number[]> {
  const n = slice.endpoints.length;
  const copies = new Copies(n);
  const merged = mergeOne(slice, family, (seen, copy) => copies.join(seen, copy));
  const marked = new Map<string, Uint8Array>();
  for (const zone of topo.nodesByZone.keys()) marked.set(zone, new Uint8Array(n));
  ports.forEach((sp, i) => {
    const group = merged.get(portKey(sp.portName, sp.protocol));
    const rule = rules[i];
    if (!group || !rule) return;
    for (const { info, ref } of group.values()) {
      for (const [zone, zr] of rule.zones) {
        if (marks(info, sp, rule, zr, zone, topo)) (marked.get(zone) as Uint8Array)[ref.endpoint] = 1;
      }
    }
  });
  const out = new Map<string, number[]>();
  for (const [zone, m] of marked) {
    const keptRoots = new Uint8Array(n);
    for (let i = 0; i < n; i++) if (m[i]) keptRoots[copies.root(i)] = 1;
    const kept: number[] = [];
    for (let i = 0; i < n; i++) if (keptRoots[copies.root(i)]) kept.push(i);
    out.set(zone, kept);
  }
  return out;
}
