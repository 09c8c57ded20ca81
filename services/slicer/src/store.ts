// The slicer's store on Postgres (all SQL lives in @slicemesh/db) and the restore of the
// in-memory projection from its snapshot.

import type { ClusterState } from '@slicemesh/core';
import type { Db, KubeObjectRow, SlicerSnapshot } from '@slicemesh/db';
import { commitIngestBatch, commitSliceWrites, loadSlicerSnapshot } from '@slicemesh/db';
import type { Endpoints, Node, Pod, Service } from '@slicemesh/model';
import type { SlicerStore } from './ports.ts';

/** The store of `cluster`'s slicer on `db`. */
export function slicerStore(db: Db, cluster: string): SlicerStore {
  return {
    loadSnapshot: (consumers, reading) => loadSlicerSnapshot(db, cluster, consumers, reading),
    commitIngest: (batch) => commitIngestBatch(db, batch),
    commitSlices: (writes) => commitSliceWrites(db, writes),
  };
}

/** Loads objects and tombstones into `state` (tombstones too, so older versions stay rejected). */
export function restoreObjects(state: ClusterState, rows: readonly KubeObjectRow[]): void {
  for (const r of rows) {
    state.restore({ kind: r.kind, namespace: r.namespace, name: r.name, resourceVersion: r.resourceVersion, deleted: r.deleted, object: r.body as Service | Pod | Node | Endpoints });
  }
}

/** Loads `snapshot` into `state`: every object and tombstone, and the slices. Returns its offsets. */
export function restoreProjection(state: ClusterState, snapshot: SlicerSnapshot): { readonly offsets: ReadonlyMap<string, number> } {
  restoreObjects(state, snapshot.objects);
  for (const s of snapshot.slices) state.putSlice(s);
  return { offsets: snapshot.offsets };
}
