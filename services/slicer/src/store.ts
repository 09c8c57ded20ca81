// The slicer's store on Postgres (all SQL lives in @slicemesh/db) and the restore of the
// in-memory projection from its snapshot.

import type { ClusterState } from '@slicemesh/core';
import type { Db, SlicerSnapshot } from '@slicemesh/db';
import { commitIngestBatch, commitSliceWrites, loadSlicerSnapshot } from '@slicemesh/db';
import type { Endpoints, Node, Pod, Service } from '@slicemesh/model';
import type { SlicerStore } from './ports.ts';

/** The store of `cluster`'s slicer on `db`. */
export function slicerStore(db: Db, cluster: string): SlicerStore {
  return {
    loadSnapshot: (consumers) => loadSlicerSnapshot(db, cluster, consumers),
    commitIngest: (batch) => commitIngestBatch(db, batch),
    commitSlices: (writes) => commitSliceWrites(db, writes),
  };
}

/** Objects restored between two turns of the event loop. */
const RESTORE_STEP = 5000;

/**
 * Loads `snapshot` into `state`: every object and tombstone (so older versions stay rejected),
 * and the slices. Returns the snapshot's offsets. Gives the event loop a turn every few thousand
 * objects, so what was started before (the consumers' positioning, health probes) goes on
 * meanwhile.
 */
export async function restoreProjection(state: ClusterState, snapshot: SlicerSnapshot): Promise<{ readonly offsets: ReadonlyMap<string, number> }> {
  let n = 0;
  for (const r of snapshot.objects) {
    state.restore({ kind: r.kind, namespace: r.namespace, name: r.name, resourceVersion: r.resourceVersion, deleted: r.deleted, object: r.body as Service | Pod | Node | Endpoints });
    if (++n % RESTORE_STEP === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  for (const s of snapshot.slices) state.putSlice(s);
  return { offsets: snapshot.offsets };
}
