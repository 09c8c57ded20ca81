// The KUBE message of one change: subject, Nats-Msg-Id and body. Pure.

import { changeEvent, kubeMsgID, labelOf } from '@slicemesh/kube';
import type { KubeChangeEvent, KubeChangeType, WatchedObject } from '@slicemesh/kube';
import { InvalidObjectError } from '@slicemesh/model';
import { kubeNodeSubject, kubeObjectSubject, partitionOf, TokenEncodeError } from '@slicemesh/nats';
import type { SubjectOptions } from '@slicemesh/nats';

export interface KubeMessage {
  readonly subject: string;
  readonly msgID: string;
  readonly event: KubeChangeEvent;
}

export interface SubjectLayout extends SubjectOptions {
  /** Partitions of namespaced kinds (see partitionOf); a deployment-wide constant. */
  readonly partitions: number;
}

/**
 * The subject of `object`: `kube.<cluster>.node.<name>` for Nodes, otherwise
 * `kube.<cluster>.<partitionOf(namespace)>.<kind>.<namespace>.<name>`, every name one token.
 * Throws InvalidObjectError (field metadata.name / metadata.namespace) for a name that has no
 * token form (over 253 UTF-8 bytes, or a lone surrogate); toDomain output always has one.
 */
export function subjectOf(cluster: string, object: WatchedObject, layout: SubjectLayout): string {
  try {
    if (object.kind === 'Node') return kubeNodeSubject({ cluster, name: object.metadata.name }, layout);
    const namespace = object.metadata.namespace ?? 'default';
    return kubeObjectSubject({ cluster, partition: partitionOf(namespace, layout.partitions), kind: object.kind, namespace, name: object.metadata.name }, layout);
  } catch (err) {
    if (!(err instanceof TokenEncodeError)) throw err;
    const field = err.input === object.metadata.name ? 'metadata.name' : 'metadata.namespace';
    throw new InvalidObjectError(labelOf(object), field, `cannot be a subject token: ${err.reason}`);
  }
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
