// The placeholder slice a selector Service keeps when it has no endpoints (A.7.4).

import type { EndpointSlice, OwnerReference, Service } from '@slicemesh/model';
import type { SliceAddressType } from './address-types.ts';
import { newSlice } from './slice-metadata.ts';

/** An empty slice (no endpoints, `ports: []`) with the normal labels and ownerReference. */
export function placeholderSlice(service: Service, addressType: SliceAddressType, managedBy: string): EndpointSlice {
  return newSlice({ service, addressType, ports: [], endpoints: [], managedBy });
}

function sameLabels(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  return kx.every((k) => Object.hasOwn(y, k) && y[k] === x[k]);
}

// The July 2026 upstream compares whole ownerReferences (every field, absent != false);
// PR 141593 later narrowed this to uids only.
function sameOwnerRefs(a: readonly OwnerReference[] | undefined, b: readonly OwnerReference[] | undefined): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return x.every((o, i) => {
    const p = y[i];
    return (
      p !== undefined &&
      o.apiVersion === p.apiVersion &&
      o.kind === p.kind &&
      o.name === p.name &&
      o.uid === p.uid &&
      o.controller === p.controller &&
      o.blockOwnerDeletion === p.blockOwnerDeletion
    );
  });
}

/**
 * True when `existing` already is `placeholder`: same namespace, full label set,
 * ownerReferences, addressType, no ports and no endpoints. Names, annotations and timestamps
 * are ignored.
 */
export function isSamePlaceholder(existing: EndpointSlice, placeholder: EndpointSlice): boolean {
  return (
    (existing.metadata.namespace ?? 'default') === (placeholder.metadata.namespace ?? 'default') &&
    sameLabels(existing.metadata.labels, placeholder.metadata.labels) &&
    sameOwnerRefs(existing.metadata.ownerReferences, placeholder.metadata.ownerReferences) &&
    existing.addressType === placeholder.addressType &&
    (existing.ports ?? []).length === 0 &&
    (existing.endpoints ?? []).length === 0
  );
}
