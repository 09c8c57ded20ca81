// A reconcile's slice plan applied to the projection, with the rules Postgres (and the API
// server) would apply: a created slice starts at generation 1, every rewrite increments it, a
// slice without a uid gets the deterministic one. The slicer applies a batch to memory first,
// writes it in one transaction, and undoes it if that transaction fails.

import type { EndpointSlice, SlicePlan } from '@slicemesh/model';
import { deterministicSliceUid } from '@slicemesh/model';
import type { ClusterState } from './cluster-state.ts';

export interface AppliedSlices {
  /** As stored (uid and generation set), sorted by name. */
  readonly created: readonly EndpointSlice[];
  readonly updated: readonly EndpointSlice[];
  /** The stored bodies that were removed, sorted by name. */
  readonly deleted: readonly EndpointSlice[];
  /** Puts the state back as it was before this call. */
  readonly undo: () => void;
}

const byName = (a: EndpointSlice, b: EndpointSlice): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);

/** Applies `plan`'s create, update and delete lists to `state` (deletes first). */
export function applySlicePlan(state: ClusterState, cluster: string, plan: Pick<SlicePlan, 'create' | 'update' | 'delete'>): AppliedSlices {
  const previous: { namespace: string; name: string; slice: EndpointSlice | undefined }[] = [];
  const deleted: EndpointSlice[] = [];
  for (const s of plan.delete) {
    const namespace = s.metadata.namespace ?? '';
    const gone = state.removeSlice(namespace, s.metadata.name);
    if (gone !== undefined) {
      previous.push({ namespace, name: s.metadata.name, slice: gone });
      deleted.push(gone);
    }
  }
  const write = (s: EndpointSlice): EndpointSlice => {
    const namespace = s.metadata.namespace ?? '';
    const stored = state.slice(namespace, s.metadata.name);
    const body: EndpointSlice = {
      ...s,
      metadata: { ...s.metadata, uid: s.metadata.uid || deterministicSliceUid(cluster, namespace, s.metadata.name), generation: (stored?.metadata.generation ?? 0) + 1 },
    };
    previous.push({ namespace, name: s.metadata.name, slice: stored });
    state.putSlice(body);
    return body;
  };
  const created = plan.create.map(write).sort(byName);
  const updated = plan.update.map(write).sort(byName);
  const undo = (): void => {
    for (let i = previous.length - 1; i >= 0; i--) {
      const p = previous[i];
      if (p === undefined) continue;
      if (p.slice === undefined) state.removeSlice(p.namespace, p.name);
      else state.putSlice(p.slice);
    }
  };
  return { created, updated, deleted: deleted.sort(byName), undo };
}
