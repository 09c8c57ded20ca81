// Public API of the EndpointSlice mirroring reconciler (semantics section B).

export { shouldMirror } from './should-mirror.ts';
export { reconcileMirroring, MIN_MIRRORING_MAX_ENDPOINTS_PER_SUBSET, MAX_MIRRORING_MAX_ENDPOINTS_PER_SUBSET } from './reconcile-mirroring.ts';
export type { MirrorInput, MirrorResult } from './reconcile-mirroring.ts';
export { mirrorEndpoints, REASON_INVALID_IP, REASON_TOO_MANY_ADDRESSES } from './mirror-endpoints.ts';
export type { MirrorGroup, DesiredMirror } from './mirror-endpoints.ts';
export { repackSubsets } from './repack-subsets.ts';
export type { RepackedSubset } from './repack-subsets.ts';
export { mirroredLabels, mirroredAnnotations, endpointsOwnerReference } from './mirrored-slice.ts';
