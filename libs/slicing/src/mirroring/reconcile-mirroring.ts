// The mirroring reconciler (B): one Endpoints object in, one final SlicePlan out.

import type { Endpoints, EndpointSlice, KubeEvent, Service, SlicePlan } from '@slicemesh/model';
import { DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET, InvalidArgumentError, LABEL_MANAGED_BY, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { generateNamePrefix } from '../slice-name.ts';
import { sameEndpoints } from './endpoint-identity.ts';
import type { PendingCreate } from './finalize-mirror-plan.ts';
import { finalizeMirrorPlan } from './finalize-mirror-plan.ts';
import type { MirrorGroup } from './mirror-endpoints.ts';
import { mirrorEndpoints } from './mirror-endpoints.ts';
import { portSetKey } from './mirror-ports.ts';
import { metadataMatches, newMirroredSlice } from './mirrored-slice.ts';
import { shouldMirror } from './should-mirror.ts';

/** Flag validation range of `--mirroring-max-endpoints-per-subset`. */
export const MIN_MIRRORING_MAX_ENDPOINTS_PER_SUBSET = 1;
export const MAX_MIRRORING_MAX_ENDPOINTS_PER_SUBSET = 1000;

export interface MirrorInput {
  /** null = deleted or missing. */
  readonly endpoints: Endpoints | null;
  /** The same-named Service; null if missing. */
  readonly service: Service | null;
  /** Slices labelled service-name=<name>; only those managed by the mirroring controller are touched. */
  readonly existingSlices: readonly EndpointSlice[];
  /** Default DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET (1000); must be an integer in 1..1000. */
  readonly maxEndpointsPerSubset?: number;
}

export interface MirrorResult {
  /** Final plan: recycled and named. */
  readonly plan: SlicePlan;
  /** Warnings to record on the Endpoints (only when mirrored). */
  readonly events: readonly KubeEvent[];
  /** Whether B.1 says this Endpoints is mirrored. */
  readonly mirrored: boolean;
}

function byName(a: EndpointSlice, b: EndpointSlice): number {
  const x = a.metadata.name;
  const y = b.metadata.name;
  return x < y ? -1 : x > y ? 1 : 0;
}

function validMax(max: number | undefined): number {
  const m = max ?? DEFAULT_MIRRORING_MAX_ENDPOINTS_PER_SUBSET;
  if (!Number.isInteger(m) || m < MIN_MIRRORING_MAX_ENDPOINTS_PER_SUBSET || m > MAX_MIRRORING_MAX_ENDPOINTS_PER_SUBSET) {
    throw new InvalidArgumentError('maxEndpointsPerSubset', `must be an integer from ${MIN_MIRRORING_MAX_ENDPOINTS_PER_SUBSET} to ${MAX_MIRRORING_MAX_ENDPOINTS_PER_SUBSET}, got ${m}`);
  }
  return m;
}

/**
 * Reconciles the mirrored slices of one Endpoints object.
 * - Not mirrored (B.1), including a null Endpoints: every slice managed by the mirroring
 *   controller is deleted; no events.
 * - Mirrored: one slice per (port set, address family) group (B.2). Per group (B.3) extra slices
 *   are deleted, the first (by name) is left alone when it already matches or is rewritten in
 *   place, groups without endpoints lose their slices; creates and deletes of one address type
 *   are recycled into updates, creates are dropped while the Endpoints is being deleted.
 * An Endpoints without addresses and without existing slices yields an empty plan.
 * Slices with another managed-by value never appear in the plan; their names are still avoided.
 * Throws InvalidArgumentError for a maxEndpointsPerSubset outside 1..1000.
 */
export function reconcileMirroring(input: MirrorInput): MirrorResult {
  const max = validMax(input.maxEndpointsPerSubset);
  const ours = input.existingSlices.filter((s) => s.metadata.labels?.[LABEL_MANAGED_BY] === MANAGED_BY_MIRRORING).sort(byName);
  const endpoints = input.endpoints;
  if (!endpoints || !shouldMirror(endpoints, input.service)) {
    return { plan: { create: [], update: [], delete: ours, unchanged: [] }, events: [], mirrored: false };
  }

  const desired = mirrorEndpoints(endpoints, max);
  const wanted = new Map<string, MirrorGroup>(desired.groups.map((g) => [g.key, g]));
  const existing = new Map<string, EndpointSlice[]>();
  for (const s of ours) {
    const key = `${s.addressType}/${portSetKey(s.ports)}`;
    existing.set(key, [...(existing.get(key) ?? []), s]);
  }

  const create: PendingCreate[] = [];
  const update: EndpointSlice[] = [];
  const del: EndpointSlice[] = [];
  const unchanged: EndpointSlice[] = [];
  const keys = [...new Set([...wanted.keys(), ...existing.keys()])].sort();
  for (const key of keys) {
    const group = wanted.get(key);
    const [first, ...extras] = existing.get(key) ?? [];
    if (!group) {
      if (first) del.push(first, ...extras); // B.3.1 (also port sets no longer present)
      continue;
    }
    if (!first) {
      const slice = newMirroredSlice(endpoints, group.addressType, group.ports, group.endpoints, '', generateNamePrefix(endpoints.metadata.name));
      create.push({ origin: group.key, slice }); // B.3.3
      continue;
    }
    del.push(...extras); // B.3.2: never more than one slice per group
    if (sameEndpoints(first.endpoints, group.endpoints) && metadataMatches(first, endpoints)) unchanged.push(first);
    else update.push(newMirroredSlice(endpoints, group.addressType, group.ports, group.endpoints, first.metadata.name));
  }

  const taken = new Set(input.existingSlices.map((s) => s.metadata.name));
  const plan = finalizeMirrorPlan(endpoints, { create, update, delete: del, unchanged }, taken);
  return { plan, events: desired.events, mirrored: true };
}
