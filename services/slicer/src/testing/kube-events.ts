// Builders of KUBE messages for tests: the subject and envelope the watcher would publish.

import type { EndpointSlice, Endpoints, Node, Pod, Service, ServiceExport } from '@slicemesh/model';
import { kubeNodeSubject, kubeObjectSubject, partitionOf } from '@slicemesh/nats';
import type { KubeChangeType as KubeEventType } from '@slicemesh/contracts';
import type { IngestMessage } from '../ingest.ts';

export type WatchedObject = Service | Pod | Node | Endpoints | EndpointSlice | ServiceExport;

export interface EventOptions {
  readonly cluster?: string;
  readonly partitions?: number;
  readonly prefix?: string;
  readonly type?: KubeEventType;
}

/** A copy of `obj` at resourceVersion `rv`. */
export function atVersion<T extends WatchedObject>(obj: T, rv: number | string): T {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}

/** The subject the watcher publishes `obj` on. */
export function subjectOf(obj: WatchedObject, o: EventOptions = {}): string {
  const cluster = o.cluster ?? 'c1';
  const opts = { prefix: o.prefix ?? '' };
  if (obj.kind === 'Node') return kubeNodeSubject({ cluster, name: obj.metadata.name }, opts);
  const namespace = obj.metadata.namespace ?? 'default';
  return kubeObjectSubject({ cluster, partition: partitionOf(namespace, o.partitions ?? 1), kind: obj.kind, namespace, name: obj.metadata.name }, opts);
}

/** The envelope body. */
export function envelopeOf(obj: WatchedObject, o: EventOptions = {}): Record<string, unknown> {
  return { type: o.type ?? 'Upserted.v1', cluster: o.cluster ?? 'c1', kind: obj.kind, object: obj, observedAt: '2026-01-01T00:00:00Z' };
}

/** A consumed message as ingest sees it. */
export function kubeMessage(seq: number, obj: WatchedObject, o: EventOptions = {}): IngestMessage {
  const data = envelopeOf(obj, o);
  return { subject: subjectOf(obj, o), seq, data, raw: new TextEncoder().encode(JSON.stringify(data)) };
}

/** A message with an arbitrary body (for malformed input). */
export function rawMessage(seq: number, subject: string, text: string): IngestMessage {
  let data: unknown;
  let parseError: string | undefined;
  try {
    data = JSON.parse(text) as unknown;
  } catch (err) {
    parseError = (err as Error).message;
  }
  return { subject, seq, data, ...(parseError !== undefined ? { parseError } : {}), raw: new TextEncoder().encode(text) };
}
