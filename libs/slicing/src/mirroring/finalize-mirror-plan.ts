// The last step of a mirroring reconcile: recycling (B.3.4), skipping creates while the
// Endpoints is being deleted (B.3.5), and deterministic names for what is still created.

import type { Endpoints, EndpointSlice, SlicePlan } from '@slicemesh/model';
import { sliceName } from '../slice-name.ts';

/** A slice to create before naming: `slice.metadata.name` is empty, `origin` seeds the name. */
export interface PendingCreate {
  readonly origin: string;
  readonly slice: EndpointSlice;
}

export interface DraftMirrorPlan {
  readonly create: readonly PendingCreate[];
  readonly update: readonly EndpointSlice[];
  readonly delete: readonly EndpointSlice[];
  readonly unchanged: readonly EndpointSlice[];
}

function renamed(slice: EndpointSlice, name: string, keepGenerateName: boolean): EndpointSlice {
  const { generateName, ...meta } = slice.metadata;
  return { ...slice, metadata: { ...meta, name, ...(keepGenerateName && generateName !== undefined ? { generateName } : {}) } };
}

/**
 * Turns a draft into the final plan. Within each address type the i-th create takes over the
 * name of the i-th delete (one update instead of create + delete). Remaining creates are dropped
 * when the Endpoints has a deletionTimestamp, otherwise named with sliceName (owner uid, or
 * `<ns>/<name>` when the Endpoints has none) avoiding every name in `taken` and every name given
 * out here. An empty draft yields an empty plan.
 */
export function finalizeMirrorPlan(endpoints: Endpoints, draft: DraftMirrorPlan, taken: ReadonlySet<string>): SlicePlan {
  const creates = [...draft.create];
  const deletes = [...draft.delete];
  const updates = [...draft.update];

  const types = [...new Set(creates.map((c) => c.slice.addressType))];
  for (const type of types) {
    const c = creates.filter((x) => x.slice.addressType === type);
    const d = deletes.filter((x) => x.addressType === type);
    for (let i = 0; i < c.length && i < d.length; i++) {
      const create = c[i];
      const doomed = d[i];
      if (!create || !doomed) break;
      creates.splice(creates.indexOf(create), 1);
      deletes.splice(deletes.indexOf(doomed), 1);
      updates.push(renamed(create.slice, doomed.metadata.name, false));
    }
  }

  const named: EndpointSlice[] = [];
  if (endpoints.metadata.deletionTimestamp === undefined) {
    const used = new Set(taken);
    const { name, namespace, uid } = endpoints.metadata;
    const ownerUid = uid ? uid : `${namespace ?? ''}/${name}`;
    for (const c of creates) {
      const n = sliceName(name, ownerUid, c.origin, used);
      used.add(n);
      named.push(renamed(c.slice, n, true));
    }
  }
  return { create: named, update: updates, delete: deletes, unchanged: draft.unchanged };
}
