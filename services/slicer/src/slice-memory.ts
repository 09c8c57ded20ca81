// The slice table's write rules (applySliceChanges in @slicemesh/db) on an in-memory map, for
// the replay check and the unit-test store: same uids, same generations, same ordering.

import type { EndpointSlice } from '@slicemesh/model';
import type { AppliedSliceChanges, SliceChanges } from '@slicemesh/db';
import { deterministicSliceUid } from '@slicemesh/db';

/** Key of a slice in the map: `<namespace>/<name>`. */
export function sliceMapKey(s: EndpointSlice): string {
  return `${s.metadata.namespace ?? ''}/${s.metadata.name}`;
}

const byKey = (a: EndpointSlice, b: EndpointSlice): number => {
  const x = sliceMapKey(a);
  const y = sliceMapKey(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Applies `changes` to `slices` (mutated; it is the caller's state): deletes first, then every
 * create and update gets generation stored + 1 (1 when the name is new) and, when it has none,
 * the deterministic uid. Returns what was written, each list sorted by namespace/name; deletes
 * of absent names are not reported.
 */
export function applySliceChangesInMemory(slices: Map<string, EndpointSlice>, changes: SliceChanges): AppliedSliceChanges {
  const deleted: EndpointSlice[] = [];
  for (const s of changes.delete) {
    const stored = slices.get(sliceMapKey(s));
    if (stored !== undefined) {
      slices.delete(sliceMapKey(s));
      deleted.push(stored);
    }
  }
  const write = (s: EndpointSlice): EndpointSlice => {
    const key = sliceMapKey(s);
    const generation = (slices.get(key)?.metadata.generation ?? 0) + 1;
    const namespace = s.metadata.namespace ?? '';
    const body: EndpointSlice = {
      ...s,
      metadata: { ...s.metadata, uid: s.metadata.uid || deterministicSliceUid(changes.cluster, namespace, s.metadata.name), generation },
    };
    slices.set(key, body);
    return body;
  };
  const created = changes.create.map(write);
  const updated = changes.update.map(write);
  return { created: created.sort(byKey), updated: updated.sort(byKey), deleted: deleted.sort(byKey) };
}
