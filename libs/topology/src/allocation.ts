// C.3.1-C.3.3: how many endpoints each zone should be hinted, and whether an existing slice's
// hints still fit that allocation.

import type { EndpointSlice } from '@slicemesh/model';
import {
  MSG_INSUFFICIENT_ENDPOINTS,
  MSG_INSUFFICIENT_NODE_INFO,
  MSG_MIN_EXCEEDS_THRESHOLD,
  MSG_NODES_READY_IN_ONE_ZONE,
} from './events.ts';
import type { ZoneRatios } from './cpu-distribution.ts';
import { decimal, plural } from './explain-format.ts';
import { isReady } from './slice-draft.ts';

/** No zone should receive more than 20% above its CPU-proportional share of traffic. */
export const OVERLOAD_THRESHOLD = 0.2;

/** Upstream multiplies by 1/(1+threshold) rather than dividing; same form, same float results. */
const MIN_FACTOR = 1 / (1 + OVERLOAD_THRESHOLD);

/** Endpoints one zone should be hinted: at least `minimum`, at most `maximum`, ideally `target`. */
export interface ZoneAllocation {
  readonly minimum: number;
  readonly maximum: number;
  /** max(ratio x N, minimum): fractional, the balance point redistribution aims at. */
  readonly target: number;
}

/** Zone -> allocation, iterated in zone-name order. */
export type Allocations = ReadonlyMap<string, ZoneAllocation>;

export type AllocationOutcome =
  | { readonly ok: true; readonly allocations: Allocations }
  /** `message` is upstream's event text (without address type); `reason` explains in plain words. */
  | { readonly ok: false; readonly message: string; readonly reason: string };

/**
 * Computes per-zone allocations for `readyEndpoints` ready endpoints (C.3.1, C.3.2), refusing
 * with upstream's message when ratios are missing, cover fewer than two zones, exceed the
 * endpoint count, or when the per-zone minimums cannot all be met.
 * `ratios === undefined` means the cache has never been given nodes (upstream then reports
 * "Nodes only ready in one zone" because its ratio map starts out empty).
 */
export function computeAllocations(
  ratios: ZoneRatios | null | undefined,
  readyEndpoints: number,
  nodeReason: string,
): AllocationOutcome {
  if (ratios === null) {
    return { ok: false, message: MSG_INSUFFICIENT_NODE_INFO, reason: `hints are off because the node information is insufficient: ${nodeReason}` };
  }
  const zones = ratios === undefined ? [] : Object.keys(ratios).sort();
  if (ratios === undefined || zones.length < 2) {
    return {
      ok: false,
      message: MSG_NODES_READY_IN_ONE_ZONE,
      reason: ratios === undefined ? 'hints are off because no node information has reached the topology cache yet' : `hints are off: ${nodeReason}`,
    };
  }
  const n = readyEndpoints;
  const z = zones.length;
  if (z > n) {
    return {
      ok: false,
      message: `${MSG_INSUFFICIENT_ENDPOINTS} (${n} endpoints, ${z} zones)`,
      reason: `hints are off: ${plural(n, 'ready endpoint')} cannot cover ${z} zones (every zone needs at least one)`,
    };
  }

  const minimums = new Map<string, { minimum: number; desired: number }>();
  let minTotal = 0;
  for (const zone of zones) {
    const desired = (ratios[zone] ?? 0) * n;
    const minimum = Math.ceil(desired * MIN_FACTOR);
    minimums.set(zone, { minimum, desired });
    minTotal += minimum;
  }
  if (minTotal > n) {
    const detail = [...minimums].map(([zone, a]) => `${zone} ${a.minimum}`).join(', ');
    return {
      ok: false,
      message: `${MSG_MIN_EXCEEDS_THRESHOLD} (${n} endpoints, ${z} zones)`,
      reason:
        `hints are off: keeping every zone within ${OVERLOAD_THRESHOLD * 100}% of its CPU share needs at least ` +
        `${detail} endpoints (${minTotal} in all) but only ${plural(n, 'ready endpoint')} exist`,
    };
  }

  const allocations = new Map<string, ZoneAllocation>();
  for (const [zone, { minimum, desired }] of minimums) {
    allocations.set(zone, { minimum, maximum: minimum + n - minTotal, target: Math.max(desired, minimum) });
  }
  return { ok: true, allocations };
}

/**
 * C.3.3 (upstream `getHintsByZone`): the per-zone hint counts an unchanged slice contributes,
 * or `null` when the slice must be rewritten because a ready endpoint has no zone hint, hints a
 * zone without allocation, or adding its counts to `alreadyAllocated` exceeds a zone's maximum.
 * Not-ready endpoints are ignored. An empty slice contributes an empty map.
 */
export function sliceHintCounts(
  slice: EndpointSlice,
  alreadyAllocated: ReadonlyMap<string, number>,
  allocations: Allocations,
): Map<string, number> | null {
  const counts = new Map<string, number>();
  for (const endpoint of slice.endpoints) {
    if (!isReady(endpoint)) continue;
    const forZones = endpoint.hints?.forZones;
    if (forZones == null || forZones.length === 0) return null;
    for (const { name } of forZones) {
      if (!allocations.has(name)) return null;
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
  }
  for (const [zone, count] of counts) {
    const allocation = allocations.get(zone);
    if (allocation === undefined || count + (alreadyAllocated.get(zone) ?? 0) > allocation.maximum) return null;
  }
  return counts;
}

/**
 * C.4 (upstream `serviceOverloaded`): why a service's cached hinted counts now overload some
 * zone under `ratios`, or `null` when they do not. Counts with no entries are never overloaded;
 * with no ratios at all every hinted service is.
 */
export function overloadReason(counts: ReadonlyMap<string, number>, ratios: ZoneRatios | null | undefined): string | null {
  if (counts.size === 0) return null;
  const zones = ratios == null ? [] : Object.keys(ratios).sort();
  if (ratios == null || zones.length === 0) return 'node information is no longer sufficient for hints';
  let total = 0;
  for (const c of counts.values()) total += c;
  for (const zone of zones) {
    const hinted = counts.get(zone);
    if (hinted === undefined) return `zone ${zone} now has CPU but no hinted endpoints`;
    const minimum = Math.ceil(total * (ratios[zone] ?? 0) * MIN_FACTOR);
    if (hinted < minimum) {
      return `zone ${zone} has ${hinted} hinted of ${total} but its CPU share (${decimal((ratios[zone] ?? 0) * 100)}%) needs at least ${minimum}`;
    }
  }
  return null;
}
