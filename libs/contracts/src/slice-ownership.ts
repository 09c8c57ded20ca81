// Which EndpointSlices are ours: the one rule the watcher (what it publishes to KUBE), the slicer
// (what it skips) and the hints service (what it may hint) agree on.
//
// Our slices are those whose `endpointslice.kubernetes.io/managed-by` label is one of the values
// our controllers write: the slicer's MANAGED_BY (upstream's endpointslice-controller.k8s.io by
// default) and the mirroring reconciler's endpointslicemirroring-controller.k8s.io. They reach
// the hints service on SLICES, straight from the slicer. Every other slice — another value, or
// no managed-by label at all (a hand-written slice) — is foreign: the watcher publishes it to
// KUBE, so that the agents program it as kube-proxy would (kube-proxy reads every slice with a
// service-name label, whatever its manager: D.2.9).

import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING, labelValueProblem } from '@slicemesh/model';

/** The managed-by values of our own slices by default: the slicer's default and mirroring's. */
export const DEFAULT_OWN_MANAGERS: readonly string[] = Object.freeze([MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING]);

/** The managed-by values our controllers write (see parseOwnManagers). */
export type OwnManagers = ReadonlySet<string>;

/**
 * true when a slice with these labels was written by one of our controllers: its managed-by
 * label is one of `own`. A slice without the label is not ours (its writer did not say who it is).
 *
 * ### Examples
 * ```ts
 * isOwnSlice({ 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' }, ownManagers()); // true
 * isOwnSlice({ 'endpointslice.kubernetes.io/managed-by': 'mcs-importer' }, ownManagers());                   // false
 * isOwnSlice(undefined, ownManagers());                                                                      // false
 * ```
 */
export function isOwnSlice(labels: Readonly<Record<string, string>> | undefined, own: OwnManagers): boolean {
  const by = labels?.[LABEL_MANAGED_BY];
  return by !== undefined && own.has(by);
}

/** The set of `values` (default DEFAULT_OWN_MANAGERS). */
export function ownManagers(values: readonly string[] = DEFAULT_OWN_MANAGERS): OwnManagers {
  return new Set(values);
}

/**
 * Parses a MANAGED_BY setting: comma-separated label values, blanks around them ignored, at
 * least one. Throws Error naming the bad value (an empty list, or a value that is not a valid
 * label value).
 *
 * ### Examples
 * ```ts
 * parseOwnManagers('endpointslice-controller.k8s.io, endpointslicemirroring-controller.k8s.io'); // both
 * ```
 */
export function parseOwnManagers(text: string): readonly string[] {
  const values = [...new Set(text.split(',').map((v) => v.trim()).filter((v) => v !== ''))];
  if (values.length === 0) throw new Error('must name at least one managed-by value');
  for (const v of values) {
    const problem = labelValueProblem(v);
    if (problem !== null) throw new Error(`${JSON.stringify(v)}: ${problem}`);
  }
  return values;
}

/**
 * The label selector of the slices that are not ours, for the API server to filter by:
 * `endpointslice.kubernetes.io/managed-by notin (<own, sorted>)`. `notin` also matches slices
 * without the label, as isOwnSlice counts them foreign. A watch with it reports a slice that
 * becomes ours as DELETED, and one that stops being ours as ADDED. Throws Error for an empty set.
 *
 * ### Examples
 * ```ts
 * foreignSliceSelector(ownManagers());
 * // 'endpointslice.kubernetes.io/managed-by notin (endpointslice-controller.k8s.io,endpointslicemirroring-controller.k8s.io)'
 * ```
 */
export function foreignSliceSelector(own: OwnManagers): string {
  if (own.size === 0) throw new Error('no managed-by values: every slice would be foreign');
  return `${LABEL_MANAGED_BY} notin (${[...own].sort().join(',')})`;
}
