// A sync in which only some pods were replaced (a readiness flip, a new status), told by the
// pod list's changes feed: the endpoints the previous stamped sync marked stay marked, the
// replaced pods' old endpoints are unmarked and their new ones marked, and the slices that
// sync left holding none of the old endpoints are counted as placed instead of being matched
// endpoint by endpoint. A pod change in a 100k-endpoint Service then costs work in the changed
// pods and the ~1000 slices, not in the 100k endpoints. Anything else — another Service object,
// a node change, a pod moving between port groups or in or out of the endpoints, an identity
// another pod holds, a replaced pod on an unknown node — returns null and the caller syncs in
// full; the fast-path equivalence tests hold both to the reference.

import type { Endpoint, EndpointSlicePort, Node, Pod, Service } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { DesiredState, Group } from './desired-reference.ts';
import { StampedDesiredSet } from './desired-set.ts';
import type { DesiredEndpoint, PodRecord, Scope } from './endpoint-cache.ts';
import { refreshEndpoints } from './endpoint-cache.ts';
import type { ReplacedRecord } from './pod-memo.ts';

/** One port group of a stamped sync: its index, ports and how many endpoints of each family it wants. */
export interface SyncGroup {
  readonly index: number;
  readonly ports: readonly EndpointSlicePort[];
  readonly counts: Record<SliceAddressType, number>;
}

/** What a stamped sync without errors leaves in its scope for the next sync to build on. */
export interface LastSync {
  readonly stamp: number;
  readonly service: Service;
  readonly nodes: ReadonlyMap<string, Node>;
  /** By port-map key, in index order. */
  readonly groups: ReadonlyMap<string, SyncGroup>;
  readonly wanted: number;
  /** Its A.3.4 errors (pods on unknown nodes), in pod order: unchanged while those pods and the nodes are. */
  readonly errors: readonly string[];
  /** The endpoint arrays of the slices its plan placed that hold exactly its desired objects (Placement.exact); null until placed. */
  outputs: Set<readonly Endpoint[]> | null;
}

/** How many syncs took this path, and how many of those were redone in full (StaleSlicesError); for tests. */
export const replacementSyncs = { done: 0, redone: 0 };

interface Added {
  readonly d: DesiredEndpoint;
  readonly key: string;
}

/**
 * The desired state after `replaced` (positions whose pod object changed since `last`), or null
 * when this sync must be a full one. Nothing is changed before it is known to succeed, except
 * the new records' endpoints (caches). `takeStamp` is this sync's own stamp.
 */
export function resolveReplacements(
  service: Service,
  pods: readonly Pod[],
  nodes: ReadonlyMap<string, Node>,
  scope: Scope,
  last: LastSync,
  records: readonly PodRecord[],
  replaced: readonly ReplacedRecord[],
  takeStamp: number,
): DesiredState | null {
  const outputs = last.outputs;
  if (outputs === null || last.service !== service || last.nodes !== nodes || !scope.nodesUnchanged(nodes, last.stamp)) return null;
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  const layouts = scope.layoutsFor(service);
  const stamp = last.stamp;
  const removed: DesiredEndpoint[] = [];
  const added: Added[] = [];
  for (const { index, old } of replaced) {
    const rec = records[index] as PodRecord;
    const pod = pods[index] as Pod;
    if (rec.included !== old.included) return null;
    if (!rec.included) continue;
    // The same port group before and after: one group for all pods when the Service's target
    // ports are numbers; else the old record resolved its layout in the last sync.
    const layout = rec.layoutIn(layouts, pod);
    const oldKey = layouts.podIndependent ? layout.key : old.layoutsUsed === layouts ? old.layout?.key : undefined;
    if (oldKey !== layout.key || !last.groups.has(layout.key)) return null;
    const node = rec.nodeSlot.lookup(nodes, stamp);
    // An A.3.4 error, now or before: a full sync lists the errors in pod order.
    if (!publishNotReady && (node === undefined || old.nodeSlot.lookup(nodes, stamp) === undefined)) return null;
    for (const d of [old.IPv4, old.IPv6]) if (d !== null && d.mark === stamp) removed.push(d);
    refreshEndpoints(rec, pod, node, service, scope);
    for (const d of [rec.IPv4, rec.IPv6]) if (d !== null) added.push({ d, key: layout.key });
  }

  // An identity wanted twice needs Map semantics (a full sync falls back to the reference).
  const leaving = new Set(removed);
  const identities = new Set<string>();
  for (const { d } of added) {
    if (d.mark === stamp || identities.has(d.key)) return null;
    identities.add(d.key);
    const holder = scope.registry.find(d.key);
    if (holder !== undefined && holder !== d && holder.mark === stamp && !leaving.has(holder)) return null;
  }

  const groups = new Map<string, SyncGroup>();
  for (const [key, g] of last.groups) groups.set(key, { ...g, counts: { ...g.counts } });
  const byIndex = [...groups.values()];
  let wanted = last.wanted;
  for (const d of removed) {
    d.mark = 0;
    (byIndex[d.group] as SyncGroup).counts[d.family]--;
    wanted--;
  }
  const fresh: DesiredEndpoint[] = [];
  for (const { d, key } of added) {
    const g = groups.get(key) as SyncGroup;
    d.mark = stamp;
    d.group = g.index;
    g.counts[d.family]++;
    wanted++;
    if (!scope.registry.holds(d)) fresh.push(d);
  }
  scope.registry.admit(fresh, stamp, wanted); // sorts `fresh`; identities were checked above

  const skip = { clean: outputs, removed: removed.map((d) => d.endpoint) };
  const out = new Map<string, Group>();
  for (const [key, g] of groups) {
    out.set(key, {
      ports: g.ports,
      desired: {
        IPv4: new StampedDesiredSet(scope.registry, stamp, g.index, 'IPv4', g.counts.IPv4, fresh, takeStamp, skip),
        IPv6: new StampedDesiredSet(scope.registry, stamp, g.index, 'IPv6', g.counts.IPv6, fresh, takeStamp, skip),
      },
    });
  }
  const sync: LastSync = { stamp, service, nodes, groups, wanted, errors: last.errors, outputs: null };
  scope.lastSync = sync;
  replacementSyncs.done++;
  return { groups: out, errors: last.errors, sync };
}
