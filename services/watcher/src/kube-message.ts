// The KUBE message of one change: subject, Nats-Msg-Id and body. Pure.

import { changeEvent, kubeMsgID, kubeSubjectOf } from '@slicemesh/contracts';
import type { KubeChangeEvent, KubeChangeType, SubjectOptions, WatchedObject } from '@slicemesh/contracts';

export interface KubeMessage {
  readonly subject: string;
  readonly msgID: string;
  readonly event: KubeChangeEvent;
}

export interface SubjectLayout extends SubjectOptions {
  /** Partitions of namespaced kinds (see partitionOf); a deployment-wide constant. */
  readonly partitions: number;
}

/** The subject of `object` (see kubeSubjectOf in the KUBE contract). */
export function subjectOf(cluster: string, object: WatchedObject, layout: SubjectLayout): string {
  return kubeSubjectOf(cluster, object, layout);
}

/**
 * The message for a change of `object` (a toDomain result; for deletes, asDeleted of the last
 * known object) observed at `observedAt` (epoch ms). Throws InvalidObjectError as subjectOf.
 *
 * ### Examples
 * ```ts
 * eventFor('Upserted.v1', pod, 'c1', 0, { partitions: 1 });
 * // { subject: 'kube.c1.0.pod.default.web-1', msgID: 'c1/<uid>/<rv>', event: { type: 'Upserted.v1', ... } }
 * ```
 */
export function eventFor(type: KubeChangeType, object: WatchedObject, cluster: string, observedAt: number, layout: SubjectLayout): KubeMessage {
  const event = changeEvent(type, cluster, object, new Date(observedAt).toISOString());
  return { subject: subjectOf(cluster, object, layout), msgID: kubeMsgID(event), event };
}
