// The shape that flows between the slicing reconciler, the hints logic and whoever applies the
// result (the CLI prints it, the slicer writes it to Postgres). A plan is data; applying it is
// somebody else's job.

import type { EndpointSlice } from './kube.ts';

/**
 * What one reconcile of one Service (or mirrored Endpoints) wants done.
 * - Before `finalize`, `create` entries carry `metadata.generateName` and an empty `name`.
 * - After `finalize` (recycling + deterministic naming) every entry has its final name.
 */
export interface SlicePlan {
  readonly create: readonly EndpointSlice[];
  readonly update: readonly EndpointSlice[];
  readonly delete: readonly EndpointSlice[];
  /** Existing slices left as they are (hints logic may still move them to `update`). */
  readonly unchanged: readonly EndpointSlice[];
}

/** An event the upstream controllers would record on the object (Warning/Normal + reason). */
export interface KubeEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}
