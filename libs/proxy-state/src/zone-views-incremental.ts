// zoneViews() kept up to date across calls: a change to some slices recomputes only their
// (zone, slice) entries when what the service's other endpoints decide is unchanged, and
// entries that come out the same keep their object, so callers can cache per entry (JSON,
// digests). Same inputs give the same views as zoneViews(); the property test holds it.
//
// Per (service, family) group the state keeps each slice's facts, the running totals they
// add up to, the rules those totals give (zone-view-rules.ts) and how many endpoint
// identities two slices share. A changed slice is re-selected alone when nobody shares an
// identity and the rules' signatures match before and after; otherwise the whole group goes
// through selectForZones, the reference selection. A new node topology, gate or Service
// object rebuilds the group.

import type { EndpointSlice, IPFamily, Service } from '@slicemesh/model';
import { orderSlices, sliceServiceName } from './merge-endpoints.ts';
import { compareStrings } from './order.ts';
import type { ServicePortInfo } from './service-port.ts';
import { proxiedServicePorts } from './service-port.ts';
import type { KeptBodies } from './zone-view-basics.ts';
import { UNZONED_VIEW, keptBody, sameKept, sameZoneTopology, viewEntryKey, zoneTopologyOf } from './zone-view-basics.ts';
import type { PortRule, SliceFacts } from './zone-view-rules.ts';
import { PortTotals, portRule, selectSlice, sliceFacts } from './zone-view-rules.ts';
import { proxyIgnoresService, proxyIgnoresSlice } from './proxy-ignores.ts';
import type { ZoneTopology } from './zone-view-selection.ts';
import { selectForZones } from './zone-view-selection.ts';
import type { ZoneViewEntry, ZoneViews, ZoneViewsInput } from './zone-views.ts';

interface ZoneEntry {
  readonly key: string;
  /** Kept endpoint indexes; null = the whole slice. */
  readonly kept: readonly number[] | null;
  /** null when the zone keeps no endpoint of the slice. */
  readonly entry: ZoneViewEntry | null;
}

interface SliceState {
  readonly slice: EndpointSlice;
  /** Only in filtered groups. */
  readonly facts: SliceFacts | null;
  /** Per zone, UNZONED_VIEW included. */
  views: Map<string, ZoneEntry>;
}

/** How a group's zone views are made: filtered by selection, whole slices everywhere (Service unknown), or unzoned only (never programmed). */
type GroupKind = 'filtered' | 'unknown' | 'unprogrammed';

interface GroupState {
  readonly namespace: string;
  readonly service: string;
  readonly family: IPFamily;
  readonly svc: Service | undefined;
  readonly kind: GroupKind;
  readonly ports: readonly ServicePortInfo[];
  readonly slices: Map<string, SliceState>;
  readonly totals: PortTotals[];
  /** Identity -> slices holding it. */
  readonly holders: Map<string, number>;
  /** Identities held by more than one slice. */
  shared: number;
  /** The rules the current slices give; null while identities are shared. */
  rules: readonly PortRule[] | null;
}

/** The memory of updateZoneViews between calls. Opaque; each state can be passed back once. */
export class ZoneViewsState {
  readonly nodes: ZoneViewsInput['nodes'];
  readonly topo: ZoneTopology;
  readonly gate: boolean;
  readonly groups: ReadonlyMap<string, GroupState>;
  #consumed = false;
  /** @internal */
  constructor(
    nodes: ZoneViewsInput['nodes'],
    topo: ZoneTopology,
    gate: boolean,
    groups: ReadonlyMap<string, GroupState>,
  ) {
    this.nodes = nodes;
    this.topo = topo;
    this.gate = gate;
    this.groups = groups;
  }

  /** @internal Marks the state handed over; a second hand-over throws. */
  take(): this {
    if (this.#consumed) throw new Error('ZoneViewsState was already passed to updateZoneViews: use the state it returned');
    this.#consumed = true;
    return this;
  }
}

export interface ZoneViewsUpdate extends ZoneViewEntriesUpdate {
  /** Equal to zoneViews(input). */
  readonly views: ZoneViews;
}

/** updateZoneViews without the assembled views: the entries, unsorted (see updateZoneViewEntries). */
export interface ZoneViewEntriesUpdate {
  /** The entries zoneViews(input) holds, in no particular order; read before passing `state` on. */
  readonly entries: readonly ZoneViewEntry[];
  /** Pass to the next call (instead of the previous one, which is used up). */
  readonly state: ZoneViewsState;
  /** Slices whose entries were selected again (all of a group on a full selection). */
  readonly recomputedSlices: number;
  /** Groups that went through the full selection. */
  readonly fullSelections: number;
}

interface Stats {
  recomputedSlices: number;
  fullSelections: number;
}

/** The zone entry of `slice` keeping `kept` (null = all), reusing `old` when it kept the same. */
function zoneEntry(g: GroupState, zone: string, slice: EndpointSlice, kept: readonly number[] | null, old: ZoneEntry | undefined, oldSlice: EndpointSlice | undefined, bodies: KeptBodies): ZoneEntry {
  const all = kept === null || kept.length === slice.endpoints.length;
  const norm = all ? null : kept;
  if (old !== undefined && oldSlice === slice && sameKept(old.kept, norm)) {
    if (old.entry !== null) bodies.push({ kept: norm, body: old.entry.slice });
    return old;
  }
  const key = old?.key ?? viewEntryKey(zone, g.namespace, g.service, slice.metadata.name);
  const body = keptBody(bodies, slice, norm);
  const entry = body.endpoints.length > 0 ? { zone, namespace: g.namespace, service: g.service, sliceName: slice.metadata.name, slice: body } : null;
  return { key, kept: norm, entry };
}

/** Sets a slice's entries from `perZone` (zone -> kept; null = the whole slice), reusing what is unchanged. */
function setViews(g: GroupState, st: SliceState, perZone: ReadonlyMap<string, readonly number[] | null>, previous: SliceState | undefined): void {
  const views = new Map<string, ZoneEntry>();
  const bodies: KeptBodies = [];
  const unzoned = UNZONED_VIEW;
  views.set(unzoned, zoneEntry(g, unzoned, st.slice, null, previous?.views.get(unzoned), previous?.slice, bodies));
  for (const [zone, kept] of perZone) views.set(zone, zoneEntry(g, zone, st.slice, kept, previous?.views.get(zone), previous?.slice, bodies));
  st.views = views;
}

function unfilteredZones(g: GroupState, topo: ZoneTopology): Map<string, null> {
  return new Map(g.kind === 'unknown' ? [...topo.nodesByZone.keys()].map((z) => [z, null] as const) : []);
}

function hold(g: GroupState, facts: SliceFacts, sign: 1 | -1): void {
  facts.ports.forEach((f, i) => g.totals[i]?.add(f, sign));
  for (const id of facts.identities) {
    const before = g.holders.get(id) ?? 0;
    const after = before + sign;
    if (after === 0) g.holders.delete(id);
    else g.holders.set(id, after);
    if (before === 1 && after === 2) g.shared++;
    if (before === 2 && after === 1) g.shared--;
  }
}

function rulesOf(g: GroupState, topo: ZoneTopology, gate: boolean): PortRule[] {
  return g.ports.map((sp, i) =>
    portRule(sp, g.totals[i] as PortTotals, topo, gate, (kind) => {
      let best: string | null = null;
      for (const st of g.slices.values()) {
        const c = st.facts?.ports[i]?.[kind] ?? null;
        if (c !== null && (best === null || compareStrings(c, best) < 0)) best = c;
      }
      return best;
    }),
  );
}

const sameRules = (a: readonly PortRule[] | null, b: readonly PortRule[]): boolean =>
  a !== null && a.length === b.length && a.every((r, i) => r.signature === b[i]?.signature);

/** Every slice of a filtered group through selectForZones. */
function selectAll(g: GroupState, topo: ZoneTopology, gate: boolean, previous: ReadonlyMap<string, SliceState>, stats: Stats): void {
  const ordered = orderSlices([...g.slices.values()].map((s) => s.slice));
  const selection = selectForZones(ordered, g.ports, g.family, topo, gate);
  ordered.forEach((slice, si) => {
    const st = g.slices.get(slice.metadata.name) as SliceState;
    const perZone = new Map<string, readonly number[]>();
    for (const [zone, perSlice] of selection) perZone.set(zone, perSlice[si] ?? []);
    setViews(g, st, perZone, previous.get(slice.metadata.name));
  });
  stats.recomputedSlices += ordered.length;
  stats.fullSelections++;
}

function newGroup(namespace: string, service: string, family: IPFamily, svc: Service | undefined): GroupState {
  const ports = svc === undefined ? [] : proxiedServicePorts(svc, family);
  const kind: GroupKind = svc === undefined ? 'unknown' : ports.length === 0 ? 'unprogrammed' : 'filtered';
  return { namespace, service, family, svc, kind, ports, slices: new Map(), totals: ports.map(() => new PortTotals()), holders: new Map(), shared: 0, rules: null };
}

/** A group from scratch; entries of `previous` slice states are reused where they come out the same. */
function buildGroup(g: GroupState, slices: readonly EndpointSlice[], topo: ZoneTopology, gate: boolean, previous: ReadonlyMap<string, SliceState>, stats: Stats): GroupState {
  for (const slice of slices) {
    const facts = g.kind === 'filtered' ? sliceFacts(slice, g.ports, g.family, topo) : null;
    g.slices.set(slice.metadata.name, { slice, facts, views: new Map() });
    if (facts) hold(g, facts, 1);
  }
  if (g.kind === 'filtered') {
    selectAll(g, topo, gate, previous, stats);
    g.rules = g.shared === 0 ? rulesOf(g, topo, gate) : null;
  } else {
    const perZone = unfilteredZones(g, topo);
    for (const st of g.slices.values()) setViews(g, st, perZone, previous.get(st.slice.metadata.name));
    stats.recomputedSlices += slices.length;
  }
  return g;
}

/** Applies the slice changes to `g` in place, re-selecting as little as the rules allow. */
function updateGroup(g: GroupState, slices: readonly EndpointSlice[], topo: ZoneTopology, gate: boolean, stats: Stats): GroupState {
  const incoming = new Map(slices.map((s) => [s.metadata.name, s]));
  const changed: EndpointSlice[] = [];
  const previous = new Map<string, SliceState>();
  for (const [name, st] of g.slices) {
    const next = incoming.get(name);
    if (next === st.slice) continue;
    previous.set(name, st);
    g.slices.delete(name);
    if (st.facts) hold(g, st.facts, -1);
  }
  for (const [name, slice] of incoming) {
    if (g.slices.has(name)) continue;
    const facts = g.kind === 'filtered' ? sliceFacts(slice, g.ports, g.family, topo) : null;
    g.slices.set(name, { slice, facts, views: new Map() });
    if (facts) hold(g, facts, 1);
    changed.push(slice);
  }
  if (changed.length === 0 && previous.size === 0) return g;

  if (g.kind !== 'filtered') {
    const perZone = unfilteredZones(g, topo);
    for (const slice of changed) setViews(g, g.slices.get(slice.metadata.name) as SliceState, perZone, previous.get(slice.metadata.name));
    stats.recomputedSlices += changed.length;
    return g;
  }
  if (g.shared > 0) {
    selectAll(g, topo, gate, new Map([...g.slices].map(([n, st]) => [n, previous.get(n) ?? st])), stats);
    g.rules = null;
    return g;
  }
  const rules = rulesOf(g, topo, gate);
  if (sameRules(g.rules, rules)) {
    for (const slice of changed) {
      const st = g.slices.get(slice.metadata.name) as SliceState;
      setViews(g, st, selectSlice(slice, g.ports, g.family, topo, rules), previous.get(slice.metadata.name));
    }
    stats.recomputedSlices += changed.length;
  } else {
    selectAll(g, topo, gate, new Map([...g.slices].map(([n, st]) => [n, previous.get(n) ?? st])), stats);
  }
  g.rules = rules;
  return g;
}

function assemble(topo: ZoneTopology, groups: ReadonlyMap<string, GroupState>): ZoneViews {
  const keyed: ZoneEntry[] = [];
  for (const g of groups.values()) for (const st of g.slices.values()) for (const v of st.views.values()) if (v.entry !== null) keyed.push(v);
  keyed.sort((a, b) => compareStrings(a.key, b.key));
  const zones = [...topo.nodesByZone.keys(), UNZONED_VIEW].sort(compareStrings);
  const byZone = new Map<string, ZoneViewEntry[]>(zones.map((z) => [z, []]));
  const entries = new Map<string, ZoneViewEntry>();
  for (const v of keyed) {
    const e = v.entry as ZoneViewEntry;
    entries.set(v.key, e);
    byZone.get(e.zone)?.push(e);
  }
  return { zones, entries, byZone };
}

/**
 * zoneViews(input), computed from `prev` (the state of an earlier call, or undefined for a
 * fresh start) by redoing only what changed. Slices are told apart by namespace and name and
 * compared by object identity, Services by identity too: pass the same objects for what did
 * not change. `prev` is used up (updated in place, not copied: its indexes are as large as
 * the service); keep the returned state instead.
 */
export function updateZoneViews(prev: ZoneViewsState | undefined, input: ZoneViewsInput): ZoneViewsUpdate {
  const u = updateZoneViewEntries(prev, input);
  return { ...u, views: assemble(u.state.topo, u.state.groups) };
}

/**
 * updateZoneViews without assembling the views: assembling sorts every entry of the service
 * (5000 for 1000 slices in four zones), which a caller that only needs the entries, as the
 * hints service, can skip.
 */
export function updateZoneViewEntries(prev: ZoneViewsState | undefined, input: ZoneViewsInput): ZoneViewEntriesUpdate {
  const gate = input.preferSameNodeGate ?? true;
  const old = prev?.take();
  const topo = old !== undefined && old.nodes === input.nodes ? old.topo : zoneTopologyOf(input.nodes);
  const keep = old !== undefined && old.gate === gate && sameZoneTopology(old.topo, topo);
  const stats: Stats = { recomputedSlices: 0, fullSelections: 0 };

  // As zoneViews: what kube-proxy never sees (D.2.10) takes no part.
  const services = new Map<string, Service>();
  const away = new Set<string>();
  for (const s of input.services) {
    const key = `${s.metadata.namespace ?? 'default'}/${s.metadata.name}`;
    if (proxyIgnoresService(s) === null) services.set(key, s);
    else away.add(key);
  }
  const incoming = new Map<string, { namespace: string; service: string; family: IPFamily; slices: EndpointSlice[]; names: Set<string> }>();
  for (const slice of input.slices) {
    if (proxyIgnoresSlice(slice) !== null || away.has(`${slice.metadata.namespace ?? 'default'}/${sliceServiceName(slice) ?? ''}`)) continue;
    const service = sliceServiceName(slice);
    const family = slice.addressType;
    if (service === null || (family !== 'IPv4' && family !== 'IPv6')) continue;
    const namespace = slice.metadata.namespace ?? 'default';
    const key = `${namespace}/${service}/${family}`;
    let g = incoming.get(key);
    if (!g) incoming.set(key, (g = { namespace, service, family, slices: [], names: new Set() }));
    // Names are unique per namespace; of a repeated name only the last slice is kept.
    if (g.names.has(slice.metadata.name)) g.slices = g.slices.filter((s) => s.metadata.name !== slice.metadata.name);
    g.names.add(slice.metadata.name);
    g.slices.push(slice);
  }

  const groups = new Map<string, GroupState>();
  for (const [key, inc] of incoming) {
    const svc = services.get(`${inc.namespace}/${inc.service}`);
    const before = old?.groups.get(key);
    if (keep && before !== undefined && before.svc === svc) {
      groups.set(key, updateGroup(before, inc.slices, topo, gate, stats));
    } else {
      const group = newGroup(inc.namespace, inc.service, inc.family, svc);
      groups.set(key, buildGroup(group, inc.slices, topo, gate, before?.slices ?? new Map(), stats));
    }
  }
  return { entries: entriesOf(groups), state: new ZoneViewsState(input.nodes, topo, gate, groups), ...stats };
}

function entriesOf(groups: ReadonlyMap<string, GroupState>): ZoneViewEntry[] {
  const out: ZoneViewEntry[] = [];
  for (const g of groups.values()) for (const st of g.slices.values()) for (const v of st.views.values()) if (v.entry !== null) out.push(v.entry);
  return out;
}
