// `log history ns/svc`: every change of one Service's slices, hints decisions and zone views,
// oldest first, with the KUBE range and the cluster events behind it. The log is folded once
// from its start; after each batch of reconciles (replayer.ts) that followed an event concerning
// the Service (one that made it dirty, or a node change, which can move hints) the Service's
// state is recomputed and compared. A change's range runs from the first such event since the
// previous change to the batch's last event.

import type { HintsDecision } from '@slicemesh/topology';
import type { TopologyCache } from '@slicemesh/topology';
import { describeChange } from './causes.ts';
import { foldTo } from './checkpoints.ts';
import type { NameDiff } from './compare.ts';
import { addressesOf, changedZones, decisionsDiffer, diffSlices } from './compare.ts';
import { DEFAULT_BATCH, Replayer } from './replayer.ts';
import type { ServiceState } from './service-state.ts';
import { serviceState, topologyCacheOf } from './service-state.ts';
import type { Progress } from './state-at.ts';
import type { LogPoint, LogSource } from './source.ts';

export interface HistoryEntry {
  /** The first event since the previous change that concerned the Service. */
  readonly from: LogPoint;
  /** The event after which the change was there. */
  readonly to: LogPoint;
  /** The cluster events behind it, in plain words, in log order. */
  readonly causes: readonly string[];
  /** Slices created, updated (endpoints, hints, ...) and deleted, by name. */
  readonly slices: NameDiff;
  /** Endpoint addresses that appeared in or left the slices. */
  readonly endpoints: { readonly added: readonly string[]; readonly removed: readonly string[] };
  readonly decisionsChanged: boolean;
  /** The decisions after the change. */
  readonly decisions: readonly HintsDecision[];
  /** Zones whose view changed (`_`: nodes without a zone). */
  readonly zoneViewsChanged: readonly string[];
}

export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
}

function entryOf(prev: ServiceState, cur: ServiceState, from: LogPoint, to: LogPoint, causes: readonly string[]): HistoryEntry | null {
  const slices = diffSlices(prev.slices, cur.slices);
  const decisionsChanged = decisionsDiffer(prev.decisions, cur.decisions);
  const zoneViewsChanged = changedZones(prev.zoneViews, cur.zoneViews);
  if (slices.created.length + slices.updated.length + slices.deleted.length === 0 && !decisionsChanged && zoneViewsChanged.length === 0) return null;
  const before = new Set(addressesOf(prev.slices));
  const after = new Set(addressesOf(cur.slices));
  return {
    from,
    to,
    causes,
    slices,
    endpoints: { added: [...after].filter((a) => !before.has(a)), removed: [...before].filter((a) => !after.has(a)) },
    decisionsChanged,
    decisions: cur.decisions,
    zoneViewsChanged,
  };
}

/** The history of `service` over the whole log (see the file comment); [] when nothing ever changed. */
export async function historyOf(src: LogSource, service: ServiceRef, onProgress?: Progress): Promise<readonly HistoryEntry[]> {
  const key = `${service.namespace}/${service.name}`;
  const [settings, snapshot, bounds, schedule] = await Promise.all([src.settings(), src.snapshot(), src.bounds(), src.reconciles()]);
  const rep = new Replayer(settings, snapshot, DEFAULT_BATCH, schedule);
  const nodes = () => [...rep.state.nodes().values()];
  let cache: TopologyCache = topologyCacheOf(nodes());
  let prev = serviceState(rep, service.namespace, service.name, cache, nodes());
  const out: HistoryEntry[] = [];
  // Causes since the last change; node causes are dropped when their batch changed nothing here.
  let pending: { readonly words: readonly string[]; readonly node: boolean }[] = [];
  let from: LogPoint | null = null;
  let relevant = false;
  let nodesChanged = false;
  await foldTo(src, rep, bounds?.last.seq ?? rep.seq, {
    ...(onProgress !== undefined ? { onProgress } : {}),
    checkpoints: false,
    onFolded: (f) => {
      if (!f.applied || f.change === undefined) return;
      const isNode = f.change.kind === 'Node';
      if (!isNode && !f.services.includes(key)) return;
      relevant = true;
      nodesChanged ||= isNode;
      from ??= { seq: f.event.seq, time: f.event.time };
      pending.push({ words: describeChange(f.before, f.change.type === 'Deleted.v1' ? undefined : f.change.object), node: isNode });
    },
    onFlush: (_writes, last) => {
      if (!relevant) return;
      relevant = false;
      if (nodesChanged) cache = topologyCacheOf(nodes());
      nodesChanged = false;
      const cur = serviceState(rep, service.namespace, service.name, cache, nodes());
      const entry = entryOf(prev, cur, from ?? last, last, pending.flatMap((p) => p.words));
      if (entry !== null) {
        out.push(entry);
        pending = [];
        from = null;
        prev = cur;
        return;
      }
      // Kept for the next change (a pod created, then Ready); node changes that moved nothing are not.
      pending = pending.filter((p) => !p.node);
      if (pending.length === 0) from = null;
    },
  });
  return out;
}
