// The inputs of the hints service, parsed strictly: a SLICES event from the slicer and the
// KUBE envelopes of Nodes and Services from the watcher. Anything that does not parse is a
// MalformedMessageError, which the consumer dead-letters with its reason and field.

import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { InvalidObjectError, LABEL_SERVICE_NAME, validateEndpointSlice, validateNode, validateService } from '@slicemesh/model';
import { parseKubeSubject, parseSlicesSubject } from '@slicemesh/nats';
import type { SubjectOptions } from '@slicemesh/nats';

/** Input that can never be applied: dead-letter it, never retry. */
export class MalformedMessageError extends Error {
  override readonly name = 'MalformedMessageError';
  constructor(
    readonly reason: string,
    /** JSON path of the offending field, when known. */
    readonly field?: string,
  ) {
    super(field === undefined ? reason : `${field}: ${reason}`);
  }
}

/** `slices.<cluster>.<ns>.<service>` body, as the slicer's outbox relay publishes it. */
export interface SliceChangedV1 {
  readonly type: 'SliceChanged.v1';
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  /** Slices created or updated, validated and normalised. */
  readonly upserts: readonly EndpointSlice[];
  /** Names of slices deleted (same namespace). */
  readonly deletes: readonly string[];
  readonly kubeSeq: { readonly from: number; readonly to: number } | null;
  readonly reconcileID: string | null;
}

export type KubeEventType = 'Upserted.v1' | 'Deleted.v1';

/** The watcher's envelope for one object (Deleted.v1 carries the object's final state). */
export type KubeEnvelope<T> = Readonly<{
  type: KubeEventType;
  cluster: string;
  object: T;
  observedAt: string;
}>;

export interface ParseOptions extends SubjectOptions {
  /** The cluster this service serves; a message of another cluster is malformed. */
  readonly cluster: string;
}

type Json = Readonly<Record<string, unknown>>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function reqString(o: Json, field: string): string {
  const v = o[field];
  if (typeof v !== 'string') throw new MalformedMessageError(v === undefined ? 'is required' : 'must be a string', field);
  return v;
}

function checkCluster(o: Json, opts: ParseOptions): string {
  const cluster = reqString(o, 'cluster');
  if (cluster !== opts.cluster) throw new MalformedMessageError(`is ${JSON.stringify(cluster)}, this service serves ${JSON.stringify(opts.cluster)}`, 'cluster');
  return cluster;
}

/** Runs a model validator, turning its InvalidObjectError into a MalformedMessageError under `path`. */
function validated<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    if (err instanceof InvalidObjectError) throw new MalformedMessageError(`${err.object}: ${err.reason}`, `${path}.${err.field}`);
    throw err;
  }
}

function subjectOf<T>(subject: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new MalformedMessageError(`subject ${JSON.stringify(subject)}: ${err instanceof Error ? err.message : String(err)}`, 'subject');
  }
}

function kubeSeqOf(v: unknown): SliceChangedV1['kubeSeq'] {
  if (v === undefined || v === null) return null;
  if (!isObject(v) || !Number.isSafeInteger(v['from']) || !Number.isSafeInteger(v['to'])) {
    throw new MalformedMessageError('must be {from, to} with integer sequences', 'kubeSeq');
  }
  return { from: v['from'] as number, to: v['to'] as number };
}

/**
 * Parses a SLICES message. Every upsert must be a valid EndpointSlice of the message's
 * namespace, labelled with its service; the subject must name the same cluster, namespace and
 * service as the body. Returns normalised slices (see validateEndpointSlice).
 */
export function parseSliceChanged(data: unknown, subject: string, opts: ParseOptions): SliceChangedV1 {
  if (!isObject(data)) throw new MalformedMessageError('the body must be a JSON object', '<body>');
  if (data['type'] !== 'SliceChanged.v1') throw new MalformedMessageError(`unknown type ${JSON.stringify(data['type'])} (want SliceChanged.v1)`, 'type');
  const cluster = checkCluster(data, opts);
  const namespace = reqString(data, 'namespace');
  const service = reqString(data, 'service');
  const addr = subjectOf(subject, () => parseSlicesSubject(subject, opts));
  if (addr.cluster !== cluster || addr.namespace !== namespace || addr.service !== service) {
    throw new MalformedMessageError(`subject ${subject} does not name ${cluster}/${namespace}/${service}`, 'subject');
  }
  const rawUpserts = data['upserts'] ?? [];
  const rawDeletes = data['deletes'] ?? [];
  if (!Array.isArray(rawUpserts)) throw new MalformedMessageError('must be an array', 'upserts');
  if (!Array.isArray(rawDeletes)) throw new MalformedMessageError('must be an array', 'deletes');
  const upserts = rawUpserts.map((raw: unknown, i) => {
    const path = `upserts[${i}]`;
    const slice = validated(path, () => validateEndpointSlice(raw, path));
    if (slice.metadata.namespace !== namespace) throw new MalformedMessageError(`namespace ${JSON.stringify(slice.metadata.namespace)} is not the message's`, `${path}.metadata.namespace`);
    if (slice.metadata.labels?.[LABEL_SERVICE_NAME] !== service) {
      throw new MalformedMessageError(`must be ${JSON.stringify(service)}`, `${path}.metadata.labels["${LABEL_SERVICE_NAME}"]`);
    }
    return slice;
  });
  const deletes = rawDeletes.map((name: unknown, i) => {
    if (typeof name !== 'string' || name === '') throw new MalformedMessageError('must be a non-empty slice name', `deletes[${i}]`);
    return name;
  });
  const reconcileID = data['reconcileID'];
  return {
    type: 'SliceChanged.v1',
    cluster,
    namespace,
    service,
    upserts,
    deletes,
    kubeSeq: kubeSeqOf(data['kubeSeq']),
    reconcileID: typeof reconcileID === 'string' ? reconcileID : null,
  };
}

function parseEnvelope<T>(data: unknown, kind: string, opts: ParseOptions, validate: (raw: unknown) => T): KubeEnvelope<T> {
  if (!isObject(data)) throw new MalformedMessageError('the body must be a JSON object', '<body>');
  const type = data['type'];
  if (type !== 'Upserted.v1' && type !== 'Deleted.v1') throw new MalformedMessageError(`unknown type ${JSON.stringify(type)} (want Upserted.v1 or Deleted.v1)`, 'type');
  const cluster = checkCluster(data, opts);
  if (data['kind'] !== kind) throw new MalformedMessageError(`must be ${kind}`, 'kind');
  const observedAt = typeof data['observedAt'] === 'string' ? data['observedAt'] : '';
  const object = validated('object', () => validate(data['object']));
  return { type, cluster, object, observedAt };
}

/** Parses a KUBE node message (`kube.<cluster>.node.<name>`); the subject must name the object. */
export function parseNodeEvent(data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<Node> {
  const env = parseEnvelope(data, 'Node', opts, (raw) => validateNode(raw, 'object'));
  const addr = subjectOf(subject, () => parseKubeSubject(subject, opts));
  if (addr.type !== 'node' || addr.cluster !== env.cluster || addr.name !== env.object.metadata.name) {
    throw new MalformedMessageError(`subject ${subject} does not name node ${env.object.metadata.name}`, 'subject');
  }
  return env;
}

/** Parses a KUBE service message (`kube.<cluster>.<part>.service.<ns>.<name>`). */
export function parseServiceEvent(data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<Service> {
  const env = parseEnvelope(data, 'Service', opts, (raw) => validateService(raw, 'object'));
  const addr = subjectOf(subject, () => parseKubeSubject(subject, opts));
  const { namespace, name } = env.object.metadata;
  if (addr.type !== 'object' || addr.kind !== 'Service' || addr.cluster !== env.cluster || addr.namespace !== namespace || addr.name !== name) {
    throw new MalformedMessageError(`subject ${subject} does not name service ${namespace ?? ''}/${name}`, 'subject');
  }
  return env;
}
