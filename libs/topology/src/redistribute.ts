// C.3.5 and C.3.6: move whole endpoints from zones above their target to zones below it.

import type { Allocations } from './allocation.ts';
import type { SliceDraft } from './slice-draft.ts';
import { isReady, zoneHint, zoneOf } from './slice-draft.ts';

export interface ZoneTransfers {
  /** Zone -> whole endpoints it gives away. */
  readonly giving: Map<string, number>;
  /** Zone -> whole endpoints it receives. */
  readonly receiving: Map<string, number>;
}

/** The zone with the largest strictly positive value; ties go to the first in name order. */
function most(values: ReadonlyMap<string, number>): [string, number] | undefined {
  let best: [string, number] | undefined;
  for (const [zone, value] of values) if (value > (best?.[1] ?? 0)) best = [zone, value];
  return best;
}

/**
 * C.3.5 (upstream `getGivingAndReceivingZones`): zones hinted above their target give
 * (excess = count - target), zones below receive (deficit = target - count). One endpoint at a
 * time moves from the largest excess to the largest deficit until either side is empty, both
 * are below 1, or either is below 0.5 - so a zone keeps its own endpoints rather than giving
 * one more for a marginally better balance. Zones are visited in name order (upstream iterates
 * a Go map), which makes ties deterministic. Empty inputs give empty maps.
 */
export function givingAndReceivingZones(allocations: Allocations, hintedByZone: ReadonlyMap<string, number>): ZoneTransfers {
  const excess = new Map<string, number>();
  const deficit = new Map<string, number>();
  for (const zone of [...allocations.keys()].sort()) {
    const target = allocations.get(zone)?.target ?? 0;
    const hinted = hintedByZone.get(zone) ?? 0;
    if (hinted > target) excess.set(zone, hinted - target);
    else if (hinted < target) deficit.set(zone, target - hinted);
  }

  const giving = new Map<string, number>();
  const receiving = new Map<string, number>();
  for (;;) {
    const give = most(excess);
    const take = most(deficit);
    if (give === undefined || take === undefined) break;
    const [from, toGive] = give;
    const [to, toTake] = take;
    if ((toGive < 1 && toTake < 1) || toGive < 0.5 || toTake < 0.5) break;
    giving.set(from, (giving.get(from) ?? 0) + 1);
    excess.set(from, toGive - 1);
    receiving.set(to, (receiving.get(to) ?? 0) + 1);
    deficit.set(to, toTake - 1);
  }
  return { giving, receiving };
}

/** One endpoint re-hinted away from its own zone (for the decision's explanation). */
export interface Redistribution {
  readonly from: string;
  readonly to: string;
}

/**
 * C.3.6 (upstream `redistributeHints`): walks the ready endpoints of `drafts` in order; an
 * endpoint whose own zone still has endpoints to give is re-hinted (one `forZones` entry) to
 * the first receiving zone in name order that still needs one. Consumes `transfers`. Stops
 * as soon as either side is exhausted. Returns the moves in walk order; no drafts, no moves.
 */
export function redistributeHints(drafts: readonly SliceDraft[], transfers: ZoneTransfers): Redistribution[] {
  const { giving, receiving } = transfers;
  const receivingOrder = [...receiving.keys()].sort();
  const moves: Redistribution[] = [];
  for (const draft of drafts) {
    const endpoints = draft.endpoints;
    for (let i = 0; i < endpoints.length; i++) {
      const endpoint = endpoints[i];
      if (endpoint === undefined || !isReady(endpoint)) continue;
      if (giving.size === 0 || receiving.size === 0) return moves;
      const from = zoneOf(endpoint);
      if (from === undefined) continue; // refused earlier (C.3.4); kept for safety
      const toGive = giving.get(from) ?? 0;
      if (toGive <= 0) continue;
      const to = receivingOrder.find((zone) => (receiving.get(zone) ?? 0) > 0);
      if (to === undefined) return moves;
      draft.setHints(i, zoneHint(to));
      decrement(giving, from);
      decrement(receiving, to);
      moves.push({ from, to });
    }
  }
  return moves;
}

function decrement(counts: Map<string, number>, zone: string): void {
  const left = (counts.get(zone) ?? 0) - 1;
  if (left <= 0) counts.delete(zone);
  else counts.set(zone, left);
}
