// B.1: whether an Endpoints object is mirrored into EndpointSlices.

import type { Endpoints, Service } from '@slicemesh/model';
import { ANNOTATION_LEADER, LABEL_SKIP_MIRROR } from '@slicemesh/model';

/**
 * A Service without a selector. `{}` counts as none: the API server omits an empty selector,
 * so a Service read back from a cluster never carries one.
 */
export function hasNilSelector(service: Service): boolean {
  const s = service.spec.selector;
  return s == null || Object.keys(s).length === 0;
}

/**
 * B.1: true only if the Endpoints exists, its skip-mirror label is not exactly "true", it has no
 * leader-election annotation, and the same-named Service exists with a nil selector. The Service
 * type is not consulted (an ExternalName Service without selector is mirrored too).
 */
export function shouldMirror(endpoints: Endpoints | null, service: Service | null): boolean {
  if (!endpoints || !service) return false;
  if (endpoints.metadata.labels?.[LABEL_SKIP_MIRROR] === 'true') return false;
  if (endpoints.metadata.annotations?.[ANNOTATION_LEADER] !== undefined) return false;
  return hasNilSelector(service);
}
