// C.5: hints for spec.trafficDistribution (upstream `trafficdist`): every ready endpoint is
// hinted for where it runs. No balancing, no events, no cache.

import type { Endpoint, EndpointHints, EndpointSlice } from '@slicemesh/model';
import { plural } from './explain-format.ts';
import type { HintsWork } from './hints-work.ts';
import { moveUnchanged, writableDrafts } from './hints-work.ts';
import { isReady, nodeOf, zoneOf } from './slice-draft.ts';

export type TrafficDistributionMode = 'PreferClose' | 'PreferSameZone' | 'PreferSameNode';

/**
 * The hints a ready endpoint should carry: `forZones: [own zone]` when the zone is known, plus
 * `forNodes: [own node]` for PreferSameNode when the node is known; undefined when neither.
 */
export function wantedHints(endpoint: Endpoint, sameNode: boolean): EndpointHints | undefined {
  const zone = zoneOf(endpoint);
  const node = sameNode ? nodeOf(endpoint) : undefined;
  if (zone === undefined && node === undefined) return undefined;
  return {
    ...(zone !== undefined ? { forZones: [{ name: zone }] } : {}),
    ...(node !== undefined ? { forNodes: [{ name: node }] } : {}),
  };
}

function oneName(list: readonly { readonly name: string }[] | undefined, want: string | undefined): boolean {
  if (want === undefined) return list == null || list.length === 0;
  return list != null && list.length === 1 && list[0]?.name === want;
}

/**
 * C.5.5: whether an unchanged slice must be rewritten: some ready endpoint lacks the wanted
 * zone/node hint, has a different one, or carries a hint of a kind not wanted. Not-ready
 * endpoints never force a rewrite (C.5.3). An empty slice never does.
 */
export function needsTrafficHintsUpdate(slice: EndpointSlice, sameNode: boolean): boolean {
  return slice.endpoints.some((ep) => {
    if (!isReady(ep)) return false;
    const node = sameNode ? nodeOf(ep) : undefined;
    return !oneName(ep.hints?.forZones, zoneOf(ep)) || !oneName(ep.hints?.forNodes, node);
  });
}

export interface TrafficHintsResult {
  readonly movedSlices: number;
  /** Ready endpoints (in every slice) and how many of them carry the wanted hints afterwards. */
  readonly ready: number;
  /** Ready endpoints that carry at least one hint afterwards. */
  readonly hinted: number;
  readonly readyWithoutZone: number;
  readonly readyWithoutNode: number;
}

/**
 * Applies the trafficDistribution heuristic to `work` in place: unchanged slices needing a fix
 * move to update; ready endpoints of slices to create/update get their wanted hints (or none);
 * not-ready endpoints are left exactly as they are (C.5.3).
 */
export function applyTrafficDistribution(work: HintsWork, mode: TrafficDistributionMode): TrafficHintsResult {
  const sameNode = mode === 'PreferSameNode';
  const moved = moveUnchanged(work, (slice) => needsTrafficHintsUpdate(slice, sameNode));
  let ready = 0;
  let hinted = 0;
  let readyWithoutZone = 0;
  let readyWithoutNode = 0;
  const tally = (ep: Endpoint): void => {
    if (!isReady(ep)) return;
    ready++;
    const zone = zoneOf(ep);
    const node = nodeOf(ep);
    if (zone !== undefined || (sameNode && node !== undefined)) hinted++;
    if (zone === undefined) readyWithoutZone++;
    if (node === undefined) readyWithoutNode++;
  };
  for (const draft of writableDrafts(work)) {
    draft.endpoints.forEach((ep, i) => {
      if (isReady(ep)) draft.setHints(i, wantedHints(ep, sameNode));
      tally(ep);
    });
  }
  for (const slice of work.unchanged) slice.endpoints.forEach(tally);
  return { movedSlices: moved.length, ready, hinted, readyWithoutZone, readyWithoutNode };
}

/** Plain-words summary of a trafficDistribution result (appended to the mode's reason). */
export function trafficHintsNote(mode: TrafficDistributionMode, r: TrafficHintsResult): string {
  if (r.ready === 0) return 'no ready endpoints to hint';
  const where = mode === 'PreferSameNode' ? 'their node and zone' : 'their own zone';
  const parts = [r.hinted === 0 ? `none of the ${plural(r.ready, 'ready endpoint')} knows ${where}, so none is hinted` : `${plural(r.hinted, 'ready endpoint')} hinted for ${where}`];
  if (r.readyWithoutZone > 0) {
    parts.push(
      `no zone hint on ${plural(r.readyWithoutZone, 'ready endpoint')} without a zone, so kube-proxy ignores zone hints for this service`,
    );
  }
  if (mode === 'PreferSameNode' && r.readyWithoutNode > 0) {
    parts.push(`no node hint on ${plural(r.readyWithoutNode, 'ready endpoint')} without a nodeName, so kube-proxy ignores node hints for this service`);
  }
  if (r.movedSlices > 0) parts.push(`${plural(r.movedSlices, 'unchanged slice')} rewritten to fix missing or stale hints`);
  return parts.join('; ');
}
