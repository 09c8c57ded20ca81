// The mutable working copy of one (service, address type) plan while hints are computed.
// Only our own drafts are mutated; the plan's slices are never touched.

import type { EndpointSlice } from '@slicemesh/model';
import { SliceDraft, sliceHasHints } from './slice-draft.ts';

export interface HintsWork {
  readonly create: SliceDraft[];
  /** Slices to update, followed by unchanged slices moved here (origin `unchanged`). */
  readonly update: SliceDraft[];
  unchanged: EndpointSlice[];
}

export function newHintsWork(create: readonly EndpointSlice[], update: readonly EndpointSlice[], unchanged: readonly EndpointSlice[]): HintsWork {
  return {
    create: create.map((s) => new SliceDraft(s, 'create')),
    update: update.map((s) => new SliceDraft(s, 'update')),
    unchanged: [...unchanged],
  };
}

/** Create drafts then update drafts: the slices whose hints are (re)computed. */
export function writableDrafts(work: HintsWork): SliceDraft[] {
  return [...work.create, ...work.update];
}

/**
 * Moves the unchanged slices for which `mustMove` is true to `update` (in their order, after
 * the existing updates) and returns the new drafts.
 */
export function moveUnchanged(work: HintsWork, mustMove: (slice: EndpointSlice) => boolean): SliceDraft[] {
  const moved: SliceDraft[] = [];
  const kept: EndpointSlice[] = [];
  for (const slice of work.unchanged) {
    if (mustMove(slice)) moved.push(new SliceDraft(slice, 'unchanged'));
    else kept.push(slice);
  }
  work.unchanged = kept;
  work.update.push(...moved);
  return moved;
}

export interface StripResult {
  /** Endpoints that had hints and lost them. */
  readonly clearedEndpoints: number;
  /** Unchanged slices rewritten only to drop their hints. */
  readonly movedSlices: number;
}

/**
 * Upstream `RemoveHintsFromSlices` (C.2.3, C.3.1, C.5.6): clears all hints on slices to create
 * and update; unchanged slices carrying any hint are moved to update without them; unchanged
 * slices without hints stay unchanged.
 */
export function stripAllHints(work: HintsWork): StripResult {
  let clearedEndpoints = 0;
  for (const draft of writableDrafts(work)) clearedEndpoints += draft.clearAll();
  const moved = moveUnchanged(work, sliceHasHints);
  for (const draft of moved) clearedEndpoints += draft.clearAll();
  return { clearedEndpoints, movedSlices: moved.length };
}
