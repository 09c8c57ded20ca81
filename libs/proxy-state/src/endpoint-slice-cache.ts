// D.2.2/D.2.8: the agent's EndpointSlice state, shaped as a diff. Per service, slices are
// kept by NAME in two layers: `pending` (received since the last sync) and `applied` (what
// the last sync used). A sync checks out, per changed service, the endpoint maps before and
// after applying the pending layer.

import type { EndpointSlice, IPFamily } from '@slicemesh/model';
import { deepEqual } from './deep-equal.ts';
import type { EndpointInfo } from './merge-endpoints.ts';
import { mergeEndpoints, sliceServiceName } from './merge-endpoints.ts';
import { sortedMap } from './order.ts';

/** Per port key `<portName>/<protocol>`, the merged endpoints (see `mergeEndpoints`). */
export type EndpointsByPort = ReadonlyMap<string, readonly EndpointInfo[]>;

export interface EndpointsChange {
  readonly previous: EndpointsByPort;
  readonly current: EndpointsByPort;
}

const REMOVED = Symbol('removed');
type PendingSlice = EndpointSlice | typeof REMOVED;

interface Tracker {
  readonly applied: Map<string, EndpointSlice>;
  readonly pending: Map<string, PendingSlice>;
}

export class EndpointSliceCache {
  private readonly opts: { readonly nodeName: string; readonly family: IPFamily };
  private readonly trackers = new Map<string, Tracker>();

  constructor(opts: { readonly nodeName: string; readonly family: IPFamily }) {
    this.opts = opts;
  }

  /** `<ns>/<service>` of a slice this cache accepts, or null (other family, no service label, no name). */
  private serviceKeyOf(slice: EndpointSlice): string | null {
    const svc = sliceServiceName(slice);
    if (svc === null || slice.addressType !== this.opts.family || !slice.metadata.name) return null;
    return `${slice.metadata.namespace ?? 'default'}/${svc}`;
  }

  private record(slice: EndpointSlice, next: PendingSlice): boolean {
    const key = this.serviceKeyOf(slice);
    if (key === null) return false;
    let t = this.trackers.get(key);
    const name = slice.metadata.name;
    // Compare with the pending version if there is one, else with the applied one.
    const known: PendingSlice | undefined = t?.pending.has(name) ? t.pending.get(name) : t?.applied.get(name);
    if (known === undefined ? next === REMOVED : deepEqual(known, next)) return false;
    if (!t) this.trackers.set(key, (t = { applied: new Map(), pending: new Map() }));
    t.pending.set(name, next);
    return true;
  }

  /**
   * Records a new or updated slice. Returns true when this changed the pending state; an
   * update equal (whole slice, order-sensitive) to what is pending or applied is a no-op.
   */
  update(slice: EndpointSlice): boolean {
    return this.record(slice, slice);
  }

  /** Records a slice deletion. Returns false when the slice was not known. */
  delete(slice: EndpointSlice): boolean {
    return this.record(slice, REMOVED);
  }

  /** Whether some service has pending changes. */
  hasPendingChanges(): boolean {
    for (const t of this.trackers.values()) if (t.pending.size > 0) return true;
    return false;
  }

  /** The applied endpoints of service `<ns>/<name>` (empty when unknown). */
  appliedEndpoints(serviceKey: string): EndpointsByPort {
    return this.mergeApplied(this.trackers.get(serviceKey));
  }

  private mergeApplied(t: Tracker | undefined): EndpointsByPort {
    return t ? mergeEndpoints([...t.applied.values()], this.opts) : new Map();
  }

  /**
   * Applies every pending change and returns, per changed service `<ns>/<name>` (in key
   * order), the endpoints before and after. Nothing pending gives an empty map.
   */
  checkoutChanges(): Map<string, EndpointsChange> {
    const out = new Map<string, EndpointsChange>();
    for (const [key, t] of this.trackers) {
      if (t.pending.size === 0) continue;
      const previous = this.mergeApplied(t);
      for (const [name, s] of t.pending) {
        if (s === REMOVED) t.applied.delete(name);
        else t.applied.set(name, s);
      }
      t.pending.clear();
      out.set(key, { previous, current: this.mergeApplied(t) });
      if (t.applied.size === 0) this.trackers.delete(key);
    }
    return sortedMap(out);
  }
}
