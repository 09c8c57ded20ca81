// Memo of per-pod endpoints and per-slice keys. A Service with 100k pods is re-planned after
// every pod change; recomputing 100k endpoints, identity strings and port lists, or building
// 100k-entry maps, would dominate. Inputs are immutable by contract, so a pod object listed
// again (with the same node object and the same Service fields the endpoint depends on)
// yields the very same DesiredEndpoint again. Everything kept per pod survives between syncs
// (and so costs garbage-collector time), hence one record per pod and shared port layouts,
// node slots and condition objects. The memo never changes a result, only how fast it is
// produced (desired-endpoints.ts, desired-set.ts; checked against desired-reference.ts).

import type { Endpoint, EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { LastSync } from './desired-incremental.ts';
import type { ListMark } from './list-changes.ts';
import { endpointIdentity } from './endpoint-identity.ts';
import { PodEndpoint, canonicalPodIP, endpointForPod, podAddressesByFamily, shouldPodBeInEndpoints } from './endpoint-from-pod.ts';
import type { RegistryEntry } from './identity-registry.ts';
import { IdentityRegistry } from './identity-registry.ts';
import { isCanonicalV4 } from './ipv4-text.ts';
import { portMapKey } from './port-map-key.ts';
import type { PortLayout } from './port-layout.ts';
import { PortLayouts } from './port-layout.ts';
import { namespaceOf } from './selector.ts';

/**
 * The endpoint one pod contributes to one address type, with its identity (A.6.1) and
 * per-sync scratch fields (only meaningful while `mark` equals the current sync's stamp).
 */
export class DesiredEndpoint implements RegistryEntry {
  readonly key: string;
  readonly endpoint: Endpoint;
  readonly family: SliceAddressType;
  /** Stamp of the last sync that found this endpoint desired. */
  mark = 0;
  /** Port group index within that sync. */
  group = -1;
  /** Stamp of the last sync that placed it into an existing slice. */
  taken = 0;
  /** See IdentityRegistry: whether its scope's registry holds it for `key`. */
  epoch = 0;

  constructor(
    key: string,
    endpoint: Endpoint,
    family: SliceAddressType,
  ) {
    this.key = key;
    this.endpoint = endpoint;
    this.family = family;
  }
}

/**
 * One node name as referenced by a scope's pods, shared by those pods: the node object is
 * looked up once per sync and name rather than once per pod.
 */
export class NodeSlot {
  readonly name: string;
  private stamp = 0;
  private node: Node | undefined = undefined;
  constructor(name: string) {
    this.name = name;
  }

  /** Whether the node this slot found in sync `stamp` is still `nodes`' (true when it was not looked up then). */
  sameAs(nodes: ReadonlyMap<string, Node>, stamp: number): boolean {
    return this.stamp !== stamp || nodes.get(this.name) === this.node;
  }

  /** nodes.get(name), looked up at most once per sync `stamp`. */
  lookup(nodes: ReadonlyMap<string, Node>, stamp: number): Node | undefined {
    if (this.stamp !== stamp) {
      this.node = nodes.get(this.name);
      this.stamp = stamp;
    }
    return this.node;
  }
}

// Bounds the slots of a scope (nodes come and go); dropping them only loses sharing.
const MAX_NODE_SLOTS = 16384;

/**
 * What is remembered per Service (namespace/name): the identity registry, the previous sync's
 * pods with what was derived from each, the port layouts and the node slots. Whole scopes are evicted
 * least-recently-used, so memory stays proportional to the live endpoints of recently
 * planned Services.
 */
export class Scope {
  readonly name: string;
  readonly registry = new IdentityRegistry<DesiredEndpoint>();
  /**
   * The previous sync's pods and what was derived from each (position-aligned; see pod-memo.ts);
   * `mark`: the list and version `pods` copies, when the caller gave a changes feed.
   */
  podMemo: { readonly pods: Pod[]; readonly records: PodRecord[]; mark: ListMark | null } | null = null;
  /** What the last stamped sync left for a sync of replaced pods only (desired-incremental.ts). */
  lastSync: LastSync | null = null;
  private layouts: PortLayouts | null = null;
  private readonly nodeSlots = new Map<string, NodeSlot>();
  constructor(name: string) {
    this.name = name;
  }

  /** The shared slot of a node name. */
  nodeSlot(name: string): NodeSlot {
    let slot = this.nodeSlots.get(name);
    if (slot === undefined) {
      if (this.nodeSlots.size >= MAX_NODE_SLOTS) this.nodeSlots.clear();
      slot = new NodeSlot(name);
      this.nodeSlots.set(name, slot);
    }
    return slot;
  }

  /** The port layouts for the Service's current `spec.ports` (kept while that object is). */
  layoutsFor(service: Service): PortLayouts {
    if (this.layouts === null || this.layouts.ports !== service.spec.ports) this.layouts = new PortLayouts(service);
    return this.layouts;
  }

  /** Whether every node the sync `stamp` looked up is still the same object in `nodes`. */
  nodesUnchanged(nodes: ReadonlyMap<string, Node>, stamp: number): boolean {
    for (const slot of this.nodeSlots.values()) if (!slot.sameAs(nodes, stamp)) return false;
    return true;
  }

  /** Forgets everything (it is rebuilt when next needed). */
  clear(): void {
    this.registry.clear();
    this.podMemo = null;
    this.lastSync = null;
    this.layouts = null;
    this.nodeSlots.clear();
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
 * desired-endpoints.ts) and reused while the same object is listed again. Everything here
 * survives between syncs, so it is one object per pod (plus the endpoints), sharing the port
 * layout with the other pods.
 */
export class PodRecord implements PodEndpoints {
  /** A.3.1/A.3.2 (depends on the pod only). */
  readonly included: boolean;
  /** Its `spec.nodeName` ('' when unset). */
  readonly nodeSlot: NodeSlot;
  /** The layouts `layout` was resolved with (null: not yet). */
  layoutsUsed: PortLayouts | null = null;
  layout: PortLayout | null = null;
  node: Node | undefined = undefined;
  /** Null until the endpoints were computed. */
  scope: Scope | null = null;
  publishNotReady = false;
  IPv4: DesiredEndpoint | null = null;
  IPv6: DesiredEndpoint | null = null;

  constructor(pod: Pod, scope: Scope) {
    this.included = shouldPodBeInEndpoints(pod);
    this.nodeSlot = scope.nodeSlot(pod.spec.nodeName ?? '');
  }

  /** The pod's port layout under `layouts` (A.5.1), resolved once per `spec.ports` object. */
  layoutIn(layouts: PortLayouts, pod: Pod): PortLayout {
    if (this.layoutsUsed !== layouts || this.layout === null) {
      this.layout = layouts.layoutFor(pod);
      this.layoutsUsed = layouts;
    }
    return this.layout;
  }
}

// Endpoints produced here carry a private link to their DesiredEndpoint: much cheaper than a
// WeakMap lookup, and invisible to copies, JSON and equality.
function producerOf(ep: Endpoint): DesiredEndpoint | null {
  const p = PodEndpoint.linkOf(ep);
  return p instanceof DesiredEndpoint ? p : null;
}

function desired(pod: Pod, node: Node | undefined, service: Service, family: SliceAddressType, addresses: readonly string[]): DesiredEndpoint {
  const endpoint = endpointForPod(pod, node, service, addresses);
  const d = new DesiredEndpoint(endpointIdentity(endpoint), endpoint, family);
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
    // The common single-address pod: no per-family arrays to build, and for a canonical
    // IPv4 text no parse result either.
    const ip = ips[0]?.ip ?? '';
    if (isCanonicalV4(ip)) {
      rec.IPv4 = desired(pod, node, service, 'IPv4', [ip]);
      return;
    }
    const fam = canonicalPodIP(ip);
    if (fam !== null) rec[fam.family] = desired(pod, node, service, fam.family, [fam.text]);
    return;
  }
  const addrs = podAddressesByFamily(pod);
  if (addrs.IPv4.length > 0) rec.IPv4 = desired(pod, node, service, 'IPv4', addrs.IPv4);
  if (addrs.IPv6.length > 0) rec.IPv6 = desired(pod, node, service, 'IPv6', addrs.IPv6);
}

/** The pod's endpoints per family for this Service and node (a fresh record). */
export function podEndpoints(pod: Pod, node: Node | undefined, service: Service, scope: Scope = scopeOf(service)): PodEndpoints {
  const rec = new PodRecord(pod, scope);
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
