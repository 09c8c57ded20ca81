// Which Services an object change makes dirty (A.12, B.5). Events only mark keys; the
// reconcile re-reads everything, so over-marking costs a no-op reconcile and under-marking
// would lose a change: when in doubt, mark.

import type { Node, Pod, Service } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import { isSelectorless, podServiceMemberships, servicesToRequeueForPodUpdate } from '@slicemesh/slicing';

/** `<namespace>/<name>`: namespaces are DNS labels, so the first '/' separates. */
export function serviceKeyString(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Inverse of serviceKeyString. */
export function parseServiceKeyString(key: string): { readonly namespace: string; readonly name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/**
 * A.12.2 for one stored pod change. `before` is the live pod before the write (undefined when
 * new or previously deleted), `after` the live pod after it (undefined for a delete).
 * - add: the Services whose selector matches the new pod;
 * - delete: those matching the old pod;
 * - update: servicesToRequeueForPodUpdate (none when nothing endpoint-relevant changed; the
 *   symmetric difference of memberships when only labels changed).
 * Sorted keys (`ns/name`); [] when neither side is given.
 */
export function servicesForPodChange(services: readonly Service[], before: Pod | undefined, after: Pod | undefined): string[] {
  if (before !== undefined && after !== undefined) return servicesToRequeueForPodUpdate(services, before, after);
  const pod = after ?? before;
  return pod === undefined ? [] : podServiceMemberships(services, pod);
}

/**
 * Whether a node change can change any EndpointSlice: only a node appearing or disappearing
 * (pods on unknown nodes are skipped, A.3.4) or a change of its zone label (endpoint zone,
 * A.4). Ready status and capacity only matter to hints, which recompute them on their own.
 */
export function nodeChangeRelevant(before: Node | undefined, after: Node | undefined): boolean {
  if ((before === undefined) !== (after === undefined)) return true;
  return before?.metadata.labels?.[LABEL_ZONE] !== after?.metadata.labels?.[LABEL_ZONE];
}

/** Services (sorted keys) whose selector matches any of `pods`; [] for no pods. */
export function servicesSelectingPods(services: readonly Service[], pods: readonly Pod[]): string[] {
  const out = new Set<string>();
  for (const pod of pods) for (const k of podServiceMemberships(services, pod)) out.add(k);
  return [...out].sort();
}

/**
 * B.5: an Endpoints change matters to the same-named Service only when that Service exists
 * without a selector (it is mirrored). A missing Service or one with a selector has no mirrored
 * slices to keep: its own Service events already cleaned them up.
 */
export function endpointsConcernService(service: Service | undefined): boolean {
  return service !== undefined && isSelectorless(service);
}
