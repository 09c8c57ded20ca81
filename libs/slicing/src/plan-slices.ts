// The EndpointSlice reconciler for one Service as a pure function (section A): pods, nodes and
// existing slices in, a plan of creates/updates/deletes out. Recycling and naming happen later
// in finalizePlan (finalize.ts).

import type { AddressType, Endpoint, EndpointSlice, Node, Pod, Service, SlicePlan } from '@slicemesh/model';
import {
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  InvalidArgumentError,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_CONTROLLER,
  MAX_MAX_ENDPOINTS_PER_SLICE,
} from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import { serviceAddressTypes } from './address-types.ts';
import type { DesiredMode } from './desired-endpoints.ts';
import { resolveDesired } from './desired-endpoints.ts';
import type { ListChanges } from './list-changes.ts';
import type { DesiredState, Group } from './desired-reference.ts';
import { sliceKeys } from './endpoint-cache.ts';
import { isSamePlaceholder, placeholderSlice } from './placeholder.ts';
import { placeInto } from './placement.ts';
import { StaleSlicesError } from './desired-set.ts';
import { replacementSyncs } from './desired-incremental.ts';
import { isSelectorless, namespaceOf } from './selector.ts';
import { labelsDrifted, newSlice, ownedBy, rewriteSlice, sliceLabels, stampTriggerTime } from './slice-metadata.ts';

/**
 * Inputs are treated as immutable values: a changed pod, node, Service or slice must be a new
 * object (as informer and event-sourced objects are). planSlices memoises what it derives from
 * each object, so modifying one in place would not be noticed.
 */
export interface PlanSlicesInput {
  readonly service: Service;
  /** Pods already selected for the Service (selectPods). */
  readonly pods: readonly Pod[];
  /** How `pods` (a list its owner changes in place) changed since earlier plans; optional. */
  readonly podChanges?: ListChanges;
  /** Nodes by name. */
  readonly nodes: ReadonlyMap<string, Node>;
  /**
   * The Service's slices (service-name label + managed-by, no deletionTimestamp). Slices of
   * another namespace, Service or manager, or with a deletionTimestamp, are ignored.
   */
  readonly existingSlices: readonly EndpointSlice[];
  /** Defaults to 100; must be an integer in 1..1000 (A.8.1). */
  readonly maxEndpointsPerSlice?: number;
  /** Defaults to `endpointslice-controller.k8s.io`. */
  readonly managedBy?: string;
  /** RFC3339Nano; null/undefined removes the trigger-time annotation from written slices (A.7.8). */
  readonly triggerTime?: string | null;
}

export interface PlanSlicesResult {
  /** Before finalizePlan: creates have `generateName` and an empty name. */
  readonly plan: SlicePlan;
  /** Non-fatal problems (e.g. a pod on an unknown node, A.3.4); the caller should requeue. */
  readonly errors: readonly string[];
  /** True for ExternalName and selectorless Services (A.1.2); the plan is then empty. */
  readonly skipped: boolean;
  /** Address types whose slices are all deleted as unsupported (A.2.3): drop their hint state. */
  readonly droppedAddressTypes: readonly AddressType[];
}

export const EMPTY_PLAN: SlicePlan = Object.freeze({ create: [], update: [], delete: [], unchanged: [] });

/** Resolves the option to a number, throwing InvalidArgumentError outside 1..1000 (A.8.1). */
export function checkMaxEndpointsPerSlice(max: number | undefined): number {
  const n = max ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  if (!Number.isInteger(n) || n < 1 || n > MAX_MAX_ENDPOINTS_PER_SLICE) {
    throw new InvalidArgumentError('maxEndpointsPerSlice', `must be an integer between 1 and ${MAX_MAX_ENDPOINTS_PER_SLICE}, got ${String(n)}`);
  }
  return n;
}

function byName(a: EndpointSlice, b: EndpointSlice): number {
  const x = a.metadata.name;
  const y = b.metadata.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

// push(...xs) overflows the argument limit for very large lists (max=1 and 100k pods).
function append<T>(dst: T[], src: readonly T[]): void {
  for (const x of src) dst.push(x);
}

function sortedKeys<V>(m: ReadonlyMap<string, V>): string[] {
  return [...m.keys()].sort();
}

interface Ctx {
  readonly service: Service;
  readonly max: number;
  readonly managedBy: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly desired: DesiredState;
  /** The endpoint arrays of every slice placed (see LastSync.outputs). */
  readonly outputs: Set<readonly Endpoint[]>;
}

/** A.7 for one address type. Deletes: foreign-owned, then per group, then groups no longer desired. */
function planAddressType(ctx: Ctx, addressType: SliceAddressType, existing: readonly EndpointSlice[]): SlicePlan {
  const { service } = ctx;
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  const del: EndpointSlice[] = [];
  const unchanged: EndpointSlice[] = [];

  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    if (!ownedBy(slice, service)) {
      del.push(slice); // A.7.5: a previous Service of the same name
      continue;
    }
    const key = sliceKeys(slice).portKey;
    const list = existingByKey.get(key);
    if (list) list.push(slice);
    else existingByKey.set(key, [slice]);
  }

  const { groups } = ctx.desired;
  const drifted = (s: EndpointSlice): boolean => labelsDrifted(s, service);
  for (const key of sortedKeys(groups)) {
    const group = groups.get(key) as Group;
    const placed = placeInto(existingByKey.get(key) ?? [], group.desired[addressType], ctx.max, drifted);
    for (const endpoints of placed.exact) ctx.outputs.add(endpoints);
    for (const endpoints of placed.create) {
      create.push(newSlice({ service, addressType, ports: group.ports, endpoints, managedBy: ctx.managedBy, labels: { ...ctx.labels } }));
    }
    for (const u of placed.update) update.push(rewriteSlice(u.slice, u.endpoints, { ...ctx.labels }));
    append(del, placed.delete);
    append(unchanged, placed.unchanged);
  }
  for (const key of sortedKeys(existingByKey)) {
    if (!groups.has(key)) append(del, existingByKey.get(key) ?? []); // A.5.5
  }

  // A.7.4: no endpoints at all for this address type -> exactly one empty slice.
  if (existing.length === del.length && create.length === 0) {
    const ph = placeholderSlice(service, addressType, ctx.managedBy);
    const only = del.length === 1 ? del[0] : undefined;
    if (only !== undefined && isSamePlaceholder(only, ph)) {
      del.length = 0;
      unchanged.push(only);
    } else {
      create.push(ph);
    }
  }
  return { create, update, delete: del, unchanged };
}

/**
 * Plans the EndpointSlices of one Service (section A), before recycling/naming (finalizePlan).
 * - ExternalName or selectorless Service: `skipped`, empty plan.
 * - No pods (or none with an address): one placeholder slice per address type, or nothing if an
 *   identical placeholder exists (A.7.4).
 * - Terminating pods stay (ready=false unless publishNotReadyAddresses); terminal pods go.
 * Creates list new slices per address type (IPv4 first), per port group; written slices carry
 * the trigger-time annotation (or lose it). New endpoints are placed in identity order, so the
 * result does not depend on the order of `pods` or `existingSlices`.
 * Throws InvalidArgumentError when maxEndpointsPerSlice is outside 1..1000.
 */
export function planSlices(input: PlanSlicesInput): PlanSlicesResult {
  return planSlicesWith(input, 'stamped');
}

/** planSlices with an explicit desired-set strategy; both give identical results (tests compare them). */
export function planSlicesWith(input: PlanSlicesInput, mode: DesiredMode): PlanSlicesResult {
  const max = checkMaxEndpointsPerSlice(input.maxEndpointsPerSlice);
  const { service } = input;
  if (service.spec.type === 'ExternalName' || isSelectorless(service)) {
    return { plan: EMPTY_PLAN, errors: [], skipped: true, droppedAddressTypes: [] };
  }
  const managedBy = input.managedBy ?? MANAGED_BY_CONTROLLER;
  const ns = namespaceOf(service.metadata);
  const mine = input.existingSlices
    .filter(
      (s) =>
        namespaceOf(s.metadata) === ns &&
        s.metadata.labels?.[LABEL_SERVICE_NAME] === service.metadata.name &&
        s.metadata.labels[LABEL_MANAGED_BY] === managedBy &&
        s.metadata.deletionTimestamp == null,
    )
    .sort(byName)
    .filter((s, i, all) => i === 0 || all[i - 1]?.metadata.name !== s.metadata.name); // a name is listed once

  const types = serviceAddressTypes(service);
  const supported = new Set<AddressType>(types);
  const unsupported = mine.filter((s) => !supported.has(s.addressType)); // A.2.3, never recycled
  const dropped = [...new Set(unsupported.map((s) => s.addressType))].sort();

  const labels = sliceLabels(service, managedBy);
  const place = (desired: DesiredState): SlicePlan => {
    const ctx: Ctx = { service, max, managedBy, labels, desired, outputs: new Set() };
    const create: EndpointSlice[] = [];
    const update: EndpointSlice[] = [];
    const del: EndpointSlice[] = [];
    const unchanged: EndpointSlice[] = [];
    for (const t of types) {
      const p = planAddressType(
        ctx,
        t,
        mine.filter((s) => s.addressType === t),
      );
      for (const s of p.create) create.push(stampTriggerTime(s, input.triggerTime));
      for (const s of p.update) update.push(stampTriggerTime(s, input.triggerTime));
      append(del, p.delete);
      append(unchanged, p.unchanged);
    }
    append(del, unsupported);
    if (desired.sync !== undefined) desired.sync.outputs = ctx.outputs;
    return { create, update, delete: del, unchanged };
  };
  let desired = resolveDesired(service, input.pods, input.nodes, mode, input.podChanges);
  let plan: SlicePlan;
  try {
    plan = place(desired);
  } catch (err) {
    // The slices were not as the previous sync left them (undone writes, say): sync in full.
    if (!(err instanceof StaleSlicesError)) throw err;
    replacementSyncs.redone++;
    desired = resolveDesired(service, input.pods, input.nodes, mode);
    plan = place(desired);
  }
  return { plan, errors: desired.errors, skipped: false, droppedAddressTypes: dropped };
}
