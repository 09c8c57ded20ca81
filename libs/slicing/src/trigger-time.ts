// The last-change trigger time of a Service's endpoints (A.10), kept per Service between syncs.

import type { Pod, Service } from '@slicemesh/model';
import type { ListChanges, ListMark } from './list-changes.ts';
import { markOf, patchReplaced, replacedSinceMark } from './list-changes.ts';
import type { Instant } from './rfc3339.ts';
import { compareInstants, formatRFC3339Nano, parseRFC3339 } from './rfc3339.ts';
import { namespaceOf } from './selector.ts';

interface ServiceState {
  service: Instant | null;
  /** Ready transition time per pod name at the last sync (null: the pod had none). */
  readonly times: Map<string, Instant | null>;
  /** The pods of the last sync (a copy). */
  last: Pod[];
  /** Whether `last` is sorted by name (then the next sync can walk both lists together). */
  sorted: boolean;
  /** The list `last` copies and its version, when the caller gave a changes feed. */
  mark: ListMark | null;
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
  computeTriggerTime(service: Service, pods: readonly Pod[], changes?: ListChanges): string | null {
    const key = `${namespaceOf(service.metadata)}/${service.metadata.name}`;
    const prev = this.states.get(key);
    const state: ServiceState = prev ?? { service: null, times: new Map(), last: [], sorted: true, mark: null };
    let min: Instant | null = null;
    const examine = (pod: Pod): void => {
      const t = readyTransition(pod);
      if (t !== null && prev !== undefined && after(t, state.times.get(pod.metadata.name)) && (min === null || compareInstants(t, min) < 0)) min = t;
      state.times.set(pod.metadata.name, t);
    };
    const replaced = replacedSinceMark(pods, changes, state.mark);
    if (replaced !== null && state.last.length === pods.length) {
      // Only these positions can hold another pod object than the last sync's.
      patchReplaced(state.last, pods, replaced, (i) => examine(pods[i] as Pod));
    } else {
      if (!(state.sorted && mergeChanges(state, pods, examine))) {
        // Not sorted by name (now or last time): compare every pod by name instead.
        const names = new Set<string>();
        for (const pod of pods) {
          names.add(pod.metadata.name);
          examine(pod);
        }
        for (const name of state.times.keys()) if (!names.has(name)) state.times.delete(name);
        state.sorted = pods.every((p, k) => k === 0 || (pods[k - 1] as Pod).metadata.name < p.metadata.name);
      }
      state.last = pods.slice();
    }
    state.mark = markOf(pods, changes);
    const created = parseRFC3339(service.metadata.creationTimestamp);
    if (created !== null && after(created, prev?.service) && (min === null || compareInstants(created, min) < 0)) min = created;
    state.service = created;
    this.states.set(key, state);
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

/**
 * Walks the last sync's pods and `pods` together (both sorted by name): an unchanged pod object
 * costs one identity check, so a pod change in a 100k-pod Service parses one time, not 100k.
 * Changed and new pods go to `examine`; pods no longer listed are forgotten (a pod of that name
 * later counts as new). Returns false, having changed nothing, when `pods` is not sorted by name
 * (checked around every pod that differs; runs of unchanged pods keep the last sync's order).
 */
function mergeChanges(state: ServiceState, pods: readonly Pod[], examine: (pod: Pod) => void): boolean {
  const old = state.last;
  const changed: Pod[] = [];
  const removed: string[] = [];
  const ordered = (k: number): boolean => k <= 0 || k >= pods.length || (pods[k - 1] as Pod).metadata.name < (pods[k] as Pod).metadata.name;
  let i = 0;
  let j = 0;
  while (i < pods.length || j < old.length) {
    const a = pods[i];
    const b = old[j];
    if (a !== undefined && a === b) {
      i++;
      j++;
      continue;
    }
    if (a !== undefined && !(ordered(i) && ordered(i + 1))) return false;
    if (b === undefined || (a !== undefined && a.metadata.name < b.metadata.name)) {
      changed.push(a as Pod);
      i++;
    } else if (a === undefined || a.metadata.name > b.metadata.name) {
      removed.push(b.metadata.name);
      j++;
    } else {
      changed.push(a);
      i++;
      j++;
    }
  }
  for (const name of removed) state.times.delete(name);
  for (const pod of changed) examine(pod);
  return true;
}
