// Turning a plan into the writes upstream would issue (A.7.6, A.7.7) and giving new slices
// deterministic names (the log must replay to the same names).

import type { EndpointSlice, Service, SlicePlan } from '@slicemesh/model';
import { portMapKey } from './port-map-key.ts';
import { ownedBy, stampTriggerTime } from './slice-metadata.ts';
import { sliceName } from './slice-name.ts';

export interface FinalizeContext {
  readonly service: Service;
  /** Slices whose names new slices must avoid (at least the Service's own). */
  readonly existingSlices: readonly EndpointSlice[];
  /**
   * When given, (re)applies the trigger-time annotation to every create and update, e.g. to
   * slices the hints logic moved to `update` (A.7.8); null removes it. Undefined leaves the
   * annotations as planned.
   */
  readonly triggerTime?: string | null;
}

// The new content takes over the doomed slice's identity; everything else is the new slice's,
// as an update replaces the whole object.
function recycle(created: EndpointSlice, doomed: EndpointSlice): EndpointSlice {
  const { generateName: _g, ...meta } = created.metadata;
  const d = doomed.metadata;
  return {
    ...created,
    metadata: {
      ...meta,
      name: d.name,
      ...(d.uid !== undefined ? { uid: d.uid } : {}),
      ...(d.resourceVersion !== undefined ? { resourceVersion: d.resourceVersion } : {}),
      ...(d.generation !== undefined ? { generation: d.generation } : {}),
      ...(d.creationTimestamp !== undefined ? { creationTimestamp: d.creationTimestamp } : {}),
    },
  };
}

/**
 * A.7.6 + A.7.7. Per address type, while there are creates and deletes: the last create takes
 * over the next to-delete slice if the Service owns it (one update instead of create+delete),
 * otherwise that delete is skipped for good. Foreign-owned and other-address-type slices are
 * therefore never recycled. Remaining creates are named `sliceName(service, uid, origin, taken)`
 * with origin `<addressType>/<portMapKey>` for a group's first new slice and `<origin>/<n>` for
 * its n-th; they are dropped entirely while the Service has a deletionTimestamp. An empty plan
 * stays empty; `unchanged` passes through.
 */
export function finalizePlan(plan: SlicePlan, ctx: FinalizeContext): SlicePlan {
  const { service } = ctx;
  const update: EndpointSlice[] = [...plan.update];
  const recycledCreates = new Set<EndpointSlice>();
  const recycledDeletes = new Set<EndpointSlice>();

  const types = [...new Set(plan.create.map((s) => s.addressType))];
  for (const t of types) {
    const creates = plan.create.filter((s) => s.addressType === t);
    const deletes = plan.delete.filter((s) => s.addressType === t);
    for (let i = 0; i < deletes.length && creates.length > 0; i++) {
      const doomed = deletes[i] as EndpointSlice;
      if (!ownedBy(doomed, service)) continue;
      const created = creates.pop() as EndpointSlice;
      recycledCreates.add(created);
      recycledDeletes.add(doomed);
      update.push(recycle(created, doomed));
    }
  }

  let create: EndpointSlice[] = [];
  if (service.metadata.deletionTimestamp == null) {
    const taken = new Set<string>();
    for (const s of ctx.existingSlices) taken.add(s.metadata.name);
    for (const list of [plan.update, plan.delete, plan.unchanged]) for (const s of list) taken.add(s.metadata.name);
    for (const s of plan.create) if (s.metadata.name !== '') taken.add(s.metadata.name);
    const seen = new Map<string, number>();
    for (const s of plan.create) {
      if (recycledCreates.has(s)) continue;
      if (s.metadata.name !== '') {
        create.push(s);
        continue;
      }
      // The n-th new slice of a group (n >= 1) hashes `<origin>/<n>`: with one shared origin,
      // sliceName would re-hash every earlier name, O(k^2) for k new slices.
      const origin = `${s.addressType}/${portMapKey(s.ports)}`;
      const n = seen.get(origin) ?? 0;
      seen.set(origin, n + 1);
      const name = sliceName(service.metadata.name, service.metadata.uid ?? '', n === 0 ? origin : `${origin}/${n}`, taken);
      taken.add(name);
      create.push({ ...s, metadata: { ...s.metadata, name } });
    }
  }

  let finalUpdate = update;
  if (ctx.triggerTime !== undefined) {
    create = create.map((s) => stampTriggerTime(s, ctx.triggerTime));
    finalUpdate = update.map((s) => stampTriggerTime(s, ctx.triggerTime));
  }
  return {
    create,
    update: finalUpdate,
    delete: plan.delete.filter((s) => !recycledDeletes.has(s)),
    unchanged: plan.unchanged,
  };
}
