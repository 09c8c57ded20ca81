// The desired endpoints of one (address type, port group), as the placement pass consumes
// them: "take the desired version of this identity, once" and "what is left, in identity order".
//
// MapDesiredSet is the reference (a Map keyed by identity, as upstream's EndpointSet).
// StampedDesiredSet gives the same answers without building a Map: each sync stamps the
// DesiredEndpoints it wants (mark/group) and claims them (taken); an existing endpoint finds its
// desired version through the object that produced it, or through its Service scope's registry
// of identity -> newest holder. plan-slices only uses it when every wanted identity has exactly
// one holder (no duplicates), which makes both lookups exact.

import type { Endpoint } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { DesiredEndpoint, Scope } from './endpoint-cache.ts';

export interface DesiredSet {
  /** The desired version of `identity`, removing it from the set; undefined if not (or no longer) desired. */
  take(identity: string, producer: DesiredEndpoint | null): Endpoint | undefined;
  /** Endpoints not taken, sorted by identity. */
  leftovers(): Endpoint[];
}

export class MapDesiredSet implements DesiredSet {
  constructor(private readonly map: Map<string, Endpoint>) {}

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

export class StampedDesiredSet implements DesiredSet {
  constructor(
    private readonly scope: Scope,
    private readonly stamp: number,
    private readonly group: number,
    private readonly family: SliceAddressType,
    /** This group's DesiredEndpoints for `family`, each once, all marked with `stamp`. */
    private readonly members: readonly DesiredEndpoint[],
  ) {}

  take(identity: string, producer: DesiredEndpoint | null): Endpoint | undefined {
    const d = producer !== null && producer.mark === this.stamp ? producer : this.scope.current(identity);
    if (d === undefined || d.mark !== this.stamp || d.group !== this.group || d.family !== this.family || d.taken === this.stamp) return undefined;
    d.taken = this.stamp;
    return d.endpoint;
  }

  leftovers(): Endpoint[] {
    const left = this.members.filter((d) => d.taken !== this.stamp);
    left.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return left.map((d) => d.endpoint);
  }
}
