// @slicemesh/slicing: the EndpointSlice reconciler (section A) and mirroring (section B) as
// pure functions.
export * from './slice-name.ts';
export * from './mirroring/index.ts';
export * from './address-types.ts';
export * from './selector.ts';
export * from './target-port.ts';
export * from './port-map-key.ts';
export * from './endpoint-from-pod.ts';
export * from './endpoint-identity.ts';
export * from './slice-metadata.ts';
export * from './placeholder.ts';
export { placeEndpoints } from './placement.ts';
export type { Placement, PlacementInput, SliceRewrite } from './placement.ts';
export { EMPTY_PLAN, checkMaxEndpointsPerSlice, planSlices } from './plan-slices.ts';
export type { PlanSlicesInput, PlanSlicesResult } from './plan-slices.ts';
export * from './finalize.ts';
export { forgetServiceMemo } from './endpoint-cache.ts';
export * from './rfc3339.ts';
export * from './trigger-time.ts';
export * from './pod-change.ts';
export * from './list-changes.ts';
