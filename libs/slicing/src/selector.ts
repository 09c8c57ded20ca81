// Which pods a Service selects (A.1.1, A.1.2).

import type { ObjectMeta, Pod, Service } from '@slicemesh/model';

/** The namespace of an object; absent means `default`, as kubectl assumes. */
export function namespaceOf(meta: ObjectMeta): string {
  return meta.namespace ?? 'default';
}

/** `<namespace>/<name>`, the key the controllers queue Services under. */
export function serviceKey(service: Service): string {
  return `${namespaceOf(service.metadata)}/${service.metadata.name}`;
}

/**
 * A Service without a usable selector gets no EndpointSlices from this controller (A.1.2).
 * An empty selector counts as none: the API server stores `{}` as nil, so upstream never
 * sees the difference.
 */
export function isSelectorless(service: Service): boolean {
  const sel = service.spec.selector;
  return sel == null || Object.keys(sel).length === 0;
}

/** Every selector pair is present in `labels` (equality-based selector). */
export function selectorMatches(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const k in selector) {
    if (labels?.[k] !== selector[k]) return false;
  }
  return true;
}

/** Pods of the Service's namespace matching `spec.selector`, in input order; none when selectorless. */
export function selectPods(service: Service, pods: readonly Pod[]): Pod[] {
  if (isSelectorless(service)) return [];
  const ns = namespaceOf(service.metadata);
  const sel = service.spec.selector ?? {};
  return pods.filter((p) => namespaceOf(p.metadata) === ns && selectorMatches(sel, p.metadata.labels));
}
