// @slicemesh/topology: topology-aware hints (upstream topologycache + trafficdist) as pure code.

export * from './cpu-quantity.ts';
export * from './cpu-distribution.ts';
export * from './hints-mode.ts';
export * from './events.ts';
export * from './allocation.ts';
export * from './redistribute.ts';
export * from './topology-cache.ts';
export * from './traffic-distribution.ts';
export type { HintsDecision } from './decision.ts';
export { reconcileHints, serviceKey } from './reconcile-hints.ts';
export type { ReconcileHintsInput, ReconcileHintsOutput } from './reconcile-hints.ts';
export { SliceDraft, isReady } from './slice-draft.ts';
export * from './auto-reason.ts';
