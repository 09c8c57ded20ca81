// hintService() in time proportional to what changed, not to the size of the service.
//
// The slicer's slices carry no hints, so a plain reconcile has the topology code rewrite all
// of them: every ready endpoint of a 100k-endpoint service gets its own-zone hint (Auto, C.3.4
// step 1) or its wanted hint (trafficDistribution, C.5) again and is read several times
// (~100 ms), though nearly all come out as last time. Here what each slice contributes is kept
// per slice object: its counts, and the slice with those hints set. A reconcile adds up the
// counts, has the topology code allocate (C.3.2) and pick the giving and receiving zones
// (C.3.5), re-hints through it only the slices that balancing reaches in a state it has not
// seen them in (C.3.6), and writes the decision from the same summary (auto-reason.ts restates
// the one sentence the topology code keeps private). Unchanged slices come back as the same
// hinted object, which updateZoneViews and the digest cache key on.
//
// The plain hintService() runs whenever this shortcut is not known to agree: mode None, slices
// of another manager or family, Auto with a refusal ahead (allocation, a ready endpoint without
// zone) or with zone hints already on a ready endpoint (whether such a slice is kept depends on
// the slices before it), trafficDistribution right after Auto (the "disabled" event path).
// hint-reuse.test.ts holds both equal, byte for byte, along random change sequences.

import type { AddressType, EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { deepEqual } from '@slicemesh/proxy-state';
import type { HintsDecision, HintsMode, TrafficDistributionMode, TrafficHintsResult } from '@slicemesh/topology';
import {
  SliceDraft, givingAndReceivingZones, hintsEnabledEvent, hintsMode, isReady, needsTrafficHintsUpdate, redistributeHints, serviceKey, trafficHintsNote, wantedHints,
} from '@slicemesh/topology';
import { autoEnabledReason } from '@slicemesh/topology';
import type { HintServiceInput, HintServiceOutput } from './hint-service.ts';
import { hintService, slicesOfType, unmanagedBecause } from './hint-service.ts';

const HINTED_TYPES: readonly AddressType[] = ['IPv4', 'IPv6'];

/** Which hints a ready endpoint gets before any balancing. */
type StepOne = 'own-zone' | 'zone' | 'zone-and-node';

const known = (v: string | undefined): string | undefined => (v != null && v !== '' ? v : undefined);

interface AutoFacts {
  readonly ready: number;
  /** Zone -> ready endpoints, zones in order of first appearance. */
  readonly readyByZone: ReadonlyMap<string, number>;
  readonly readyWithoutZone: number;
  /** Some ready endpoint already carries a zone hint. */
  readonly zoneHinted: boolean;
}

function autoFacts(slice: EndpointSlice): AutoFacts {
  let ready = 0;
  let readyWithoutZone = 0;
  let zoneHinted = false;
  const readyByZone = new Map<string, number>();
  for (const ep of slice.endpoints) {
    if (!isReady(ep)) continue;
    ready++;
    const zone = known(ep.zone);
    if (zone === undefined) readyWithoutZone++;
    else readyByZone.set(zone, (readyByZone.get(zone) ?? 0) + 1);
    if ((ep.hints?.forZones?.length ?? 0) > 0) zoneHinted = true;
  }
  return { ready, readyByZone, readyWithoutZone, zoneHinted };
}

/** C.5 counts of one slice (TrafficHintsResult without movedSlices). */
function trafficTally(slice: EndpointSlice, sameNode: boolean): Omit<TrafficHintsResult, 'movedSlices'> {
  let ready = 0;
  let hinted = 0;
  let readyWithoutZone = 0;
  let readyWithoutNode = 0;
  for (const ep of slice.endpoints) {
    if (!isReady(ep)) continue;
    ready++;
    const zone = known(ep.zone);
    const node = known(ep.nodeName);
    if (zone !== undefined || (sameNode && node !== undefined)) hinted++;
    if (zone === undefined) readyWithoutZone++;
    if (node === undefined) readyWithoutNode++;
  }
  return { ready, hinted, readyWithoutZone, readyWithoutNode };
}

/**
 * The slice as step one leaves it, or null when step one leaves it alone: no ready endpoint
 * (Auto keeps it), or hints already as wanted (trafficDistribution keeps it).
 */
function stepOne(slice: EndpointSlice, kind: StepOne): EndpointSlice | null {
  const draft = new SliceDraft(slice, 'update');
  if (kind === 'own-zone') {
    if (!slice.endpoints.some(isReady)) return null;
    slice.endpoints.forEach((ep, i) => {
      const zone = known(ep.zone);
      draft.setHints(i, isReady(ep) && zone !== undefined ? { forZones: [{ name: zone }] } : undefined);
    });
  } else {
    const sameNode = kind === 'zone-and-node';
    if (!needsTrafficHintsUpdate(slice, sameNode)) return null;
    // Not-ready endpoints stay exactly as they are (C.5.3).
    slice.endpoints.forEach((ep, i) => {
      if (isReady(ep)) draft.setHints(i, wantedHints(ep, sameNode));
    });
  }
  return draft.result();
}

interface ZoneMoves {
  readonly from: string;
  readonly to: string;
  count: number;
}

function addMoves(into: Map<string, ZoneMoves>, from: string, to: string, count: number): void {
  const key = `${from}->${to}`;
  const known = into.get(key);
  if (known) known.count += count;
  else into.set(key, { from, to, count });
}

interface BalanceStep {
  /** walkState() when the walk reached the slice. */
  readonly state: string;
  readonly result: EndpointSlice;
  /** Endpoints moved, per (from, to) zone pair in order of first move. */
  readonly moved: ReadonlyMap<string, ZoneMoves>;
}

/**
 * What the balancing walk can still do to a slice with `readyByZone`, as a comparable text:
 * per zone of the slice, how many of its endpoints may still move (what is left to give,
 * capped at its ready count), and per receiving zone in name order what is left to receive,
 * capped at that total (moves fill receiving zones in name order). null when nothing moves.
 */
function walkState(walk: { readonly giving: ReadonlyMap<string, number>; readonly receiving: ReadonlyMap<string, number> }, readyByZone: ReadonlyMap<string, number>): string | null {
  let movable = 0;
  let text = '';
  for (const [zone, n] of readyByZone) {
    const m = Math.min(walk.giving.get(zone) ?? 0, n);
    if (m > 0) text += `${zone}=${m},`;
    movable += m;
  }
  if (movable === 0) return null;
  text += ';';
  for (const zone of [...walk.receiving.keys()].sort()) text += `${zone}=${Math.min(walk.receiving.get(zone) ?? 0, movable)},`;
  return text;
}

/** As the balancing walk counts down: a zone at zero leaves the map. */
function takeFrom(m: Map<string, number>, zone: string, count: number): void {
  const left = (m.get(zone) ?? 0) - count;
  if (left <= 0) m.delete(zone);
  else m.set(zone, left);
}

/** Per-slice memory for `hint()`; entries live as long as the slice objects they describe. */
export class HintReuse {
  readonly #auto = new WeakMap<EndpointSlice, AutoFacts>();
  readonly #tally = new WeakMap<EndpointSlice, Map<boolean, Omit<TrafficHintsResult, 'movedSlices'>>>();
  readonly #stepOne = new WeakMap<EndpointSlice, Map<StepOne, EndpointSlice | null>>();
  /** Per step-one slice, what balancing did to it last time and in which walk state. */
  readonly #balanced = new WeakMap<EndpointSlice, BalanceStep>();
  /** Per input slice, what the plain path made of it last time. */
  readonly #plain = new WeakMap<EndpointSlice, EndpointSlice>();

  /** The same result as hintService(input), in content and in its effects on `input.cache`. */
  hint(input: HintServiceInput): HintServiceOutput {
    const { service, cache } = input;
    const { mode, reason: modeReason } = hintsMode(service, { preferSameTrafficDistribution: input.preferSameTrafficDistribution });
    const managedBy = input.managedBy ?? MANAGED_BY_CONTROLLER;
    const ours = input.slices.every((s) => {
      const owner = s.metadata.labels?.[LABEL_MANAGED_BY];
      return (s.addressType === 'IPv4' || s.addressType === 'IPv6') && (owner === undefined || owner === managedBy);
    });
    const key = serviceKey(service);
    const plain =
      mode === 'None' || !ours || (input.assumeSynced !== true && unmanagedBecause(service) !== null) ||
      (mode === 'Auto' ? !this.#autoAgrees(input) : cache.hasPopulatedHints(key));
    if (plain) return this.#plainHints(input);

    const out = new Map<EndpointSlice, EndpointSlice>();
    const decisions: HintsDecision[] = [];
    for (const addressType of HINTED_TYPES) {
      const ofType = slicesOfType(input, key, addressType);
      if (ofType === null) continue;
      const base = { service: key, addressType, mode };
      decisions.push(mode === 'Auto' ? this.#autoHints(input, base, modeReason, ofType, out) : this.#trafficHints(input, base, modeReason, ofType, out));
    }
    return { slices: input.slices.map((s) => out.get(s) ?? s), decisions };
  }

  /** hintService(input), handing back last time's object for a slice whose result did not change. */
  #plainHints(input: HintServiceInput): HintServiceOutput {
    const out = hintService(input);
    const slices = out.slices.map((o, i) => {
      const s = input.slices[i] as EndpointSlice;
      if (o === s) return o;
      const last = this.#plain.get(s);
      if (last !== undefined && deepEqual(last, o)) return last;
      this.#plain.set(s, o);
      return o;
    });
    return { slices, decisions: out.decisions };
  }

  #autoFacts(s: EndpointSlice): AutoFacts {
    let f = this.#auto.get(s);
    if (f === undefined) this.#auto.set(s, (f = autoFacts(s)));
    return f;
  }

  #stepOneOf(s: EndpointSlice, kind: StepOne): EndpointSlice | null {
    let byKind = this.#stepOne.get(s);
    if (byKind === undefined) this.#stepOne.set(s, (byKind = new Map()));
    let r = byKind.get(kind);
    if (r === undefined) byKind.set(kind, (r = stepOne(s, kind)));
    return r;
  }

  /** Auto agrees with the plain path when no refusal is ahead and no ready endpoint carries a zone hint yet. */
  #autoAgrees(input: HintServiceInput): boolean {
    const ready = new Map<string, number>();
    for (const s of input.slices) {
      const f = this.#autoFacts(s);
      if (f.zoneHinted || f.readyWithoutZone > 0) return false;
      ready.set(s.addressType, (ready.get(s.addressType) ?? 0) + f.ready);
    }
    for (const n of ready.values()) if (!input.cache.allocate(n).ok) return false;
    return true;
  }

  /** C.3 for one address type whose every slice is bare of zone hints and zoned. */
  #autoHints(
    input: HintServiceInput,
    base: { service: string; addressType: AddressType; mode: HintsMode },
    modeReason: string,
    slices: readonly EndpointSlice[],
    out: Map<EndpointSlice, EndpointSlice>,
  ): HintsDecision {
    const { cache } = input;
    let total = 0;
    const rewritten: EndpointSlice[] = [];
    const hinted = new Map<string, number>();
    for (const s of slices) {
      const f = this.#autoFacts(s);
      total += f.ready;
      if (f.ready === 0) continue; // kept as it is (C.3.3: nothing to count)
      rewritten.push(s);
      for (const [zone, n] of f.readyByZone) hinted.set(zone, (hinted.get(zone) ?? 0) + n);
    }
    const outcome = cache.allocate(total);
    if (!outcome.ok) throw new Error('hint-reuse: allocation refused after the check said it would not be');
    const { allocations } = outcome;
    const transfers = givingAndReceivingZones(allocations, hinted);

    // Balancing walks the rewritten slices in order, re-hinting endpoints of giving zones until
    // the transfers are used up. What it does to one slice depends only on the slice and on
    // what is left to give and receive when it gets there, as far as the slice can use it
    // (see walkState), so a slice reached in the same state as last time takes last time's
    // result; a slice without an endpoint of a zone still giving is passed over untouched.
    const walk = { giving: new Map(transfers.giving), receiving: new Map(transfers.receiving) };
    const moved = new Map<string, ZoneMoves>();
    for (const s of rewritten) {
      const hintedSlice = this.#stepOneOf(s, 'own-zone') as EndpointSlice;
      out.set(s, hintedSlice);
      const state = walkState(walk, this.#autoFacts(s).readyByZone);
      if (state === null) continue;
      let step = this.#balanced.get(hintedSlice);
      if (step !== undefined && step.state === state) {
        for (const m of step.moved.values()) {
          takeFrom(walk.giving, m.from, m.count);
          takeFrom(walk.receiving, m.to, m.count);
        }
      } else {
        const draft = new SliceDraft(hintedSlice, 'unchanged');
        const stepMoved = new Map<string, ZoneMoves>();
        for (const m of redistributeHints([draft], walk)) addMoves(stepMoved, m.from, m.to, 1);
        const result = draft.result();
        step = { state, result: step !== undefined && deepEqual(step.result, result) ? step.result : result, moved: stepMoved };
        this.#balanced.set(hintedSlice, step);
      }
      for (const m of step.moved.values()) addMoves(moved, m.from, m.to, m.count);
      out.set(s, step.result);
    }
    let movedCount = 0;
    for (const { from, to, count } of moved.values()) {
      hinted.set(from, (hinted.get(from) ?? 0) - count);
      hinted.set(to, (hinted.get(to) ?? 0) + count);
      movedCount += count;
    }

    const wasPopulated = cache.hasPopulatedHints(base.service);
    cache.setHints(base.service, base.addressType, hinted);
    const reason = autoEnabledReason({ total, allocations, hinted, moved: [...moved.values()], movedCount, keptSlices: slices.length - rewritten.length, rewrittenSlices: rewritten.length });
    return {
      ...base,
      enabled: true,
      event: wasPopulated ? null : hintsEnabledEvent(base.addressType),
      reason: `${modeReason}; ${reason}`,
      allocations: Object.fromEntries([...allocations].map(([zone, a]) => [zone, { ...a }])),
    };
  }

  /** C.5 for one address type (the service had no hints from the annotation path). */
  #trafficHints(
    input: HintServiceInput,
    base: { service: string; addressType: AddressType; mode: HintsMode },
    modeReason: string,
    slices: readonly EndpointSlice[],
    out: Map<EndpointSlice, EndpointSlice>,
  ): HintsDecision {
    const mode = base.mode as TrafficDistributionMode;
    const sameNode = mode === 'PreferSameNode';
    const kind: StepOne = sameNode ? 'zone-and-node' : 'zone';
    const result = { movedSlices: 0, ready: 0, hinted: 0, readyWithoutZone: 0, readyWithoutNode: 0 };
    for (const s of slices) {
      let bySameNode = this.#tally.get(s);
      if (bySameNode === undefined) this.#tally.set(s, (bySameNode = new Map()));
      let t = bySameNode.get(sameNode);
      if (t === undefined) bySameNode.set(sameNode, (t = trafficTally(s, sameNode)));
      result.ready += t.ready;
      result.hinted += t.hinted;
      result.readyWithoutZone += t.readyWithoutZone;
      result.readyWithoutNode += t.readyWithoutNode;
      const hinted = this.#stepOneOf(s, kind);
      if (hinted === null) continue;
      result.movedSlices++;
      out.set(s, hinted);
    }
    input.cache.removeHints(base.service, base.addressType);
    return { ...base, enabled: true, event: null, reason: `${modeReason}; ${trafficHintsNote(mode, result)}` }; // C.5: never refused
  }
}
