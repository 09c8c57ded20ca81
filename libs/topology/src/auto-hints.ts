// C.3: the annotation path (topology-mode: Auto). Hints proportional to each zone's CPU,
// computed against the topology cache, with upstream's safeguards and events.

import type { AddressType, Endpoint, KubeEvent } from '@slicemesh/model';
import type { Allocations } from './allocation.ts';
import { sliceHintCounts } from './allocation.ts';
import { autoEnabledReason } from './auto-reason.ts';
import { MSG_NO_ALLOCATED_HINTS, MSG_NO_ZONE_SPECIFIED, hintsDisabledEvent, hintsEnabledEvent } from './events.ts';
import { nameList, plural } from './explain-format.ts';
import type { HintsWork, StripResult } from './hints-work.ts';
import { moveUnchanged, stripAllHints, writableDrafts } from './hints-work.ts';
import type { Redistribution } from './redistribute.ts';
import { givingAndReceivingZones, redistributeHints } from './redistribute.ts';
import { isReady, zoneHint, zoneOf } from './slice-draft.ts';
import type { TopologyCache } from './topology-cache.ts';

export interface AutoHintsOutcome {
  readonly enabled: boolean;
  readonly event: KubeEvent | null;
  readonly reason: string;
  readonly allocations?: Readonly<Record<string, { minimum: number; maximum: number; target: number }>>;
}

function countReady(endpoints: readonly Endpoint[]): number {
  let n = 0;
  for (const ep of endpoints) if (isReady(ep)) n++;
  return n;
}

function describeEndpoint(ep: Endpoint): string {
  const ref = ep.targetRef?.name !== undefined ? ` (${ep.targetRef.kind ?? 'Pod'} ${ep.targetRef.name})` : '';
  return `${ep.addresses[0] ?? '<no address>'}${ref}`;
}

function stripNote(strip: StripResult): string {
  if (strip.clearedEndpoints === 0) return '';
  const rewritten = strip.movedSlices > 0 ? `, rewriting ${plural(strip.movedSlices, 'unchanged slice')}` : '';
  return `; removed hints from ${plural(strip.clearedEndpoints, 'endpoint')}${rewritten}`;
}

/**
 * Adds CPU-proportional zone hints to `work` in place (C.3) and updates `cache`:
 * - refusals (C.3.1, C.3.4, C.3.7) strip every hint, forget the cached counts and return a
 *   Warning `TopologyAwareHintsDisabled` with upstream's message;
 * - success caches the hinted counts and returns Normal `TopologyAwareHintsEnabled` only when
 *   the service had no cache-populated hints before.
 * Every hinted endpoint ends with exactly one `forZones` entry (C.3.8); not-ready endpoints in
 * slices being written lose their hints. No ready endpoints: refused as too few endpoints.
 */
export function addAutoHints(work: HintsWork, serviceKey: string, addressType: AddressType, cache: TopologyCache): AutoHintsOutcome {
  const refuse = (message: string, reason: string): AutoHintsOutcome => {
    cache.removeHints(serviceKey, addressType);
    const strip = stripAllHints(work);
    return { enabled: false, event: hintsDisabledEvent(message, addressType), reason: reason + stripNote(strip) };
  };

  let total = 0;
  for (const d of writableDrafts(work)) total += countReady(d.endpoints);
  for (const s of work.unchanged) total += countReady(s.endpoints);

  const outcome = cache.allocate(total);
  if (!outcome.ok) return refuse(outcome.message, outcome.reason);
  const { allocations } = outcome;

  // C.3.3: unchanged slices keep their hints only while they fit the allocation.
  const hinted = new Map<string, number>();
  let keptSlices = 0;
  const moved = moveUnchanged(work, (slice) => {
    const counts = sliceHintCounts(slice, hinted, allocations);
    if (counts === null) return true;
    for (const [zone, c] of counts) hinted.set(zone, (hinted.get(zone) ?? 0) + c);
    keptSlices++;
    return false;
  });

  const drafts = writableDrafts(work);
  const zoneless = drafts.flatMap((d) => d.endpoints.filter((ep) => isReady(ep) && zoneOf(ep) === undefined));
  if (zoneless.length > 0) {
    return refuse(
      MSG_NO_ZONE_SPECIFIED,
      `hints are off: ${plural(zoneless.length, 'ready endpoint')} without a zone (${nameList(zoneless.map(describeEndpoint))}); ` +
        'one endpoint without a zone disables hints for the whole service and address type',
    );
  }

  // C.3.4 step 1: every ready endpoint starts hinted for its own zone.
  for (const draft of drafts) {
    draft.endpoints.forEach((ep, i) => {
      const zone = zoneOf(ep);
      if (!isReady(ep) || zone === undefined) {
        draft.setHints(i, undefined);
        return;
      }
      hinted.set(zone, (hinted.get(zone) ?? 0) + 1);
      draft.setHints(i, zoneHint(zone));
    });
  }

  // C.3.5 and C.3.6: move whole endpoints from zones above target to zones below it.
  const moves = redistributeHints(drafts, givingAndReceivingZones(allocations, hinted));
  for (const { from, to } of moves) {
    hinted.set(from, (hinted.get(from) ?? 0) - 1);
    hinted.set(to, (hinted.get(to) ?? 0) + 1);
  }

  if (hinted.size === 0) {
    return refuse(MSG_NO_ALLOCATED_HINTS, 'hints are off: no endpoint ended up hinted for any zone');
  }

  const wasPopulated = cache.hasPopulatedHints(serviceKey);
  cache.setHints(serviceKey, addressType, hinted);
  return {
    enabled: true,
    event: wasPopulated ? null : hintsEnabledEvent(addressType),
    reason: enabledReason(total, allocations, hinted, moves, keptSlices, moved.length),
    allocations: Object.fromEntries([...allocations].map(([zone, a]) => [zone, { ...a }])),
  };
}

function enabledReason(
  total: number,
  allocations: Allocations,
  hinted: ReadonlyMap<string, number>,
  moves: readonly Redistribution[],
  keptSlices: number,
  movedSlices: number,
): string {
  const byPair = new Map<string, { from: string; to: string; count: number }>();
  for (const { from, to } of moves) {
    const pair = byPair.get(`${from}->${to}`);
    if (pair === undefined) byPair.set(`${from}->${to}`, { from, to, count: 1 });
    else pair.count++;
  }
  return autoEnabledReason({ total, allocations, hinted, moved: [...byPair.values()], movedCount: moves.length, keptSlices, rewrittenSlices: movedSlices });
}
