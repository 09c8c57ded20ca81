// Decoding a KUBE message: the subject, the envelope and the object must all agree, or the
// message is rejected with a reason (and dead-lettered by the caller). Shared by ingest and
// replay, so a replay skips exactly what the live slicer rejected.

import type { Endpoints, Node, Pod, Service } from '@slicemesh/model';
import { InvalidObjectError, validateKubeObject } from '@slicemesh/model';
import { namespaceOf } from '@slicemesh/slicing';
import type { StoredKind } from '@slicemesh/db';
import { parseKubeSubject, partitionOf } from '@slicemesh/nats';

export const UPSERTED = 'Upserted.v1';
export const DELETED = 'Deleted.v1';
export type KubeEventType = typeof UPSERTED | typeof DELETED;

const KINDS: ReadonlySet<string> = new Set<StoredKind>(['Service', 'Pod', 'Node', 'Endpoints']);

/** A validated change to one object. */
export interface KubeChange {
  readonly type: KubeEventType;
  readonly kind: StoredKind;
  readonly cluster: string;
  /** '' for Nodes. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** The validated (normalised) object; for a delete, its final state. */
  readonly object: Service | Pod | Node | Endpoints;
}

export interface Rejection {
  readonly reason: string;
  /** JSON path of the offending part: `subject`, `type`, `object.metadata.name`, ... */
  readonly field?: string;
}

export type Decoded = { readonly ok: true; readonly change: KubeChange } | { readonly ok: false; readonly rejection: Rejection };

export interface DecodeContext {
  readonly cluster: string;
  readonly partitions: number;
  /** Stream subject prefix. */
  readonly prefix: string;
}

/** The part of a consumed message decoding needs. */
export interface RawKubeMessage {
  readonly subject: string;
  /** Parsed JSON body; undefined with `parseError` when the body is not JSON. */
  readonly data: unknown;
  readonly parseError?: string;
}

function reject(reason: string, field?: string): Decoded {
  return { ok: false, rejection: field === undefined ? { reason } : { reason, field } };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Checks, in order: JSON body, subject syntax (cluster and partition included), envelope
 * `type`/`cluster`/`kind`, the object against its validator, and that the object's kind, name,
 * namespace and partition are the ones its subject names. Returns the change or the first
 * problem; never throws.
 */
export function decodeKubeMessage(msg: RawKubeMessage, ctx: DecodeContext): Decoded {
  if (msg.parseError !== undefined) return reject(`body is not JSON: ${msg.parseError}`);
  let addr;
  try {
    addr = parseKubeSubject(msg.subject, { prefix: ctx.prefix });
  } catch (err) {
    return reject(err instanceof Error ? err.message : String(err), 'subject');
  }
  if (addr.cluster !== ctx.cluster) return reject(`subject cluster ${JSON.stringify(addr.cluster)} is not this slicer's ${JSON.stringify(ctx.cluster)}`, 'subject');
  const body = msg.data;
  if (!isRecord(body)) return reject('body must be a JSON object');
  const type = body['type'];
  if (type !== UPSERTED && type !== DELETED) return reject(`must be ${UPSERTED} or ${DELETED}, got ${JSON.stringify(type)}`, 'type');
  if (body['cluster'] !== addr.cluster) return reject(`must equal the subject's cluster ${JSON.stringify(addr.cluster)}, got ${JSON.stringify(body['cluster'])}`, 'cluster');
  const kind = body['kind'];
  if (typeof kind !== 'string' || !KINDS.has(kind)) return reject(`must be one of ${[...KINDS].join(', ')}, got ${JSON.stringify(kind)}`, 'kind');
  const subjectKind = addr.type === 'node' ? 'Node' : addr.kind;
  if (kind !== subjectKind) return reject(`${kind} does not match the subject's kind ${subjectKind}`, 'kind');

  const where = addr.type === 'node' ? `Node ${addr.name}` : `${kind} ${addr.namespace}/${addr.name}`;
  let object;
  try {
    object = validateKubeObject(body['object'], where);
  } catch (err) {
    if (err instanceof InvalidObjectError) return reject(err.message, `object.${err.field}`);
    throw err;
  }
  if (object.kind !== kind) return reject(`object kind ${object.kind} does not match the envelope's ${kind}`, 'object.kind');
  const meta = object.metadata;
  if (meta.name !== addr.name) return reject(`${JSON.stringify(meta.name)} does not match the subject's name ${JSON.stringify(addr.name)}`, 'object.metadata.name');
  let namespace = '';
  if (addr.type === 'object') {
    namespace = namespaceOf(meta);
    if (namespace !== addr.namespace) return reject(`${JSON.stringify(namespace)} does not match the subject's namespace ${JSON.stringify(addr.namespace)}`, 'object.metadata.namespace');
    const want = partitionOf(namespace, ctx.partitions);
    if (addr.partition !== want) {
      return reject(`partition ${addr.partition} is not ${want} = partitionOf(namespace, ${ctx.partitions}); do the watcher and slicer agree on PARTITIONS?`, 'subject');
    }
  }
  const resourceVersion = meta.resourceVersion ?? '';
  if (resourceVersion === '') return reject('is required', 'object.metadata.resourceVersion');
  return {
    ok: true,
    change: { type, kind: kind as StoredKind, cluster: addr.cluster, namespace, name: meta.name, uid: meta.uid ?? '', resourceVersion, object: object as KubeChange['object'] },
  };
}
