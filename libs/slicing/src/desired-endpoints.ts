// From pods to the desired endpoints of each (port group, address type) (A.2.4, A.3, A.5.4).

import type { Endpoint, EndpointSlicePort, Node, Pod, Service } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import type { DesiredSet } from './desired-set.ts';
import { MapDesiredSet, StampedDesiredSet } from './desired-set.ts';
import type { DesiredEndpoint, PodRecord } from './endpoint-cache.ts';
import { newPodRecord, refreshEndpoints, scopeOf } from './endpoint-cache.ts';
import { portMapKey, sortPorts } from './port-map-key.ts';
import { namespaceOf } from './selector.ts';
import { endpointPortsForPod, portsArePodIndependent } from './target-port.ts';

/** One port-mapping group (A.5.4): its sorted ports and desired endpoints per address type. */
export interface Group {
  readonly ports: readonly EndpointSlicePort[];
  readonly desired: Readonly<Record<SliceAddressType, DesiredSet>>;
}

export interface DesiredState {
  /** Every group seen, including groups whose pods were all skipped (as upstream), by port-map key. */
  readonly groups: ReadonlyMap<string, Group>;
  /** A.3.4: pods skipped because their node is unknown. */
  readonly errors: readonly string[];
}

/** `stamped` avoids building identity maps (fast); `reference` is the plain Map version. */
export type DesiredMode = 'stamped' | 'reference';

interface Draft {
  readonly index: number;
  readonly ports: readonly EndpointSlicePort[];
  readonly members: Record<SliceAddressType, DesiredEndpoint[]>;
}

let lastStamp = 0;

// How far ahead in the previous sync's pod list to look for the same pod object: covers a few
// pods inserted, removed or replaced between two syncs without losing alignment.
const LOOKAHEAD = 8;

/** Marks `d` as wanted in this sync; false when another endpoint already holds its identity. */
function stampIn(d: DesiredEndpoint | null, draft: Draft, stamp: number): boolean {
  if (d === null || d.mark === stamp) return true; // no address of that family / same pod object twice
  if (d.shadowed && d.scope.register(d)?.mark === stamp) return false;
  d.mark = stamp;
  d.group = draft.index;
  draft.members[d.family].push(d);
  return true;
}

/**
 * Walks the pods once: excluded pods (A.3.1, A.3.2) are skipped; a pod on an unknown node is
 * skipped with an error unless publishNotReadyAddresses (A.3.4), but still opens its port group
 * as upstream does. Two pods with the same identity: the later one wins.
 */
export function resolveDesired(service: Service, pods: readonly Pod[], nodes: ReadonlyMap<string, Node>, mode: DesiredMode = 'stamped'): DesiredState {
  const drafts = new Map<string, Draft>();
  const errors: string[] = [];
  const shared = portsArePodIndependent(service);
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  const svcName = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
  const stamp = ++lastStamp;
  const scope = scopeOf(service);
  const stampable = mode === 'stamped';
  let sharedDraft: Draft | undefined;
  const included: [Draft, DesiredEndpoint | null, DesiredEndpoint | null][] = [];

  const memo = scope.podMemo;
  const records: PodRecord[] = new Array<PodRecord>(pods.length);
  let j = 0; // aligned position in the previous sync's pods
  for (let i = 0; i < pods.length; i++) {
    const pod = pods[i] as Pod;
    let rec: PodRecord | undefined;
    if (memo !== null) {
      for (let k = j; k < j + LOOKAHEAD && k < memo.pods.length; k++) {
        if (memo.pods[k] === pod) {
          rec = memo.records[k];
          j = k + 1;
          break;
        }
      }
    }
    rec ??= newPodRecord(pod);
    records[i] = rec;
    if (!rec.included) continue;
    let draft = sharedDraft;
    if (draft === undefined) {
      if (rec.portsFor !== service.spec.ports) {
        const ports = endpointPortsForPod(service, pod);
        rec.portsFor = service.spec.ports;
        rec.ports = ports;
        rec.portKey = portMapKey(ports);
      }
      draft = drafts.get(rec.portKey);
      if (draft === undefined) {
        draft = { index: drafts.size, ports: sortPorts(rec.ports), members: { IPv4: [], IPv6: [] } };
        drafts.set(rec.portKey, draft);
      }
      if (shared) sharedDraft = draft;
    }
    const node = nodes.get(rec.nodeName);
    if (node === undefined && !publishNotReady) {
      errors.push(`skipping Pod ${pod.metadata.name} for Service ${svcName}: Node ${rec.nodeName} Not Found`);
      continue;
    }
    refreshEndpoints(rec, pod, node, service, scope);
    if (!stampable) {
      included.push([draft, rec.IPv4, rec.IPv6]);
      continue;
    }
    // Two different pods with one identity: only a Map keeps the later one, so redo the walk
    // the reference way.
    if (!stampIn(rec.IPv4, draft, stamp) || !stampIn(rec.IPv6, draft, stamp)) return resolveDesired(service, pods, nodes, 'reference');
  }
  // A copy: a caller may reuse and modify its array; pod objects themselves are immutable.
  scope.podMemo = { pods: pods.slice(), records };

  const groups = new Map<string, Group>();
  if (stampable) {
    let wanted = 0;
    for (const g of drafts.values()) wanted += g.members.IPv4.length + g.members.IPv6.length;
    scope.prune(stamp, wanted);
    for (const [key, g] of drafts) {
      groups.set(key, {
        ports: g.ports,
        desired: {
          IPv4: new StampedDesiredSet(scope, stamp, g.index, 'IPv4', g.members.IPv4),
          IPv6: new StampedDesiredSet(scope, stamp, g.index, 'IPv6', g.members.IPv6),
        },
      });
    }
    return { groups, errors };
  }
  const maps = new Map<Draft, Record<SliceAddressType, Map<string, Endpoint>>>();
  for (const g of drafts.values()) maps.set(g, { IPv4: new Map(), IPv6: new Map() });
  for (const [draft, v4, v6] of included) {
    const m = maps.get(draft);
    if (v4 !== null) m?.IPv4.set(v4.key, v4.endpoint);
    if (v6 !== null) m?.IPv6.set(v6.key, v6.endpoint);
  }
  for (const [key, g] of drafts) {
    const m = maps.get(g) ?? { IPv4: new Map(), IPv6: new Map() };
    groups.set(key, { ports: g.ports, desired: { IPv4: new MapDesiredSet(m.IPv4), IPv6: new MapDesiredSet(m.IPv6) } });
  }
  return { groups, errors };
}
