// Memo of per-pod endpoints and per-slice keys. A Service with 100k pods is re-planned after
// every pod change; recomputing 100k endpoints and identity strings, and building 100k-entry
// maps, would dominate. Inputs are immutable by contract, so a pod object listed again (with the
// same node object and the same Service fields the endpoint depends on) yields the very same
// DesiredEndpoint again. The memo never changes a result, only how fast it is produced (see
// desired-set.ts and desired-endpoints.ts for how plan-slices uses it).

import type { Endpoint, EndpointSlice, EndpointSlicePort, Node, Pod, Service, ServiceSpec } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import { endpointIdentity } from './endpoint-identity.ts';
import { PodEndpoint, canonicalPodIP, endpointForPod, podAddressesByFamily, shouldPodBeInEndpoints } from './endpoint-from-pod.ts';
import { portMapKey } from './port-map-key.ts';
import { namespaceOf } from './selector.ts';

/**
 * The endpoint one pod contributes to one address type, with its identity (A.6.1) and
 * per-sync scratch fields (only meaningful while `mark` equals the current sync's stamp).
 */
export class DesiredEndpoint {
  /** Stamp of the last sync that found this endpoint desired. */
  mark = 0;
  /** Port group index within that sync. */
  group = -1;
  /** Stamp of the last sync that placed it into an existing slice. */
  taken = 0;
  /** False while its scope's registry points at this object for `key`. */
  shadowed = true;

  constructor(
    readonly key: string,
    readonly endpoint: Endpoint,
    readonly family: SliceAddressType,
    readonly scope: Scope,
  ) {}
}

/**
 * Per Service (namespace/name): identity -> the DesiredEndpoint most recently registered with
 * that identity. Entries not wanted by the latest sync are pruned once they outnumber the wanted
 * ones, and whole scopes are evicted least-recently-used, so memory stays proportional to the
 * live endpoints of recently planned Services.
 */
export class Scope {
  private readonly holders = new Map<string, DesiredEndpoint>();
  /** The previous sync's pods and what was derived from each (position-aligned). */
  podMemo: { readonly pods: readonly Pod[]; readonly records: readonly PodRecord[] } | null = null;
  constructor(readonly name: string) {}

  current(key: string): DesiredEndpoint | undefined {
    return this.holders.get(key);
  }

  /** Makes `d` the holder of its identity; returns the previous holder (now shadowed). */
  register(d: DesiredEndpoint): DesiredEndpoint | undefined {
    const prev = this.holders.get(d.key);
    if (prev === d) return undefined;
    if (prev) prev.shadowed = true;
    this.holders.set(d.key, d);
    d.shadowed = false;
    return prev;
  }

  /** After a sync that wanted `wanted` endpoints: drop holders it did not want, if they dominate. */
  prune(stamp: number, wanted: number): void {
    if (this.holders.size <= 2 * wanted + 1024) return;
    for (const [key, d] of this.holders) {
      if (d.mark === stamp) continue;
      d.shadowed = true;
      this.holders.delete(key);
    }
  }

  /** Forgets every holder (they re-register when next wanted) and the pod memo. */
  clear(): void {
    for (const d of this.holders.values()) d.shadowed = true;
    this.holders.clear();
    this.podMemo = null;
  }
}

const MAX_SCOPES = 256;
const scopes = new Map<string, Scope>();

/** The registry scope of a Service; marks it most recently used. */
export function scopeOf(service: Service): Scope {
  const name = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
  let s = scopes.get(name);
  if (s) {
    scopes.delete(name); // re-insert: Map order is the LRU order
  } else {
    s = new Scope(name);
    if (scopes.size >= MAX_SCOPES) {
      const oldest = scopes.keys().next().value;
      if (oldest !== undefined) {
        scopes.get(oldest)?.clear();
        scopes.delete(oldest);
      }
    }
  }
  scopes.set(name, s);
  return s;
}

/**
 * Drops the memo of a deleted Service (optional: scopes are also evicted least-recently-used).
 * Never changes any result.
 */
export function forgetServiceMemo(namespace: string, name: string): void {
  const key = `${namespace}/${name}`;
  scopes.get(key)?.clear();
  scopes.delete(key);
}

export interface PodEndpoints {
  readonly node: Node | undefined;
  readonly scope: Scope | null;
  readonly publishNotReady: boolean;
  /** Null when the pod has no address of that family (A.2.5). */
  readonly IPv4: DesiredEndpoint | null;
  readonly IPv6: DesiredEndpoint | null;
}

/**
 * What the planner derived from one pod object; kept (position-aligned, see
 * desired-endpoints.ts) and reused while the same object is listed again. One object per pod:
 * everything here survives between syncs, so fewer objects means less GC work.
 */
export interface PodRecord extends PodEndpoints {
  /** A.3.1/A.3.2 (depends on the pod only). */
  readonly included: boolean;
  readonly nodeName: string;
  /** The `spec.ports` object `ports`/`portKey` were resolved for (null: not yet). */
  portsFor: ServiceSpec['ports'] | null;
  ports: EndpointSlicePort[];
  portKey: string;
  node: Node | undefined;
  /** Null until the endpoints were computed. */
  scope: Scope | null;
  publishNotReady: boolean;
  IPv4: DesiredEndpoint | null;
  IPv6: DesiredEndpoint | null;
}

export function newPodRecord(pod: Pod): PodRecord {
  return {
    included: shouldPodBeInEndpoints(pod),
    nodeName: pod.spec.nodeName ?? '',
    portsFor: null,
    ports: [],
    portKey: '',
    node: undefined,
    scope: null,
    publishNotReady: false,
    IPv4: null,
    IPv6: null,
  };
}

// Endpoints produced here carry a private link to their DesiredEndpoint: much cheaper than a
// WeakMap lookup, and invisible to copies, JSON and equality.
function producerOf(ep: Endpoint): DesiredEndpoint | null {
  const p = PodEndpoint.linkOf(ep);
  return p instanceof DesiredEndpoint ? p : null;
}

function desired(pod: Pod, node: Node | undefined, service: Service, scope: Scope, family: SliceAddressType, addresses: readonly string[]): DesiredEndpoint {
  const endpoint = endpointForPod(pod, node, service, addresses);
  const d = new DesiredEndpoint(endpointIdentity(endpoint), endpoint, family, scope);
  PodEndpoint.setLink(endpoint, d);
  return d;
}

/**
 * Makes `rec` hold the pod's endpoints for this Service and node, recomputing only when the
 * node object, scope or publishNotReadyAddresses differ from what they were computed for (the
 * scope pins the Service's namespace/name, which the hostname rule depends on).
 */
export function refreshEndpoints(rec: PodRecord, pod: Pod, node: Node | undefined, service: Service, scope: Scope): void {
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  if (rec.scope === scope && rec.node === node && rec.publishNotReady === publishNotReady) return;
  rec.scope = scope;
  rec.node = node;
  rec.publishNotReady = publishNotReady;
  rec.IPv4 = null;
  rec.IPv6 = null;
  const ips = pod.status?.podIPs ?? [];
  if (ips.length === 1) {
    // The common single-address pod: no per-family arrays to build.
    const fam = canonicalPodIP(ips[0]?.ip ?? '');
    if (fam !== null) rec[fam.family] = desired(pod, node, service, scope, fam.family, [fam.text]);
    return;
  }
  const addrs = podAddressesByFamily(pod);
  if (addrs.IPv4.length > 0) rec.IPv4 = desired(pod, node, service, scope, 'IPv4', addrs.IPv4);
  if (addrs.IPv6.length > 0) rec.IPv6 = desired(pod, node, service, scope, 'IPv6', addrs.IPv6);
}

/** The pod's endpoints per family for this Service and node (a fresh record). */
export function podEndpoints(pod: Pod, node: Node | undefined, service: Service, scope: Scope = scopeOf(service)): PodEndpoints {
  const rec = newPodRecord(pod);
  refreshEndpoints(rec, pod, node, service, scope);
  return rec;
}

export interface SliceKeys {
  readonly portKey: string;
  /** endpointIdentity of each endpoint, index-aligned with `slice.endpoints`. */
  readonly identities: readonly string[];
  /** The DesiredEndpoint that produced each endpoint object, when it was produced here. */
  readonly producers: readonly (DesiredEndpoint | null)[];
}

const bySlice = new WeakMap<EndpointSlice, SliceKeys>();

/** Port-map key, endpoint identities and producers of an existing slice (memoised). */
export function sliceKeys(slice: EndpointSlice): SliceKeys {
  let hit = bySlice.get(slice);
  if (hit === undefined) {
    const prods = slice.endpoints.map(producerOf);
    hit = {
      portKey: portMapKey(slice.ports),
      identities: slice.endpoints.map((e, i) => prods[i]?.key ?? endpointIdentity(e)),
      producers: prods,
    };
    bySlice.set(slice, hit);
  }
  return hit;
}
