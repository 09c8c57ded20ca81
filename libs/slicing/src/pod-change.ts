// Which Services a pod event concerns (A.12.2).

import type { Pod, Service } from '@slicemesh/model';
import { isPodReady } from './endpoint-from-pod.ts';
import { isSelectorless, namespaceOf, selectorMatches, serviceKey } from './selector.ts';

export interface PodEndpointChange {
  /** Deletion timestamp, readiness or podIPs changed. */
  readonly podChanged: boolean;
  /** Labels, hostname or subdomain changed (membership or hostname may differ). */
  readonly labelsChanged: boolean;
}

function sameLabels(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>> | undefined): boolean {
  const x = a ?? {};
  const y = b ?? {};
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => Object.hasOwn(y, k) && y[k] === x[k]);
}

/** What about the pod changed that endpoints depend on. Timestamps are compared by value. */
export function podEndpointChange(oldPod: Pod, newPod: Pod): PodEndpointChange {
  const labelsChanged =
    !sameLabels(oldPod.metadata.labels, newPod.metadata.labels) ||
    (oldPod.spec.hostname ?? '') !== (newPod.spec.hostname ?? '') ||
    (oldPod.spec.subdomain ?? '') !== (newPod.spec.subdomain ?? '');
  const a = oldPod.status?.podIPs ?? [];
  const b = newPod.status?.podIPs ?? [];
  const podChanged =
    oldPod.metadata.deletionTimestamp !== newPod.metadata.deletionTimestamp ||
    isPodReady(oldPod) !== isPodReady(newPod) ||
    a.length !== b.length ||
    a.some((ip, i) => ip.ip !== b[i]?.ip);
  return { podChanged, labelsChanged };
}

/** False when resourceVersion is unchanged (a resync) or nothing endpoint-relevant changed. */
export function podChangeRelevant(oldPod: Pod, newPod: Pod): boolean {
  if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return false;
  const c = podEndpointChange(oldPod, newPod);
  return c.podChanged || c.labelsChanged;
}

/** Keys (`ns/name`, sorted) of the Services with a selector that matches the pod. */
export function podServiceMemberships(services: readonly Service[], pod: Pod): string[] {
  const ns = namespaceOf(pod.metadata);
  const out: string[] = [];
  for (const s of services) {
    if (namespaceOf(s.metadata) !== ns || isSelectorless(s)) continue;
    if (selectorMatches(s.spec.selector ?? {}, pod.metadata.labels)) out.push(serviceKey(s));
  }
  return [...new Set(out)].sort();
}

/**
 * Services to queue for a pod update (A.12.2), sorted: none when irrelevant; the new
 * memberships when only the pod changed; when labels changed, the symmetric difference of old
 * and new memberships if nothing else changed, else their union.
 */
export function servicesToRequeueForPodUpdate(services: readonly Service[], oldPod: Pod, newPod: Pod): string[] {
  if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return [];
  const { podChanged, labelsChanged } = podEndpointChange(oldPod, newPod);
  if (!podChanged && !labelsChanged) return [];
  const now = podServiceMemberships(services, newPod);
  if (!labelsChanged) return now;
  const before = podServiceMemberships(services, oldPod);
  const a = new Set(now);
  const b = new Set(before);
  const out = podChanged ? [...a, ...before] : [...now.filter((k) => !b.has(k)), ...before.filter((k) => !a.has(k))];
  return [...new Set(out)].sort();
}
