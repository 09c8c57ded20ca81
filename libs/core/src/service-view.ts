// The view one reconcile of `namespace/name` reads, taken from the projection.

import { isSelectorless } from '@slicemesh/slicing';
import type { ClusterState } from './cluster-state.ts';
import type { ServiceView } from './plan-service.ts';

/** Everything planService needs for one key, read from `state` (nothing is copied but lists). */
export function serviceView(state: ClusterState, namespace: string, name: string): ServiceView {
  const service = state.service(namespace, name);
  const slices = state.slicesOf(namespace, name);
  const own = new Set(slices.map((s) => s.metadata.name));
  // The Service's own pods (A.1.1) from the projection's index: the same objects in the same
  // order on every reconcile, which is what the slicing memo keys on.
  const wantsPods = service !== undefined && service.spec.type !== 'ExternalName' && !isSelectorless(service);
  return {
    namespace,
    name,
    service,
    endpoints: state.endpoints(namespace, name),
    pods: wantsPods ? state.selectedPods(service) : [],
    ...(wantsPods ? { podChanges: state.selectedPodChanges(service) } : {}),
    nodes: state.nodes(),
    slices,
    takenNames: state.sliceNamesIn(namespace).filter((n) => !own.has(n)),
  };
}
