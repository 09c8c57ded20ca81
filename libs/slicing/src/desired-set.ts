// The desired endpoints of one (address type, port group), as the placement pass consumes
// them: "take the desired version of this identity, once" and "what is left, in identity order".
//
// MapDesiredSet is the reference (a Map keyed by identity, as upstream's EndpointSet).
// StampedDesiredSet gives the same answers without building anything per endpoint: each sync
// stamps the DesiredEndpoints it wants (mark/group) and claims them (taken); an existing
// endpoint finds its desired version through the object that produced it, or through its
// Service scope's identity registry. plan-slices only uses it when every wanted identity has
// exactly one holder (no duplicates), which makes both lookups exact.

import type { Endpoint, EndpointSlice } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { DesiredEndpoint } from './endpoint-cache.ts';
import { sliceKeys } from './endpoint-cache.ts';
import { endpointIdentity } from './endpoint-identity.ts';
import type { IdentityRegistry } from './identity-registry.ts';

/** An existing slice's endpoints as placement matches them: identity and producer per index. */
export interface SliceEndpointKeys {
  /** endpointIdentity of each endpoint, index-aligned with `slice.endpoints`. */
  readonly identities: readonly string[];
  /** The DesiredEndpoint that produced each endpoint object, when known. */
  readonly producers: readonly (DesiredEndpoint | null)[];
}

export interface DesiredSet {
  /** How this set matches an existing slice's endpoints (the fast set reads its memo). */
  keysOf(slice: EndpointSlice): SliceEndpointKeys;
  /**
   * True when the slice is known to hold exactly desired endpoints, each once, none taken yet:
   * placement then counts them as taken (takeAll) instead of matching them one by one.
   */
  untouched?(slice: EndpointSlice): boolean;
  /** Counts `n` endpoints of an untouched slice as taken. */
  takeAll?(n: number): void;
  /** The desired version of `identity`, removing it from the set; undefined if not (or no longer) desired. */
  take(identity: string, producer: DesiredEndpoint | null): Endpoint | undefined;
  /** Endpoints not taken, sorted by identity. */
  leftovers(): Endpoint[];
}

export class MapDesiredSet implements DesiredSet {
  private readonly map: Map<string, Endpoint>;

  constructor(map: Map<string, Endpoint>) {
    this.map = map;
  }

  keysOf(slice: EndpointSlice): SliceEndpointKeys {
    return { identities: slice.endpoints.map(endpointIdentity), producers: slice.endpoints.map(() => null) };
  }

  take(identity: string): Endpoint | undefined {
    const want = this.map.get(identity);
    if (want !== undefined) this.map.delete(identity);
    return want;
  }

  leftovers(): Endpoint[] {
    if (this.map.size === 0) return [];
    return [...this.map.keys()].sort().map((k) => this.map.get(k) as Endpoint);
  }
}

/**
 * For a sync of replaced pods only (desired-incremental.ts): the endpoint arrays of the slices
 * the previous sync's plan left, and the endpoints this sync no longer wants. A slice whose
 * array is one of those and holds none of these is untouched.
 */
export interface UntouchedSlices {
  readonly clean: ReadonlySet<readonly Endpoint[]>;
  readonly removed: readonly Endpoint[];
}

/** Raised when an untouched-slices sync finds the slices not as its previous sync left them. */
export class StaleSlicesError extends Error {}

export class StampedDesiredSet implements DesiredSet {
  private readonly registry: IdentityRegistry<DesiredEndpoint>;
  /** The stamp wanted endpoints carry (`mark`). */
  private readonly stamp: number;
  /** This sync's own stamp for `taken` (the same as `stamp` unless marks were carried over). */
  private readonly takeStamp: number;
  private readonly skip: UntouchedSlices | null;
  private readonly counted = new Set<readonly Endpoint[]>();
  private readonly group: number;
  private readonly family: SliceAddressType;
  /** How many DesiredEndpoints of this group and family the sync marked (all held by `registry`). */
  private readonly size: number;
  /** The sync's newly registered endpoints, in identity order (where leftovers usually are). */
  private readonly fresh: readonly DesiredEndpoint[];
  private takenCount = 0;

  keysOf(slice: EndpointSlice): SliceEndpointKeys {
    return sliceKeys(slice);
  }

  constructor(
    registry: IdentityRegistry<DesiredEndpoint>,
    stamp: number,
    group: number,
    family: SliceAddressType,
    size: number,
    fresh: readonly DesiredEndpoint[],
    takeStamp = stamp,
    skip: UntouchedSlices | null = null,
  ) {
    this.registry = registry;
    this.stamp = stamp;
    this.takeStamp = takeStamp;
    this.skip = skip;
    this.group = group;
    this.family = family;
    this.size = size;
    this.fresh = fresh;
  }

  take(identity: string, producer: DesiredEndpoint | null): Endpoint | undefined {
    const d = producer !== null && producer.mark === this.stamp ? producer : this.registry.find(identity);
    if (d === undefined || !this.isMine(d) || d.taken === this.takeStamp) return undefined;
    d.taken = this.takeStamp;
    this.takenCount++;
    return d.endpoint;
  }

  leftovers(): Endpoint[] {
    const left = this.size - this.takenCount; // usually 0 after a pod change: no scan at all
    if (left === 0) return [];
    // New pods are the usual leftovers: when the fresh endpoints account for all of them,
    // the whole registry need not be scanned. Both lists are in identity order, so the
    // result is sorted either way.
    const fromFresh = this.collect(this.fresh, left);
    if (fromFresh.length === left) return fromFresh;
    // Untouched slices were counted, not marked: a scan of the registry would list them.
    if (this.skip !== null) throw new StaleSlicesError('desired endpoints missing from the slices the previous sync left');
    return this.collect(this.registry.sorted, left);
  }

  untouched(slice: EndpointSlice): boolean {
    const eps = slice.endpoints;
    if (this.skip === null || !this.skip.clean.has(eps) || this.counted.has(eps)) return false;
    for (const r of this.skip.removed) if (eps.includes(r)) return false;
    this.counted.add(eps);
    return true;
  }

  takeAll(n: number): void {
    this.takenCount += n;
  }

  // An index loop: this runs once per sync, often before the optimising compiler got to it,
  // and an unoptimised for-of allocates per element.
  private collect(from: readonly DesiredEndpoint[], left: number): Endpoint[] {
    const out: Endpoint[] = [];
    for (let i = 0; i < from.length && out.length < left; i++) {
      const d = from[i] as DesiredEndpoint;
      if (this.isMine(d) && d.taken !== this.takeStamp) out.push(d.endpoint);
    }
    return out;
  }

  private isMine(d: DesiredEndpoint): boolean {
    return d.mark === this.stamp && d.group === this.group && d.family === this.family;
  }
}
