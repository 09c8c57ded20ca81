// The JSON a correlated event is written as (A.13.3): a core/v1 Event for a create, and for a
// repeat the strategic merge patch client-go's recorder sends — count, lastTimestamp and
// message, nothing else. Timestamps are whole seconds, as metav1.Time serialises them.

import type { RecordedEvent } from './correlator.ts';

/** RFC 3339 in whole seconds (metav1.Time). */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** The Event to create. */
export function eventObject(e: RecordedEvent): Record<string, unknown> {
  const { kind, apiVersion, namespace, name, uid } = e.involvedObject;
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: e.name, namespace: e.namespace },
    involvedObject: { kind, apiVersion, namespace, name, ...(uid === undefined ? {} : { uid }) },
    type: e.type,
    reason: e.reason,
    message: e.message,
    source: { component: e.component },
    // client-go's core recorder names the reporting controller after the source component.
    reportingComponent: e.component,
    reportingInstance: '',
    count: e.count,
    firstTimestamp: kubeTime(e.firstMs),
    lastTimestamp: kubeTime(e.lastMs),
  };
}

/** The patch that records one more occurrence of an existing Event. */
export function eventPatch(e: RecordedEvent): Record<string, unknown> {
  return { count: e.count, lastTimestamp: kubeTime(e.lastMs), message: e.message };
}
