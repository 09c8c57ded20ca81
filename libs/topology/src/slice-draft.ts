// Copy-on-write editing of endpoint hints: inputs stay untouched (they may be frozen informer
// objects), and a slice whose hints end up unchanged is handed back as the very same object.

import type { Endpoint, EndpointHints, EndpointSlice } from '@slicemesh/model';

/** Ready means `conditions.ready === true`; unset (unknown) is not ready. */
export function isReady(endpoint: Endpoint): boolean {
  return endpoint.conditions?.ready === true;
}

/** The endpoint's zone, or undefined when absent or empty. */
export function zoneOf(endpoint: Endpoint): string | undefined {
  return endpoint.zone != null && endpoint.zone !== '' ? endpoint.zone : undefined;
}

/** The endpoint's node name, or undefined when absent or empty. */
export function nodeOf(endpoint: Endpoint): string | undefined {
  return endpoint.nodeName != null && endpoint.nodeName !== '' ? endpoint.nodeName : undefined;
}

/** Any hints object at all (even an empty one) counts, as a non-nil pointer does upstream. */
export function hasHints(endpoint: Endpoint): boolean {
  return endpoint.hints != null;
}

// Per slice object: slices are never modified (see the file comment), so the answer cannot go
// stale. The None path asks it of every unchanged slice of a Service on each reconcile; at 100k
// endpoints that walk was a fifth of a one-slice change's work in the hints service.
const sliceHinted = new WeakMap<EndpointSlice, boolean>();

/** Whether any endpoint of `slice` has hints (hasHints). */
export function sliceHasHints(slice: EndpointSlice): boolean {
  let v = sliceHinted.get(slice);
  if (v === undefined) sliceHinted.set(slice, (v = slice.endpoints.some(hasHints)));
  return v;
}

function sameNames(a: readonly { readonly name: string }[] | undefined, b: readonly { readonly name: string }[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((x, i) => x.name === b[i]?.name);
}

function sameHints(a: EndpointHints | undefined | null, b: EndpointHints | undefined): boolean {
  if (a == null || b === undefined) return (a == null) === (b === undefined);
  return sameNames(a.forZones, b.forZones) && sameNames(a.forNodes, b.forNodes);
}

type MutableEndpoint = { -readonly [K in keyof Endpoint]: Endpoint[K] };

/** A copy of `endpoint` with `hints` replaced (or the key removed when `hints` is undefined). */
export function withHints(endpoint: Endpoint, hints: EndpointHints | undefined): Endpoint {
  const copy: MutableEndpoint = { ...endpoint };
  if (hints === undefined) delete copy.hints;
  else copy.hints = hints;
  return copy;
}

export function zoneHint(zone: string): EndpointHints {
  return { forZones: [{ name: zone }] };
}

/** Where a draft came from in the plan (a moved `unchanged` slice now sits in `update`). */
export type DraftOrigin = 'create' | 'update' | 'unchanged';

/** One slice whose endpoint hints may be rewritten; `result()` materialises it. */
export class SliceDraft {
  readonly original: EndpointSlice;
  readonly origin: DraftOrigin;
  #endpoints: Endpoint[] | null = null;

  constructor(
    original: EndpointSlice,
    origin: DraftOrigin,
  ) {
    this.original = original;
    this.origin = origin;
  }

  get endpoints(): readonly Endpoint[] {
    return this.#endpoints ?? this.original.endpoints;
  }

  /** Sets endpoint `i`'s hints (undefined clears them); a no-op when they are already equal. */
  setHints(i: number, hints: EndpointHints | undefined): void {
    const current = this.endpoints[i];
    if (current === undefined || sameHints(current.hints, hints)) return;
    this.#endpoints ??= [...this.original.endpoints];
    this.#endpoints[i] = withHints(current, hints);
  }

  /** Clears every endpoint's hints; returns how many endpoints had some. */
  clearAll(): number {
    let cleared = 0;
    this.endpoints.forEach((ep, i) => {
      if (hasHints(ep)) {
        cleared++;
        this.setHints(i, undefined);
      }
    });
    return cleared;
  }

  /** The original object when nothing changed, else a new slice with the new endpoints. */
  result(): EndpointSlice {
    return this.#endpoints === null ? this.original : { ...this.original, endpoints: this.#endpoints };
  }
}
