// A whole cluster through the same composition the live services run: every key the projection
// knows is planned by planService (what the slicer writes), and, when asked, the slices of each
// Service with a selector get their hints by hintService (what the hints service publishes).
// This is what `slicemesh plan` prints; live and offline differ only in where state comes from.

import type { EndpointSlice, KubeEvent } from '@slicemesh/model';
import { TriggerTimeTracker, stampTriggerTime } from '@slicemesh/slicing';
import type { HintsDecision, TopologyCache } from '@slicemesh/topology';
import type { ClusterState } from './cluster-state.ts';
import { hintService } from './hint-service.ts';
import type { PlanMode, ReconcileSettings } from './plan-service.ts';
import { planService } from './plan-service.ts';
import { serviceView } from './service-view.ts';

export interface ClusterPlanOptions {
  readonly settings: ReconcileSettings;
  /** Hints for the slices of Services with a selector; none when absent. */
  readonly hints?: { readonly cache: TopologyCache; readonly preferSameTrafficDistribution: boolean };
}

/** What planning one key found besides its writes. */
export interface KeyNotes {
  /** `<namespace>/<name>`. */
  readonly key: string;
  readonly mode: PlanMode;
  /** A.3.4 problems (pods skipped). */
  readonly errors: readonly string[];
  /** Mirroring warnings (B.2.5, B.2.6). */
  readonly events: readonly KubeEvent[];
  /** Hints decisions, one per address type with slices. */
  readonly decisions: readonly HintsDecision[];
}

export interface ClusterPlan {
  readonly create: EndpointSlice[];
  readonly update: EndpointSlice[];
  readonly delete: EndpointSlice[];
  readonly unchanged: EndpointSlice[];
  /** Per key, in key order. */
  readonly notes: KeyNotes[];
}

/** Plans every key of `state` (state is only read). Lists are in key order, then name order. */
export function planCluster(state: ClusterState, opts: ClusterPlanOptions): ClusterPlan {
  const out: ClusterPlan = { create: [], update: [], delete: [], unchanged: [], notes: [] };
  for (const key of state.reconcilableKeys()) {
    const [namespace = '', name = ''] = [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)];
    const view = serviceView(state, namespace, name);
    // A one-shot run sees every Service for the first time: its trigger time is its
    // creationTimestamp (A.10.1).
    const tracker = new TriggerTimeTracker();
    let triggerTime: string | null = null;
    const planned = planService(view, { ...opts.settings, triggerTime: (svc, pods, changes) => (triggerTime = tracker.computeTriggerTime(svc, pods, changes)) });
    let { create, update } = planned.plan;
    let unchanged = planned.plan.unchanged;
    let decisions: readonly HintsDecision[] = [];
    if (opts.hints !== undefined && planned.mode === 'selector' && view.service !== undefined) {
      const written = [...create, ...update, ...unchanged];
      const hinted = hintService({ service: view.service, slices: written, cache: opts.hints.cache, preferSameTrafficDistribution: opts.hints.preferSameTrafficDistribution, managedBy: opts.settings.managedBy });
      const byInput = new Map(written.map((s, i) => [s, hinted.slices[i] as EndpointSlice]));
      const after = (s: EndpointSlice): EndpointSlice => byInput.get(s) ?? s;
      create = create.map(after);
      // A slice whose only change is its hints is an update, stamped like every write (A.10).
      update = [...update.map(after), ...unchanged.filter((s) => after(s) !== s).map((s) => stampTriggerTime(after(s), triggerTime))];
      unchanged = unchanged.filter((s) => after(s) === s);
      decisions = hinted.decisions;
    }
    const byName = (a: EndpointSlice, b: EndpointSlice): number => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0);
    out.create.push(...[...create].sort(byName));
    out.update.push(...[...update].sort(byName));
    out.delete.push(...[...planned.plan.delete].sort(byName));
    out.unchanged.push(...[...unchanged].sort(byName));
    out.notes.push({ key, mode: planned.mode, errors: planned.errors, events: planned.events, decisions });
  }
  return out;
}
