// From what the API server sends to what the slicer reads: validate a raw object of a watched
// kind, keep only the model's fields, and wrap it in the KUBE envelope with its idempotency key.
// Pure: no I/O, no clock (observedAt is passed in).

import {
  ANNOTATION_LAST_APPLIED,
  DISCOVERY_API_VERSION,
  InvalidObjectError,
  JSON_FIELD,
  locateJsonError,
  MCS_API_VERSION,
  validateEndpointSlice,
  validateEndpoints,
  validateNode,
  validatePod,
  validateService,
  validateServiceExport,
} from '@slicemesh/model';

// The watched kinds and the KUBE envelope are the KUBE contract's (@slicemesh/contracts).
import { labelOf, objectJson } from '@slicemesh/contracts';
import type { WatchedKind, WatchedObject } from '@slicemesh/contracts';
export { OPTIONAL_KINDS, WATCHED_KINDS, changeEvent, kubeMsgID, labelOf } from '@slicemesh/contracts';
export type { KubeChangeEvent, KubeChangeType, WatchedKind, WatchedObject } from '@slicemesh/contracts';

/** Field named in errors about the object as a whole (its size, its identity). */
export const OBJECT_FIELD = '<object>';
/**
 * Largest trimmed object accepted, in UTF-8 bytes of its JSON. NATS refuses messages over its
 * max_payload (1 MiB by default); the watcher lowers this to fit the server it talks to.
 */
export const DEFAULT_MAX_OBJECT_BYTES = 512 * 1024;
/** How rejected objects are named when their name cannot be shown (see objectLabel in model). */
const WHERE = 'object';

const VALIDATORS: Readonly<Record<WatchedKind, (raw: unknown, where: string) => WatchedObject>> = {
  Service: validateService,
  Pod: validatePod,
  Node: validateNode,
  Endpoints: validateEndpoints,
  EndpointSlice: validateEndpointSlice,
  ServiceExport: validateServiceExport,
};

/** The apiVersion of each kind, for List items that carry none. */
const API_VERSIONS: Readonly<Record<WatchedKind, string>> = {
  Service: 'v1',
  Pod: 'v1',
  Node: 'v1',
  Endpoints: 'v1',
  EndpointSlice: DISCOVERY_API_VERSION,
  ServiceExport: MCS_API_VERSION,
};

export function isWatchedKind(kind: unknown): kind is WatchedKind {
  return typeof kind === 'string' && Object.hasOwn(VALIDATORS, kind);
}

export interface ToDomainOptions {
  /** See DEFAULT_MAX_OBJECT_BYTES. Defaults to it. */
  readonly maxObjectBytes?: number;
}

const isRecord = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Returns `raw` with `kind` and `apiVersion` filled in when absent (items of a List response
 * carry neither). Returns other values (arrays, null, text) unchanged; never mutates `raw`.
 */
export function withTypeMeta(kind: WatchedKind, raw: unknown): unknown {
  if (!isRecord(raw) || (raw['kind'] != null && raw['apiVersion'] != null)) return raw;
  return { ...raw, kind: raw['kind'] ?? kind, apiVersion: raw['apiVersion'] ?? API_VERSIONS[kind] };
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const p = locateJsonError(text);
    const reason = p ? `invalid JSON at line ${p.line} column ${p.column}: ${p.reason}` : `invalid JSON: ${err instanceof Error ? err.message : String(err)}`;
    throw new InvalidObjectError(WHERE, JSON_FIELD, reason);
  }
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Validates a raw object of `kind` (wire JSON as parsed, or its text) and returns the trimmed
 * model object: only the model's fields, `kind`/`apiVersion` set, and without the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation (a full copy of the spec that
 * no consumer reads). The result never shares structure with `raw`.
 *
 * Throws InvalidObjectError naming the object and the field for anything the slicer must not
 * see: text that is not JSON, a non-object, another kind, any field the model's validator
 * rejects (names with '.', '*', '>', spaces or non-ASCII where the kind forbids them, names
 * over 253 characters, invalid IPs, ...), a missing `metadata.uid` or
 * `metadata.resourceVersion` (the idempotency key needs both), or a trimmed object larger than
 * `maxObjectBytes`.
 */
export function toDomain(kind: WatchedKind, raw: unknown, opts: ToDomainOptions = {}): WatchedObject {
  const input = typeof raw === 'string' ? parseText(raw) : raw;
  const obj = VALIDATORS[kind](withTypeMeta(kind, input), WHERE);
  const label = labelOf(obj);
  if (!obj.metadata.uid) throw new InvalidObjectError(label, 'metadata.uid', 'is required (it identifies the object in the KUBE stream)');
  if (!obj.metadata.resourceVersion) throw new InvalidObjectError(label, 'metadata.resourceVersion', 'is required (it orders the versions of the object)');
  const trimmed = withoutLastApplied(obj);
  const max = opts.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
  const bytes = utf8Length(objectJson(trimmed)); // the text the watcher then publishes
  if (bytes > max) throw new InvalidObjectError(label, OBJECT_FIELD, `is ${bytes} bytes after trimming, more than the ${max}-byte limit`);
  return trimmed;
}

function withoutLastApplied<T extends WatchedObject>(obj: T): T {
  const annotations = obj.metadata.annotations;
  if (annotations === undefined || !Object.hasOwn(annotations, ANNOTATION_LAST_APPLIED)) return obj;
  const { [ANNOTATION_LAST_APPLIED]: _dropped, ...rest } = annotations;
  const { annotations: _all, ...meta } = obj.metadata;
  return { ...obj, metadata: Object.keys(rest).length > 0 ? { ...meta, annotations: rest } : meta };
}

/** A copy of `obj` whose resourceVersion is `resourceVersion` (the version it was seen gone at). */
export function asDeleted<T extends WatchedObject>(obj: T, resourceVersion: string): T {
  if (obj.metadata.resourceVersion === resourceVersion) return obj;
  return { ...obj, metadata: { ...obj.metadata, resourceVersion } };
}

/**
 * Where an object lives, as the watcher keys its state: `<namespace>/<name>`, or `<name>` for
 * Nodes. Returns undefined when `raw` has no string name (it cannot be tracked at all).
 */
export function objectKeyOf(kind: WatchedKind, raw: unknown): string | undefined {
  const meta = isRecord(raw) ? raw['metadata'] : undefined;
  if (!isRecord(meta) || typeof meta['name'] !== 'string') return undefined;
  if (kind === 'Node') return meta['name'];
  const ns = meta['namespace'] ?? 'default';
  return typeof ns === 'string' ? `${ns}/${meta['name']}` : undefined;
}
