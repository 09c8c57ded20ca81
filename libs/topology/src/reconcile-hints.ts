// The hints step of one reconcile (upstream: the hints part of `reconcileByAddressType`):
// picks the path for the service's mode and returns the plan with hints set or cleared.

import type { AddressType, EndpointSlice, KubeEvent, Service, SlicePlan } from '@slicemesh/model';
import { addAutoHints } from './auto-hints.ts';
import type { HintsDecision } from './decision.ts';
import { MSG_HINTS_DISABLED, hintsDisabledEvent } from './events.ts';
import { plural } from './explain-format.ts';
import { hintsMode } from './hints-mode.ts';
import type { HintsWork } from './hints-work.ts';
import { newHintsWork, stripAllHints } from './hints-work.ts';
import type { TopologyCache } from './topology-cache.ts';
import { applyTrafficDistribution, trafficHintsNote } from './traffic-distribution.ts';

export interface ReconcileHintsInput {
  readonly service: Service;
  readonly addressType: AddressType;
  /** The slicing plan for this service (before finalize: creates may have no name). */
  readonly plan: SlicePlan;
  readonly cache: TopologyCache;
  /** The PreferSameTrafficDistribution feature gate; default true (GA). */
  readonly preferSameTrafficDistribution?: boolean;
}

export interface ReconcileHintsOutput {
  readonly plan: SlicePlan;
  readonly decision: HintsDecision;
}

/** `ns/name`, the key upstream uses for a service in the topology cache. */
export function serviceKey(service: Service): string {
  return `${service.metadata.namespace ?? ''}/${service.metadata.name}`;
}

/**
 * Computes hints for one service and ONE address type:
 * - `Auto` (annotation path, C.3): CPU-proportional hints via `cache`, with events;
 * - `PreferClose`/`PreferSameZone`/`PreferSameNode` (C.5): hints where each endpoint runs;
 * - `None` (C.2.3): every hint stripped.
 * Leaving the annotation path forgets the cached counts and, if the service had
 * cache-populated hints, records Warning "Topology Aware Hints has been disabled".
 *
 * Returns a new plan: `create` in the same order, `update` = the plan's updates followed by
 * unchanged slices that had to be rewritten (in their order), `unchanged` = the rest, `delete`
 * as given. Changed slices are new objects; the input plan is never mutated. Slices of another
 * address type pass through untouched and do not count. An empty plan yields an empty plan and
 * a decision explaining why nothing is hinted.
 */
export function reconcileHints(input: ReconcileHintsInput): ReconcileHintsOutput {
  const { plan, addressType } = input;
  const ours = (s: EndpointSlice): boolean => s.addressType === addressType;
  const work = newHintsWork(plan.create.filter(ours), plan.update.filter(ours), plan.unchanged.filter(ours));
  const decision = decideHints(work, input);
  return { plan: assemble(plan, work, ours), decision };
}

/** Runs the chosen path on `work` (in place) and returns the decision. */
export function decideHints(work: HintsWork, input: ReconcileHintsInput): HintsDecision {
  const { service, addressType, cache } = input;
  const key = serviceKey(service);
  const { mode, reason: modeReason } = hintsMode(service, { preferSameTrafficDistribution: input.preferSameTrafficDistribution ?? true });
  const base = { service: key, addressType, mode };

  if (mode === 'Auto') {
    const outcome = addAutoHints(work, key, addressType, cache);
    return { ...base, ...outcome, reason: `${modeReason}; ${outcome.reason}` };
  }

  // Not the annotation path: forget what the cache populated before (C.2.3).
  let event: KubeEvent | null = null;
  let leftAuto = '';
  if (cache.hasPopulatedHints(key)) {
    event = hintsDisabledEvent(MSG_HINTS_DISABLED, addressType);
    leftAuto = '; the CPU-proportional hints the annotation path had populated are withdrawn';
  }
  cache.removeHints(key, addressType);

  if (mode === 'None') {
    const strip = stripAllHints(work);
    const stripped =
      strip.clearedEndpoints > 0
        ? `; removed hints from ${plural(strip.clearedEndpoints, 'endpoint')}` +
          (strip.movedSlices > 0 ? ` (${plural(strip.movedSlices, 'unchanged slice')} rewritten)` : '')
        : '';
    return { ...base, enabled: false, event, reason: `${modeReason}${leftAuto}${stripped}` };
  }

  const result = applyTrafficDistribution(work, mode);
  return {
    ...base,
    // The mode is on whatever the endpoints offer: this path never refuses (C.5), and the
    // reason says how many endpoints got hints and why the others did not.
    enabled: true,
    event,
    reason: `${modeReason}${leftAuto}; ${trafficHintsNote(mode, result)}`,
  };
}

/** Puts the worked slices back into the plan shape, leaving other address types alone. */
function assemble(plan: SlicePlan, work: HintsWork, ours: (s: EndpointSlice) => boolean): SlicePlan {
  const created = work.create.map((d) => d.result());
  const updated = work.update.filter((d) => d.origin === 'update').map((d) => d.result());
  const moved = work.update.filter((d) => d.origin === 'unchanged').map((d) => d.result());
  const kept = new Set(work.unchanged);
  let c = 0;
  let u = 0;
  return {
    create: plan.create.map((s) => (ours(s) ? (created[c++] ?? s) : s)),
    update: [...plan.update.map((s) => (ours(s) ? (updated[u++] ?? s) : s)), ...moved],
    delete: plan.delete,
    unchanged: plan.unchanged.filter((s) => !ours(s) || kept.has(s)),
  };
}
