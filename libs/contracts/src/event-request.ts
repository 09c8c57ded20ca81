// The EVENTS stream's message: a Kubernetes Event one of our controllers wants recorded. The
// slicer (mirroring warnings) and the hints service (topology hints decisions) publish one per
// event their reconcile produced, after its state is committed; the publisher's event writer
// reads them, correlates them like client-go's recorder and writes core/v1 Events.
//
//   events.<cluster>.<component>     component: endpoint-slice-controller | endpoint-slice-mirroring-controller
//
// Events are best effort, as in Kubernetes: a request that is lost only means an Event that
// is missing, never a wrong slice.

import { InvalidArgumentError } from '@slicemesh/model';
import type { KubeEvent } from '@slicemesh/model';
import { TokenDecodeError } from './errors.ts';
import type { Parsed } from './kube-event.ts';
import type { SubjectOptions } from './subjects.ts';
import { decodeToken, encodeToken } from './tokens.ts';

export const EVENT_REQUEST = 'EventRequest.v1';

/** Upstream's topology events come from the EndpointSlice controller (A.13.5). */
export const HINTS_EVENT_COMPONENT = 'endpoint-slice-controller';
/** The mirroring controller's events, on the Endpoints object (A.13.5). */
export const MIRRORING_EVENT_COMPONENT = 'endpoint-slice-mirroring-controller';

/** The object an event is about (core/v1 ObjectReference, the fields a recorder fills). */
export interface InvolvedObject {
  /** `Service`, `Endpoints`, … */
  readonly kind: string;
  /** `v1` for core kinds. */
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  /** The object's uid when the producer knows it. */
  readonly uid?: string;
}

/** Body of an EVENTS message. */
export interface EventRequestMessage {
  readonly type: typeof EVENT_REQUEST;
  readonly cluster: string;
  /** The reporting component: the Event's `source.component`. */
  readonly component: string;
  readonly involvedObject: InvolvedObject;
  /** Type (Normal | Warning), reason and message, as upstream records them. */
  readonly event: KubeEvent;
  /** When the producer observed it, RFC 3339 with milliseconds. */
  readonly time: string;
}

/**
 * An event request for `event` on `involvedObject`, observed at `timeMs` (ms since the epoch).
 *
 * ### Examples
 * ```ts
 * eventRequest('c1', HINTS_EVENT_COMPONENT, { kind: 'Service', apiVersion: 'v1', namespace: 'default', name: 'web' },
 *   { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: '…' }, clock.now());
 * ```
 */
export function eventRequest(cluster: string, component: string, involvedObject: InvolvedObject, event: KubeEvent, timeMs: number): EventRequestMessage {
  return { type: EVENT_REQUEST, cluster, component, involvedObject, event: { type: event.type, reason: event.reason, message: event.message }, time: new Date(timeMs).toISOString() };
}

const PREFIX = /^(?:[A-Za-z0-9_-]+\.)*$/;

function prefixOf(opts: SubjectOptions | undefined): string {
  const prefix = opts?.prefix ?? '';
  if (!PREFIX.test(prefix)) throw new InvalidArgumentError('prefix', `must be empty or dot-terminated tokens of [A-Za-z0-9_-], got ${JSON.stringify(prefix)}`);
  return prefix;
}

export interface EventsSubjectAddress {
  readonly cluster: string;
  readonly component: string;
}

/** `events.<cluster>.<component>`. */
export function eventsSubject(a: EventsSubjectAddress, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}events.${encodeToken(a.cluster)}.${encodeToken(a.component)}`;
}

/** Inverse of eventsSubject. Throws TokenDecodeError for anything else. */
export function parseEventsSubject(subject: string, opts?: SubjectOptions): EventsSubjectAddress {
  const prefix = prefixOf(opts);
  if (!subject.startsWith(prefix)) throw new TokenDecodeError(subject, `does not start with prefix ${JSON.stringify(prefix)}`);
  const t = subject.slice(prefix.length).split('.');
  if (t.length !== 3 || t[0] !== 'events') throw new TokenDecodeError(subject, 'not events.<cluster>.<component>');
  return { cluster: decodeToken(t[1]!), component: decodeToken(t[2]!) };
}

/** Filter for every event request of one cluster: `events.<cluster>.>`. */
export function eventsFilter(cluster: string, opts?: SubjectOptions): string {
  return `${prefixOf(opts)}events.${encodeToken(cluster)}.>`;
}

/** What the EVENTS stream captures: `<prefix>events.>`. */
export function eventsStreamSubject(opts?: SubjectOptions): string {
  return `${prefixOf(opts)}events.>`;
}

export interface EventRequestContext extends SubjectOptions {
  /** The cluster the reader serves; a request of another cluster is rejected. */
  readonly cluster: string;
}

/** The API server's limit on a reason (events.k8s.io validation) and a generous one on messages. */
export const EVENT_REASON_MAX = 128;
export const EVENT_MESSAGE_MAX = 4096;

class Reject extends Error {
  readonly field: string;
  constructor(reason: string, field: string) {
    super(reason);
    this.field = field;
  }
}

function isObject(v: unknown): v is Readonly<Record<string, unknown>> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Readonly<Record<string, unknown>>, field: string, path: string, opts: { readonly empty?: boolean; readonly max?: number } = {}): string {
  const v = o[field];
  if (typeof v !== 'string') throw new Reject(v === undefined ? 'is required' : 'must be a string', path);
  if (v === '' && opts.empty !== true) throw new Reject('must not be empty', path);
  if (opts.max !== undefined && v.length > opts.max) throw new Reject(`must be at most ${opts.max} characters`, path);
  return v;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an EVENTS message received on `subject`: the body's cluster and component must be the
 * subject's, the cluster the reader's; type Normal or Warning, a reason, a valid time. Returns
 * the request with only the known fields; never throws.
 */
export function parseEventRequest(data: unknown, subject: string, ctx: EventRequestContext): Parsed<EventRequestMessage> {
  try {
    if (!isObject(data)) throw new Reject('the body must be a JSON object', '<body>');
    if (data['type'] !== EVENT_REQUEST) throw new Reject(`unknown type ${JSON.stringify(data['type'])} (want ${EVENT_REQUEST})`, 'type');
    const cluster = str(data, 'cluster', 'cluster');
    if (cluster !== ctx.cluster) throw new Reject(`is ${JSON.stringify(cluster)}, this reader serves ${JSON.stringify(ctx.cluster)}`, 'cluster');
    const component = str(data, 'component', 'component');
    let addr: EventsSubjectAddress;
    try {
      addr = parseEventsSubject(subject, ctx);
    } catch (err) {
      throw new Reject(`subject ${JSON.stringify(subject)}: ${err instanceof Error ? err.message : String(err)}`, 'subject');
    }
    if (addr.cluster !== cluster || addr.component !== component) throw new Reject(`subject ${subject} does not name ${cluster}/${component}`, 'subject');
    const obj = data['involvedObject'];
    if (!isObject(obj)) throw new Reject('must be an object', 'involvedObject');
    const uid = obj['uid'];
    if (uid !== undefined && uid !== null && typeof uid !== 'string') throw new Reject('must be a string', 'involvedObject.uid');
    const involvedObject: InvolvedObject = {
      kind: str(obj, 'kind', 'involvedObject.kind'),
      apiVersion: str(obj, 'apiVersion', 'involvedObject.apiVersion'),
      namespace: str(obj, 'namespace', 'involvedObject.namespace', { empty: true }),
      name: str(obj, 'name', 'involvedObject.name'),
      ...(typeof uid === 'string' && uid !== '' ? { uid } : {}),
    };
    const ev = data['event'];
    if (!isObject(ev)) throw new Reject('must be an object', 'event');
    const type = ev['type'];
    if (type !== 'Normal' && type !== 'Warning') throw new Reject(`must be Normal or Warning, got ${JSON.stringify(type)}`, 'event.type');
    const event: KubeEvent = {
      type,
      reason: str(ev, 'reason', 'event.reason', { max: EVENT_REASON_MAX }),
      message: str(ev, 'message', 'event.message', { empty: true, max: EVENT_MESSAGE_MAX }),
    };
    const time = str(data, 'time', 'time');
    if (!RFC3339.test(time) || Number.isNaN(Date.parse(time))) throw new Reject(`must be an RFC 3339 time, got ${JSON.stringify(time)}`, 'time');
    return { ok: true, value: { type: EVENT_REQUEST, cluster, component, involvedObject, event, time } };
  } catch (err) {
    if (err instanceof Reject) return { ok: false, rejection: { reason: err.message, field: err.field } };
    // A token that does not decode, or any other surprise, is a rejection too: never throw.
    return { ok: false, rejection: { reason: err instanceof Error ? err.message : String(err), field: '<body>' } };
  }
}
