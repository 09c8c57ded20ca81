// Endpoint identity and the "needs update" test (A.6).

import type { Endpoint, ObjectReference } from '@slicemesh/model';

/**
 * Identity of an endpoint as a plain string: sorted addresses, hostname and targetRef
 * namespace/name (A.6.1). Conditions, zone, nodeName and uid are not part of it. Addresses are
 * compared as stored (no re-canonicalisation), as upstream hashes them.
 */
export function endpointIdentity(ep: Endpoint): string {
  const a = ep.addresses;
  const addrs = a.length === 1 ? (a[0] ?? '') : [...a].sort().join('\u0000');
  // join builds one flat string; a template literal builds a chain of rope pieces that every
  // later comparison has to flatten first (a full reconcile sorts 100k identities).
  return [ep.targetRef?.namespace ?? '', ep.targetRef?.name ?? '', ep.hostname ?? '', addrs].join('\u0001');
}

function refChanged(a: ObjectReference | undefined, b: ObjectReference | undefined): boolean {
  if (a === undefined || b === undefined) return a !== b;
  return (
    (a.kind ?? '') !== (b.kind ?? '') ||
    (a.namespace ?? '') !== (b.namespace ?? '') ||
    (a.name ?? '') !== (b.name ?? '') ||
    (a.uid ?? '') !== (b.uid ?? '')
  );
}

/**
 * A.6.2: true when an existing endpoint differs from the desired one (same identity) in
 * nodeName, zone, ready, serving, terminating or targetRef (resourceVersion ignored). An absent
 * field differs from any present value. Hints are not compared.
 */
export function endpointNeedsUpdate(existing: Endpoint, desired: Endpoint): boolean {
  return (
    existing.nodeName !== desired.nodeName ||
    existing.zone !== desired.zone ||
    existing.conditions.ready !== desired.conditions.ready ||
    existing.conditions.serving !== desired.conditions.serving ||
    existing.conditions.terminating !== desired.conditions.terminating ||
    refChanged(existing.targetRef, desired.targetRef)
  );
}
