// Endpoint identity and the "needs update" test used to decide whether a mirrored slice already
// holds the desired endpoints (A.6, which the mirroring reconciler shares).

import type { Endpoint, ObjectReference } from '@slicemesh/model';

/** Identity: sorted addresses + hostname + targetRef namespace/name (A.6.1). */
export function endpointKey(ep: Endpoint): string {
  return JSON.stringify([[...ep.addresses].sort(), ep.hostname ?? '', ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '']);
}

function sameRef(a: ObjectReference | undefined, b: ObjectReference | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  // Every field counts except resourceVersion (it changes without the reference changing).
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  keys.delete('resourceVersion');
  for (const k of keys) {
    if ((a as Record<string, unknown>)[k] !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}

/**
 * True when two endpoints with the same identity need no write: nodeName, zone, the three
 * conditions and targetRef (ignoring resourceVersion) are equal. Hints are not compared (A.6.2).
 */
export function endpointsEqualBeyondKey(a: Endpoint, b: Endpoint): boolean {
  return (
    a.nodeName === b.nodeName &&
    a.zone === b.zone &&
    a.conditions.ready === b.conditions.ready &&
    a.conditions.serving === b.conditions.serving &&
    a.conditions.terminating === b.conditions.terminating &&
    sameRef(a.targetRef, b.targetRef)
  );
}

/**
 * True when `existing` holds exactly `desired` (no endpoint to add, remove or change), in any
 * order. Two empty lists are equal.
 */
export function sameEndpoints(existing: readonly Endpoint[], desired: readonly Endpoint[]): boolean {
  if (existing.length !== desired.length) return false;
  const want = new Map(desired.map((ep) => [endpointKey(ep), ep]));
  if (want.size !== desired.length) return false;
  for (const ep of existing) {
    const k = endpointKey(ep);
    const d = want.get(k);
    if (!d || !endpointsEqualBeyondKey(d, ep)) return false;
    want.delete(k); // a duplicate in `existing` must not match twice
  }
  return true;
}
