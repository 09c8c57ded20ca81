// From pods to the desired endpoints of each (port group, address type) (A.2.4, A.3, A.5.4),
// the fast way: what was derived from a pod object is remembered (endpoint-cache.ts) and the
// desired sets are stamps on those memoised objects rather than Maps (desired-set.ts). The
// result always equals resolveReference's (fast-path-equivalence.test.ts checks this).

import type { Node, Pod, Service } from '@slicemesh/model';
import type { DesiredState, Group } from './desired-reference.ts';
import { resolveReference } from './desired-reference.ts';
import { StampedDesiredSet } from './desired-set.ts';
import type { DesiredEndpoint } from './endpoint-cache.ts';
import type { PodRecord } from './endpoint-cache.ts';
import { refreshEndpoints, scopeOf } from './endpoint-cache.ts';
import type { IdentityRegistry } from './identity-registry.ts';
import type { ListChanges } from './list-changes.ts';
import type { LastSync, SyncGroup } from './desired-incremental.ts';
import { resolveReplacements } from './desired-incremental.ts';
import { alignRecords } from './pod-memo.ts';
import type { PortLayout } from './port-layout.ts';
import { namespaceOf } from './selector.ts';

/** `stamped` is the memoised fast path; `reference` the plain Map version (desired-reference.ts). */
export type DesiredMode = 'stamped' | 'reference';

/** A port group of this sync; `counts`: how many endpoints of each family it wants. */
type Draft = SyncGroup;

/** The bookkeeping of one sync. */
interface Marks {
  readonly stamp: number;
  readonly registry: IdentityRegistry<DesiredEndpoint>;
  /** Wanted endpoints the registry does not hold yet. */
  readonly fresh: DesiredEndpoint[];
  wanted: number;
}

let lastStamp = 0;

/** Marks `d` as wanted in this sync, in `draft`'s group. */
function want(d: DesiredEndpoint | null, draft: Draft, marks: Marks): void {
  if (d === null || d.mark === marks.stamp) return; // no address of that family / same pod object twice
  d.mark = marks.stamp;
  d.group = draft.index;
  if (d.family === 'IPv4') draft.counts.IPv4++;
  else draft.counts.IPv6++;
  marks.wanted++;
  if (!marks.registry.holds(d)) marks.fresh.push(d);
}

/**
 * The desired state of the Service (see resolveReference for the rules, A.3). `reference`
 * computes it plainly; `stamped` reuses what earlier syncs derived from the same pod, node and
 * Service objects, and falls back to `reference` when two pods share an identity.
 */
export function resolveDesired(service: Service, pods: readonly Pod[], nodes: ReadonlyMap<string, Node>, mode: DesiredMode = 'stamped', podChanges?: ListChanges): DesiredState {
  if (mode === 'reference') return resolveReference(service, pods, nodes);
  const drafts = new Map<string, Draft>();
  const errors: string[] = [];
  const publishNotReady = service.spec.publishNotReadyAddresses === true;
  const svcName = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
  const scope = scopeOf(service);
  const { registry } = scope;
  const layouts = scope.layoutsFor(service);
  const shared = layouts.podIndependent;
  const last = scope.lastSync;
  scope.lastSync = null;
  const { records, replaced } = alignRecords(scope, pods, podChanges);
  if (replaced !== null && last !== null) {
    const done = resolveReplacements(service, pods, nodes, scope, last, records, replaced, ++lastStamp);
    if (done !== null) return done;
  }
  const marks: Marks = { stamp: ++lastStamp, registry, fresh: [], wanted: 0 };
  let draft: Draft | undefined;
  let draftLayout: PortLayout | undefined;

  for (let i = 0; i < pods.length; i++) {
    const pod = pods[i] as Pod;
    const rec = records[i] as PodRecord;
    if (!rec.included) continue;
    // Every included pod opens its group, even one skipped below (as upstream).
    if (draft === undefined || !shared) {
      const layout = rec.layoutIn(layouts, pod);
      if (layout !== draftLayout) {
        draftLayout = layout;
        draft = drafts.get(layout.key);
        if (draft === undefined) {
          draft = { index: drafts.size, ports: layout.sorted, counts: { IPv4: 0, IPv6: 0 } };
          drafts.set(layout.key, draft);
        }
      }
    }
    const node = rec.nodeSlot.lookup(nodes, marks.stamp);
    if (node === undefined && !publishNotReady) {
      errors.push(`skipping Pod ${pod.metadata.name} for Service ${svcName}: Node ${rec.nodeSlot.name} Not Found`);
      continue;
    }
    refreshEndpoints(rec, pod, node, service, scope);
    want(rec.IPv4, draft as Draft, marks);
    want(rec.IPv6, draft as Draft, marks);
  }

  // Two different pods with one identity: only a Map keeps the later one, so use the
  // reference. admit also sorts `fresh` into identity order.
  if (!registry.admit(marks.fresh, marks.stamp, marks.wanted)) return resolveReference(service, pods, nodes);
  const groups = new Map<string, Group>();
  for (const [key, g] of drafts) {
    groups.set(key, {
      ports: g.ports,
      desired: {
        IPv4: new StampedDesiredSet(registry, marks.stamp, g.index, 'IPv4', g.counts.IPv4, marks.fresh),
        IPv6: new StampedDesiredSet(registry, marks.stamp, g.index, 'IPv6', g.counts.IPv6, marks.fresh),
      },
    });
  }
  const sync: LastSync = { stamp: marks.stamp, service, nodes, groups: drafts, wanted: marks.wanted, errors, outputs: null };
  scope.lastSync = sync;
  return { groups, errors, sync };
}
