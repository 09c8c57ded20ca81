// Packing one (address type, port group) into slices (A.7.1-A.7.3): the heart of
// upstream's reconcileByPortMapping, with deterministic choices where upstream iterates sets.

import type { Endpoint, EndpointSlice } from '@slicemesh/model';
import type { DesiredSet } from './desired-set.ts';
import { MapDesiredSet } from './desired-set.ts';
import { endpointNeedsUpdate } from './endpoint-identity.ts';

export interface PlacementInput {
  /** Existing slices of this group, owned by the Service, in a stable order (by name). */
  readonly existing: readonly EndpointSlice[];
  /** Desired endpoints by identity (A.6.1). Consumed: placed entries are removed from it. */
  readonly desired: Map<string, Endpoint>;
  readonly maxEndpointsPerSlice: number;
  /** A.9.4: whether an otherwise unchanged slice must be rewritten for its labels. */
  readonly labelsDrifted: (slice: EndpointSlice) => boolean;
}

export interface SliceRewrite {
  readonly slice: EndpointSlice;
  readonly endpoints: readonly Endpoint[];
}

export interface Placement {
  /** Endpoint lists of new slices, each 1..max long. */
  readonly create: readonly (readonly Endpoint[])[];
  /** Existing slices to rewrite with these endpoints, in `existing` order. */
  readonly update: readonly SliceRewrite[];
  /** Existing slices left without any desired endpoint, in `existing` order. */
  readonly delete: readonly EndpointSlice[];
  /** Existing slices that need no write, in `existing` order. */
  readonly unchanged: readonly EndpointSlice[];
  /**
   * The endpoint arrays of the placed slices (created, rewritten or unchanged) whose every
   * endpoint is the very object the desired set gave: an unchanged slice keeps its stored
   * objects when only an object differed, and those are left out (see LastSync.outputs).
   */
  readonly exact: readonly (readonly Endpoint[])[];
}

type State = 'unchanged' | 'update' | 'delete';
interface Work {
  readonly slice: EndpointSlice;
  state: State;
  /** Shares the stored array until something is appended (most slices stay unchanged). */
  endpoints: readonly Endpoint[];
  owned: boolean;
  /** Every endpoint is the desired set's own object. */
  exact: boolean;
}

function push(w: Work, ep: Endpoint): void {
  if (!w.owned) {
    w.endpoints = [...w.endpoints];
    w.owned = true;
  }
  (w.endpoints as Endpoint[]).push(ep);
}

/**
 * Places the desired endpoints of one group. Endpoints already in a slice stay there (in
 * place, in their order); new endpoints go, in identity order, first into slices being
 * rewritten anyway (fullest first), then into the one unchanged slice that ends closest to
 * full and can take all of them, else into new slices of up to `max`.
 * Empty desired set: every existing slice is deleted and nothing is created.
 */
export function placeEndpoints(input: PlacementInput): Placement {
  return placeInto(input.existing, new MapDesiredSet(input.desired), input.maxEndpointsPerSlice, input.labelsDrifted);
}

/** placeEndpoints over any DesiredSet (plan-slices passes the stamped, Map-free one). */
export function placeInto(existing: readonly EndpointSlice[], desired: DesiredSet, max: number, labelsDrifted: (slice: EndpointSlice) => boolean): Placement {
  const work: Work[] = [];

  // 1. Remove/update pass: keep the desired version of every endpoint still wanted.
  for (const slice of existing) {
    let kept: ReturnType<typeof keepDesired> = null;
    if (desired.untouched?.(slice) === true) desired.takeAll?.(slice.endpoints.length);
    else kept = keepDesired(slice, desired);
    if (kept !== null && (kept.changed || kept.endpoints.length !== slice.endpoints.length)) {
      work.push({ slice, state: kept.endpoints.length === 0 ? 'delete' : 'update', endpoints: kept.endpoints, owned: true, exact: true });
    } else {
      // Nothing changed: keep the stored endpoints (with their hints) as they are.
      work.push({ slice, state: labelsDrifted(slice) ? 'update' : 'unchanged', endpoints: slice.endpoints, owned: false, exact: kept === null });
    }
  }

  const leftovers = desired.leftovers();
  let next = 0;

  // 2. Fill pass: top up slices that are written anyway, fullest first.
  if (leftovers.length > 0) {
    const toUpdate = work.filter((w) => w.state === 'update');
    toUpdate.sort((a, b) => b.endpoints.length - a.endpoints.length); // stable: ties keep name order
    for (const w of toUpdate) {
      while (next < leftovers.length && w.endpoints.length < max) push(w, leftovers[next++] as Endpoint);
    }
  }

  // 3. Create/reuse pass: never split leftovers across unchanged slices.
  const create: Endpoint[][] = [];
  while (next < leftovers.length) {
    const left = leftovers.length - next;
    let target: Work | undefined;
    if (left < max) target = closestToFull(work, left, max);
    if (target) {
      target.state = 'update';
      while (next < leftovers.length) push(target, leftovers[next++] as Endpoint);
    } else {
      const chunk = leftovers.slice(next, next + max);
      next += chunk.length;
      create.push(chunk);
    }
  }

  return {
    create,
    exact: [...create, ...work.filter((w) => w.state !== 'delete' && w.exact).map((w) => w.endpoints)],
    update: work.filter((w) => w.state === 'update').map((w) => ({ slice: w.slice, endpoints: w.endpoints })),
    delete: work.filter((w) => w.state === 'delete').map((w) => w.slice),
    unchanged: work.filter((w) => w.state === 'unchanged').map((w) => w.slice),
  };
}

/**
 * The desired versions of a slice's endpoints that are still wanted (taken from `desired`),
 * and whether any of them needs an update (A.6.2). Null when they are exactly the stored
 * endpoint objects, as for most slices: the list is only built once one differs (by object
 * or by being dropped), copying the stored prefix. (A function of its own so that it is
 * optimised early: it runs once per existing slice.)
 */
function keepDesired(slice: EndpointSlice, desired: DesiredSet): { endpoints: Endpoint[]; changed: boolean } | null {
  let kept: Endpoint[] | null = null;
  let changed = false;
  const { identities, producers } = desired.keysOf(slice);
  const stored = slice.endpoints;
  for (let i = 0; i < identities.length; i++) {
    const ep = stored[i] as Endpoint;
    const want = desired.take(identities[i] as string, producers[i] ?? null);
    if (want === ep && kept === null) continue;
    kept ??= stored.slice(0, i);
    if (want === undefined) continue; // not desired, or a duplicate already placed
    kept.push(want);
    if (!changed && ep !== want && endpointNeedsUpdate(ep, want)) changed = true;
  }
  return kept === null ? null : { endpoints: kept, changed };
}

/** The unchanged slice with the smallest non-negative room left after adding `n`; first wins ties. */
function closestToFull(work: readonly Work[], n: number, max: number): Work | undefined {
  let best: Work | undefined;
  let bestDiff = max;
  for (const w of work) {
    if (w.state !== 'unchanged') continue;
    const diff = max - (n + w.endpoints.length);
    if (diff >= 0 && diff < bestDiff) {
      best = w;
      bestDiff = diff;
      if (diff === 0) break;
    }
  }
  return best;
}
