// The KUBE stream's message: one change of one watched object, versioned by its `type`. The
// watcher builds it (changeEvent, kubeMsgID, subjectOf); the slicer, the hints service and the
// watcher's own restart read it back through decodeKubeMessage / parseKubeEvent, so a message
// one of them rejects, all of them reject.

import type { EndpointSlice, Endpoints, Node, Pod, Service, ServiceExport } from '@slicemesh/model';
import { InvalidObjectError, validateKubeObject, validateServiceExport } from '@slicemesh/model';
import { TokenEncodeError } from './errors.ts';
import type { SubjectOptions } from './subjects.ts';
import { kubeNodeSubject, kubeObjectSubject, parseKubeSubject, partitionOf } from './subjects.ts';

/**
 * The kinds the watcher follows, in the order it starts them. EndpointSlices are only those of
 * other controllers (see isOwnSlice): the slicer's own travel on SLICES. ServiceExports (MCS,
 * a CRD) exist only where the API serves them (see OPTIONAL_KINDS); only the mcs service reads them.
 */
export const WATCHED_KINDS = ['Node', 'Service', 'Endpoints', 'Pod', 'EndpointSlice', 'ServiceExport'] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];
export type WatchedObject = Service | Pod | Node | Endpoints | EndpointSlice | ServiceExport;

/** Kinds of CRDs a cluster may not have installed: an API that does not serve them is no error. */
export const OPTIONAL_KINDS: ReadonlySet<WatchedKind> = new Set<WatchedKind>(['ServiceExport']);

export const UPSERTED = 'Upserted.v1';
export const DELETED = 'Deleted.v1';
/** A new or changed object, or its removal (body: the last known object). */
export type KubeChangeType = typeof UPSERTED | typeof DELETED;

/** The body of every KUBE message. */
export interface KubeChangeEvent {
  readonly type: KubeChangeType;
  readonly cluster: string;
  readonly kind: WatchedKind;
  readonly object: WatchedObject;
  /** RFC 3339 time at which the watcher saw the change (the watcher's clock). */
  readonly observedAt: string;
}

export function isWatchedKind(kind: unknown): kind is WatchedKind {
  return typeof kind === 'string' && (WATCHED_KINDS as readonly string[]).includes(kind);
}

/** `Pod default/web-1` or `Node n1`: how messages and dead letters name an object. */
export function labelOf(obj: WatchedObject): string {
  return obj.kind === 'Node' ? `Node ${obj.metadata.name}` : `${obj.kind} ${obj.metadata.namespace ?? 'default'}/${obj.metadata.name}`;
}

/**
 * The envelope for `object`. A delete carries the last known object with
 * `metadata.resourceVersion` set to the version at which it was seen gone.
 */
export function changeEvent(type: KubeChangeType, cluster: string, object: WatchedObject, observedAt: string): KubeChangeEvent {
  return { type, cluster, kind: object.kind, object, observedAt };
}

// The JSON text of each object, by identity: the watcher measures an object's size after
// trimming and then publishes it, and stringifying it twice was ~4% of its CPU under load.
// Objects here are never mutated (the model's types are readonly), so the text stays true.
const objectTexts = new WeakMap<WatchedObject, string>();

/** JSON.stringify(object), computed once per object. */
export function objectJson(object: WatchedObject): string {
  let text = objectTexts.get(object);
  if (text === undefined) {
    text = JSON.stringify(object);
    objectTexts.set(object, text);
  }
  return text;
}

/** The event's body as JSON.stringify(event) would write it, the object's text from objectJson. */
export function kubeEventJson(event: KubeChangeEvent): string {
  return `{"type":${JSON.stringify(event.type)},"cluster":${JSON.stringify(event.cluster)},"kind":${JSON.stringify(event.kind)},"object":${objectJson(event.object)},"observedAt":${JSON.stringify(event.observedAt)}}`;
}

/**
 * The Nats-Msg-Id of an event: `<cluster>/<uid>/<resourceVersion>`, and for deletes
 * `<cluster>/<uid>/<resourceVersion>/deleted`. Two watchers that see the same version of the
 * same object produce the same id, so the stream stores it once.
 * Throws InvalidObjectError when the object lacks its uid or resourceVersion.
 */
export function kubeMsgID(event: Pick<KubeChangeEvent, 'type' | 'cluster' | 'object'>): string {
  const { uid, resourceVersion } = event.object.metadata;
  if (!uid) throw new InvalidObjectError(labelOf(event.object), 'metadata.uid', 'is required');
  if (!resourceVersion) throw new InvalidObjectError(labelOf(event.object), 'metadata.resourceVersion', 'is required');
  const id = `${event.cluster}/${uid}/${resourceVersion}`;
  return event.type === DELETED ? `${id}/deleted` : id;
}

/**
 * The subject of `object`: `kube.<cluster>.node.<name>` for Nodes, otherwise
 * `kube.<cluster>.<partitionOf(namespace)>.<kind>.<namespace>.<name>`, every name one token.
 * Throws InvalidObjectError (metadata.name / metadata.namespace) for a name without a token form.
 */
export function kubeSubjectOf(cluster: string, object: WatchedObject, layout: SubjectOptions & { readonly partitions: number }): string {
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

/** validateKubeObject for the core kinds, validateServiceExport for ServiceExports (not an input-file kind). */
function validateWatchedObject(raw: unknown, where: string): WatchedObject {
  if (isRecord(raw) && raw['kind'] === 'ServiceExport') return validateServiceExport(raw, where);
  return validateKubeObject(raw, where);
}

/** Why a KUBE message was rejected; `field` is a JSON path (`subject`, `type`, `object.spec…`). */
export interface Rejection {
  readonly reason: string;
  readonly field?: string;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly rejection: Rejection };

function reject<T>(reason: string, field?: string): Parsed<T> {
  return { ok: false, rejection: field === undefined ? { reason } : { reason, field } };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses a KUBE body on its own (no subject): `type`, `cluster`, `kind`, the object against its
 * validator (normalised), and `observedAt`. `where` names the object in messages. Never throws.
 */
export function parseKubeEvent(body: unknown, where = 'KUBE message'): Parsed<KubeChangeEvent> {
  if (!isRecord(body)) return reject('body must be a JSON object');
  const type = body['type'];
  if (type !== UPSERTED && type !== DELETED) return reject(`must be ${UPSERTED} or ${DELETED}, got ${JSON.stringify(type)}`, 'type');
  const cluster = body['cluster'];
  if (typeof cluster !== 'string' || cluster === '') return reject(`must be a non-empty string, got ${JSON.stringify(cluster)}`, 'cluster');
  const kind = body['kind'];
  if (!isWatchedKind(kind)) return reject(`must be one of ${WATCHED_KINDS.join(', ')}, got ${JSON.stringify(kind)}`, 'kind');
  let object;
  try {
    object = validateWatchedObject(body['object'], where);
  } catch (err) {
    if (err instanceof InvalidObjectError) return reject(err.message, `object.${err.field}`);
    throw err;
  }
  if (object.kind !== kind) return reject(`object kind ${object.kind} does not match the envelope's ${kind}`, 'object.kind');
  const observedAt = body['observedAt'];
  return { ok: true, value: { type, cluster, kind, object: object as WatchedObject, observedAt: typeof observedAt === 'string' ? observedAt : '' } };
}

/** A validated change to one object, as its subject and body agree on it. */
export interface KubeChange {
  readonly type: KubeChangeType;
  readonly kind: WatchedKind;
  readonly cluster: string;
  /** '' for Nodes. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** The validated (normalised) object; for a delete, its final state. */
  readonly object: WatchedObject;
  /** When the watcher saw the change (RFC 3339); '' when the message did not say. */
  readonly observedAt: string;
}

export type Decoded = { readonly ok: true; readonly change: KubeChange } | { readonly ok: false; readonly rejection: Rejection };

export interface DecodeContext extends SubjectOptions {
  /** The cluster this reader serves: messages of another are rejected. */
  readonly cluster: string;
  /** KUBE partitions: when given, the subject's partition must be the namespace's. */
  readonly partitions?: number;
}

/** The part of a consumed message decoding needs. */
export interface RawKubeMessage {
  readonly subject: string;
  /** Parsed JSON body; undefined with `parseError` when the body is not JSON. */
  readonly data: unknown;
  readonly parseError?: string;
}

/**
 * Checks, in order: JSON body, subject syntax (cluster and partition included), the envelope
 * (parseKubeEvent), and that the object's kind, name, namespace and partition are the ones its
 * subject names. Returns the change or the first problem; never throws.
 */
export function decodeKubeMessage(msg: RawKubeMessage, ctx: DecodeContext): Decoded {
  if (msg.parseError !== undefined) return { ok: false, rejection: { reason: `body is not JSON: ${msg.parseError}` } };
  let addr;
  try {
    addr = parseKubeSubject(msg.subject, ctx);
  } catch (err) {
    return { ok: false, rejection: { reason: err instanceof Error ? err.message : String(err), field: 'subject' } };
  }
  const fail = (reason: string, field?: string): Decoded => ({ ok: false, rejection: field === undefined ? { reason } : { reason, field } });
  if (addr.cluster !== ctx.cluster) return fail(`subject cluster ${JSON.stringify(addr.cluster)} is not this reader's ${JSON.stringify(ctx.cluster)}`, 'subject');
  const body = msg.data;
  if (isRecord(body) && body['cluster'] !== addr.cluster && (body['type'] === UPSERTED || body['type'] === DELETED)) {
    return fail(`must equal the subject's cluster ${JSON.stringify(addr.cluster)}, got ${JSON.stringify(body['cluster'])}`, 'cluster');
  }
  const subjectKind = addr.type === 'node' ? 'Node' : addr.kind;
  if (isRecord(body) && isWatchedKind(body['kind']) && body['kind'] !== subjectKind) return fail(`${String(body['kind'])} does not match the subject's kind ${subjectKind}`, 'kind');
  const where = addr.type === 'node' ? `Node ${addr.name}` : `${subjectKind} ${addr.namespace}/${addr.name}`;
  const parsed = parseKubeEvent(body, where);
  if (!parsed.ok) return parsed;
  const { type, kind, object, observedAt } = parsed.value;
  const meta = object.metadata;
  if (meta.name !== addr.name) return fail(`${JSON.stringify(meta.name)} does not match the subject's name ${JSON.stringify(addr.name)}`, 'object.metadata.name');
  let namespace = '';
  if (addr.type === 'object') {
    namespace = meta.namespace ?? 'default';
    if (namespace !== addr.namespace) return fail(`${JSON.stringify(namespace)} does not match the subject's namespace ${JSON.stringify(addr.namespace)}`, 'object.metadata.namespace');
    const want = ctx.partitions === undefined ? addr.partition : partitionOf(namespace, ctx.partitions);
    if (addr.partition !== want) return fail(`partition ${addr.partition} is not ${want} = partitionOf(namespace, ${ctx.partitions}); do the watcher and its readers agree on PARTITIONS?`, 'subject');
  }
  const resourceVersion = meta.resourceVersion ?? '';
  if (resourceVersion === '') return fail('is required', 'object.metadata.resourceVersion');
  return { ok: true, change: { type, kind, cluster: addr.cluster, namespace, name: meta.name, uid: meta.uid ?? '', resourceVersion, object, observedAt } };
}
