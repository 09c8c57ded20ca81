// The last-change trigger time of a Service's endpoints (A.10), kept per Service between syncs.

import type { Pod, Service } from '@slicemesh/model';
import type { Instant } from './rfc3339.ts';
import { compareInstants, formatRFC3339Nano, parseRFC3339 } from './rfc3339.ts';
import { namespaceOf } from './selector.ts';

interface ServiceState {
  readonly service: Instant | null;
  readonly pods: ReadonlyMap<string, Instant>;
}

function readyTransition(pod: Pod): Instant | null {
  const c = pod.status?.conditions?.find((x) => x.type === 'Ready');
  return parseRFC3339(c?.lastTransitionTime);
}

function after(a: Instant, b: Instant | null | undefined): boolean {
  return b == null || compareInstants(a, b) > 0;
}

/**
 * Remembers, per Service, the Service creationTimestamp and each pod's Ready transition time
 * seen at the previous sync. Pure state: no clock; time comes from the objects.
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceState>();

  /**
   * The trigger time to annotate this sync's writes with (RFC3339Nano, UTC), or null for none.
   * - First sync of a Service: its creationTimestamp (null if absent) (A.10.1).
   * - Later: the earliest of the pods' Ready lastTransitionTimes newer than last seen for that
   *   pod name, and the creationTimestamp if newer than last seen; null when nothing is newer
   *   (A.10.2). No pods and an unchanged Service: null.
   * Records the current times either way.
   */
  computeTriggerTime(service: Service, pods: readonly Pod[]): string | null {
    const key = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
    const prev = this.states.get(key);
    let min: Instant | null = null;
    const podTimes = new Map<string, Instant>();
    for (const pod of pods) {
      const t = readyTransition(pod);
      if (t === null) continue;
      podTimes.set(pod.metadata.name, t);
      if (after(t, prev?.pods.get(pod.metadata.name)) && (min === null || compareInstants(t, min) < 0)) min = t;
    }
    const created = parseRFC3339(service.metadata.creationTimestamp);
    if (created !== null && after(created, prev?.service) && (min === null || compareInstants(created, min) < 0)) min = created;
    this.states.set(key, { service: created, pods: podTimes });
    if (prev === undefined) return created === null ? null : formatRFC3339Nano(created);
    return min === null ? null : formatRFC3339Nano(min);
  }

  /** Forgets a Service (deleted or gone, A.1.3). */
  deleteService(namespace: string, name: string): void {
    this.states.delete(`${namespace}/${name}`);
  }

  /** Whether state is held for the Service (for tests and diagnostics). */
  has(namespace: string, name: string): boolean {
    return this.states.has(`${namespace}/${name}`);
  }
}
