// desiredViews() kept per service between reconciles: the zone views are updated incrementally
// (updateZoneViews) and each view entry's KV key, JSON text and digest are made once per entry
// object, so a change to one slice of a 100k-endpoint service serialises the few entries it
// changed instead of every entry of every zone.

import type { EndpointSlice, Service } from '@slicemesh/model';
import { viewKey } from '@slicemesh/nats';
import type { ZoneViewEntry, ZoneViewsState } from '@slicemesh/proxy-state';
import { updateZoneViewEntries } from '@slicemesh/proxy-state';
import type { ServiceKey } from './published-index.ts';
import type { DesiredValue, DesiredViewsInput, KeyPut } from './view-plan.ts';
import { desiredValue, hintedEntry, viewValue } from './view-plan.ts';

export class ServiceViewsCache {
  readonly #states = new Map<ServiceKey, ZoneViewsState>();
  readonly #values = new WeakMap<ZoneViewEntry, { readonly key: string; readonly value: DesiredValue }>();
  // By body: zones that keep the same endpoints of a slice share one body object
  // (updateZoneViewEntries), so a service without hints serialises and digests each changed
  // slice's zone view once, not once per zone (and its unfiltered view once more while some
  // endpoint is not ready: the zones keep only the ready ones).
  readonly #bodies = new WeakMap<EndpointSlice, DesiredValue>();
  readonly #specs = new WeakMap<Service, DesiredValue>();
  readonly #slices = new WeakMap<EndpointSlice, KeyPut>();

  /** The same map as desiredViews(input), from what this cache holds for `service`. */
  desiredViews(service: ServiceKey, input: DesiredViewsInput): Map<string, DesiredValue> {
    const prev = this.#states.get(service);
    // A state is used up by the call it is passed to: drop it first, so a throw leaves none.
    this.#states.delete(service);
    const next = updateZoneViewEntries(prev, { services: [input.service], slices: input.slices, nodes: input.nodes, preferSameNodeGate: input.preferSameNodeGate });
    this.#states.set(service, next.state);
    const out = new Map<string, DesiredValue>();
    for (const e of next.entries) {
      let kv = this.#values.get(e);
      if (kv === undefined) {
        let value = this.#bodies.get(e.slice);
        if (value === undefined) this.#bodies.set(e.slice, (value = viewValue(e.slice)));
        kv = { key: viewKey({ cluster: input.cluster, zone: e.zone, namespace: e.namespace, service: e.service, slice: e.sliceName }), value };
        this.#values.set(e, kv);
      }
      out.set(kv.key, kv.value);
    }
    return out;
  }

  /** desiredValue(service), made once per Service object. */
  spec(service: Service): DesiredValue {
    let v = this.#specs.get(service);
    if (v === undefined) this.#specs.set(service, (v = desiredValue(service)));
    return v;
  }

  /**
   * hintedEntry(…, slice), made once per slice object (unchanged slices keep their object,
   * hint-reuse.ts). A slice object belongs to one Service, so its key cannot go stale.
   */
  hinted(cluster: string, namespace: string, service: string, slice: EndpointSlice): KeyPut {
    let v = this.#slices.get(slice);
    if (v === undefined) this.#slices.set(slice, (v = hintedEntry(cluster, namespace, service, slice)));
    return v;
  }

  /** Drops what is held for a service that is gone. */
  forget(service: ServiceKey): void {
    this.#states.delete(service);
  }
}
