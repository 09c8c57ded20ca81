// Metadata of mirrored slices (B.4) and the metadata half of the "leave it alone" test (B.3.2).

import type { Endpoint, Endpoints, EndpointSlice, EndpointSlicePort, IPFamily, OwnerReference } from '@slicemesh/model';
import {
  ANNOTATION_LAST_APPLIED,
  ANNOTATION_TRIGGER_TIME,
  DISCOVERY_API_VERSION,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MANAGED_BY_MIRRORING,
} from '@slicemesh/model';

type StringMap = Readonly<Record<string, string>>;

function without(m: StringMap | undefined, ...keys: string[]): Record<string, string> {
  const out: Record<string, string> = { ...m };
  for (const k of keys) delete out[k];
  return out;
}

/** Equality of string maps where a missing map equals an empty one. */
function sameMap(a: StringMap | undefined, b: StringMap | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => b !== undefined && Object.hasOwn(b, k) && b[k] === a?.[k]);
}

/** B.4.1: Endpoints labels, then service-name and managed-by overwrite. */
export function mirroredLabels(endpoints: Endpoints): Record<string, string> {
  return { ...endpoints.metadata.labels, [LABEL_SERVICE_NAME]: endpoints.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY_MIRRORING };
}

/** B.4.2: Endpoints annotations minus the trigger-time and last-applied ones (may be empty). */
export function mirroredAnnotations(endpoints: Endpoints): Record<string, string> {
  return without(endpoints.metadata.annotations, ANNOTATION_TRIGGER_TIME, ANNOTATION_LAST_APPLIED);
}

/** B.4.3: the controller reference to the Endpoints. */
export function endpointsOwnerReference(endpoints: Endpoints): OwnerReference {
  return { apiVersion: 'v1', kind: 'Endpoints', name: endpoints.metadata.name, uid: endpoints.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** A complete mirrored slice; `name` is the final name (creates also get `generateName`). */
export function newMirroredSlice(
  endpoints: Endpoints,
  addressType: IPFamily,
  ports: readonly EndpointSlicePort[],
  eps: readonly Endpoint[],
  name: string,
  generateName?: string,
): EndpointSlice {
  const annotations = mirroredAnnotations(endpoints);
  const ns = endpoints.metadata.namespace;
  return {
    apiVersion: DISCOVERY_API_VERSION,
    kind: 'EndpointSlice',
    metadata: {
      name,
      ...(generateName !== undefined ? { generateName } : {}),
      ...(ns !== undefined ? { namespace: ns } : {}),
      labels: mirroredLabels(endpoints),
      ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
      ownerReferences: [endpointsOwnerReference(endpoints)],
    },
    addressType,
    endpoints: eps,
    ports,
  };
}

/**
 * B.3.2, metadata part: true when the slice's labels (minus service-name and managed-by) equal
 * the Endpoints labels (minus the same keys, so an Endpoints carrying them cannot cause an update
 * on every sync), its annotations equal the mirrored annotations, and no ownerReference points
 * at a different Endpoints object. A slice with no ownerReferences passes the owner check.
 */
export function metadataMatches(slice: EndpointSlice, endpoints: Endpoints): boolean {
  const reserved = [LABEL_SERVICE_NAME, LABEL_MANAGED_BY];
  if (!sameMap(without(slice.metadata.labels, ...reserved), without(endpoints.metadata.labels, ...reserved))) return false;
  if (!sameMap(slice.metadata.annotations, mirroredAnnotations(endpoints))) return false;
  const uid = endpoints.metadata.uid ?? '';
  return !(slice.metadata.ownerReferences ?? []).some((r) => r.kind === 'Endpoints' && r.uid !== uid);
}
