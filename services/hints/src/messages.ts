// The inputs of the hints service — a SLICES event from the slicer and the KUBE envelopes of
// Nodes, Services and other controllers' EndpointSlices from the watcher — parsed by their contracts (@slicemesh/contracts).
// Anything that does not parse is a MalformedMessageError, which the consumer dead-letters
// with its reason and field.

import type { KubeChangeType, Rejection, SliceChangedMessage, SubjectOptions, WatchedObject } from '@slicemesh/contracts';
import { decodeKubeMessage, parseKubeSubject, parseSliceChanged as parseSliceChangedContract } from '@slicemesh/contracts';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';

/** Input that can never be applied: dead-letter it, never retry. */
export class MalformedMessageError extends Error {
  readonly reason: string;
  /** JSON path of the offending field, when known. */
  readonly field?: string;
  override readonly name = 'MalformedMessageError';
  constructor(
    reason: string,
    field?: string,
  ) {
    super(field === undefined ? reason : `${field}: ${reason}`);
    this.reason = reason;
    this.field = field;
  }
}

/** `slices.<cluster>.<ns>.<service>` body, as the SLICES contract parses it. */
export type SliceChangedV1 = SliceChangedMessage;

export type KubeEventType = KubeChangeType;

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
  /** PARTITIONS: a SLICES subject whose partition token is not its namespace's is malformed. */
  readonly partitions?: number;
}

function fail(r: Rejection): never {
  throw new MalformedMessageError(r.reason, r.field ?? '<body>');
}

/** Parses a SLICES message with the SLICES contract (see parseSliceChanged in @slicemesh/contracts). */
export function parseSliceChanged(data: unknown, subject: string, opts: ParseOptions): SliceChangedV1 {
  const r = parseSliceChangedContract(data, subject, opts);
  return r.ok ? r.value : fail(r.rejection);
}

// A KUBE message of `kind`, decoded by the KUBE contract: the same checks the slicer makes.
function decodeAs<T extends WatchedObject>(kind: T['kind'], data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<T> {
  let addr;
  try {
    addr = parseKubeSubject(subject, opts);
  } catch (err) {
    throw new MalformedMessageError(`subject ${JSON.stringify(subject)}: ${err instanceof Error ? err.message : String(err)}`, 'subject');
  }
  const subjectKind = addr.type === 'node' ? 'Node' : addr.kind;
  if (subjectKind !== kind) throw new MalformedMessageError(`subject ${subject} does not name a ${kind}`, 'subject');
  const d = decodeKubeMessage({ subject, data }, { cluster: opts.cluster, ...(opts.prefix !== undefined ? { prefix: opts.prefix } : {}) });
  if (!d.ok) fail(d.rejection);
  const c = d.change;
  return { type: c.type, cluster: c.cluster, object: c.object as T, observedAt: c.observedAt };
}

/** Parses a KUBE node message (`kube.<cluster>.node.<name>`); the subject must name the object. */
export function parseNodeEvent(data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<Node> {
  return decodeAs<Node>('Node', data, subject, opts);
}

/** Parses a KUBE service message (`kube.<cluster>.<part>.service.<ns>.<name>`). */
export function parseServiceEvent(data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<Service> {
  return decodeAs<Service>('Service', data, subject, opts);
}

/** Parses a KUBE EndpointSlice message (`kube.<cluster>.<part>.endpointslice.<ns>.<name>`): another controller's slice. */
export function parseEndpointSliceEvent(data: unknown, subject: string, opts: ParseOptions): KubeEnvelope<EndpointSlice> {
  return decodeAs<EndpointSlice>('EndpointSlice', data, subject, opts);
}
