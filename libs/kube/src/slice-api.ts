// EndpointSlice reads and writes (discovery.k8s.io/v1) as raw JSON: get, create, replace
// (PUT with the resourceVersion read, so a concurrent writer makes it fail with 409) and delete
// with uid + resourceVersion preconditions. Every failure is one KubeWriteError carrying the
// HTTP status, the Status reason (`Conflict`, `AlreadyExists`, `Invalid`, …), the server's
// message and, for 429 and 503, the Retry-After delay.
//
// Why not DiscoveryV1Api: its serializer rebuilds objects as model classes (timestamps become
// Date, unknown fields vanish), and its ApiException does not hand back the Retry-After header
// in a form the caller can use. The publisher compares the object the server holds with the one
// it wants, field by field, so it reads and writes exactly the JSON the server speaks, through
// the same authenticated transport as listRaw.

import type { KubeConfig } from '@kubernetes/client-node';
import { apiCaller } from './api-caller.ts';
import type { KubeResponse } from './request.ts';

/** An object as the API server sent it. */
export type KubeJson = Readonly<Record<string, unknown>>;

export type KubeVerb = 'get' | 'list' | 'create' | 'replace' | 'delete' | 'patch';

/**
 * A failed API call. `statusCode` 0: no response (connection refused, reset, timeout).
 * `reason` is the Status object's reason (`Conflict`, `AlreadyExists`, `NotFound`, `Invalid`,
 * `TooManyRequests`, …), or '' when the body was not a Status.
 */
export class KubeWriteError extends Error {
  readonly verb: KubeVerb;
  readonly path: string;
  readonly statusCode: number;
  readonly reason: string;
  /** The server's message (for 422: which fields are invalid and why). */
  readonly apiMessage: string;
  /** Retry-After of a 429 or 503, ms; undefined when absent. */
  readonly retryAfterMs: number | undefined;
  override readonly name = 'KubeWriteError';
  constructor(verb: KubeVerb, path: string, statusCode: number, reason: string, apiMessage: string, retryAfterMs?: number, options?: ErrorOptions) {
    super(`${verb} ${path}: ${statusCode === 0 ? '' : `${statusCode} `}${reason ? `${reason}: ` : ''}${apiMessage}`, options);
    this.verb = verb;
    this.path = path;
    this.statusCode = statusCode;
    this.reason = reason;
    this.apiMessage = apiMessage;
    this.retryAfterMs = retryAfterMs;
  }
}

/** Preconditions of a delete: it fails with 409 unless the live object still has both. */
export interface DeletePreconditions {
  readonly uid: string;
  readonly resourceVersion: string;
}

/** One page of a namespace's slices. */
export interface SlicePage {
  readonly items: readonly KubeJson[];
  /** The token of the next page; '' after the last one. */
  readonly continue: string;
}

/** The calls the publisher makes. Implementations: endpointSliceApi, and fakes in tests. */
export interface EndpointSliceApi {
  /** The live slice, or undefined when there is none (404). */
  get(namespace: string, name: string): Promise<KubeJson | undefined>;
  /** One page (at most `limit` items) of every slice in `namespace`, whoever manages it; 410 when `continueToken` expired. */
  list(namespace: string, limit: number, continueToken: string): Promise<SlicePage>;
  /** POST; 409 AlreadyExists when the name is taken. Returns the stored object. */
  create(slice: KubeJson): Promise<KubeJson>;
  /** PUT; the body's metadata.resourceVersion makes it conditional (409 Conflict when stale, 404 when gone). */
  replace(slice: KubeJson): Promise<KubeJson>;
  /** DELETE with preconditions (409 when they fail, 404 when already gone). */
  delete(namespace: string, name: string, pre: DeletePreconditions): Promise<void>;
}

export interface EndpointSliceApiOptions {
  /** Per-request timeout, ms. Defaults to 30_000. */
  readonly timeoutMs?: number;
  /** `User-Agent` sent with every request. Defaults to `slicemesh-publisher`. */
  readonly userAgent?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Collection path of slices in `namespace`. */
export function sliceCollectionPath(namespace: string): string {
  return `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`;
}

/** Path of one slice. */
export function slicePath(namespace: string, name: string): string {
  return `${sliceCollectionPath(namespace)}/${encodeURIComponent(name)}`;
}

/** Retry-After as ms: delta-seconds or an HTTP date (relative to `now`); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The KubeWriteError of a response with an error status (reason and message from its Status body). */
export function kubeWriteErrorOf(verb: KubeVerb, path: string, res: KubeResponse): KubeWriteError {
  const body = res.json;
  const reason = isRecord(body) && typeof body['reason'] === 'string' ? body['reason'] : '';
  const message = isRecord(body) && typeof body['message'] === 'string' ? body['message'] : res.text.slice(0, 300);
  const retryAfter = res.status === 429 || res.status === 503 ? parseRetryAfter(res.headers['retry-after']) : undefined;
  return new KubeWriteError(verb, path, res.status, reason, message, retryAfter);
}

function metaOf(obj: KubeJson): { namespace: string; name: string } {
  const meta = isRecord(obj['metadata']) ? obj['metadata'] : {};
  const namespace = typeof meta['namespace'] === 'string' ? meta['namespace'] : '';
  const name = typeof meta['name'] === 'string' ? meta['name'] : '';
  return { namespace, name };
}

/**
 * The EndpointSlice calls against the API server `kc` points at. Network failures become
 * KubeWriteError with statusCode 0.
 *
 * ### Examples
 * ```ts
 * const api = endpointSliceApi(buildKubeConfig({ type: 'server', url: sim.url }));
 * const live = await api.get('default', 'web-abc12');         // undefined when absent
 * await api.create({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: {...}, ... });
 * ```
 */
export function endpointSliceApi(kc: KubeConfig, opts: EndpointSliceApiOptions = {}): EndpointSliceApi {
  const { send, object } = apiCaller(kc, opts);
  return {
    async get(namespace, name) {
      const path = slicePath(namespace, name);
      const res = await send('get', 'GET', path);
      if (res.status === 404) return undefined;
      if (res.status !== 200) throw kubeWriteErrorOf('get', path, res);
      return object('get', path, res);
    },
    async list(namespace, limit, continueToken) {
      const query = new URLSearchParams({ limit: String(limit) });
      if (continueToken !== '') query.set('continue', continueToken);
      const path = `${sliceCollectionPath(namespace)}?${query}`;
      const res = await send('list', 'GET', path);
      if (res.status !== 200) throw kubeWriteErrorOf('list', path, res);
      const body = object('list', path, res);
      const items = body['items'] ?? [];
      if (!Array.isArray(items)) throw new KubeWriteError('list', path, res.status, '', '"items" is not an array');
      const meta = isRecord(body['metadata']) ? body['metadata'] : {};
      return { items: items.filter(isRecord), continue: typeof meta['continue'] === 'string' ? meta['continue'] : '' };
    },
    async create(slice) {
      const path = sliceCollectionPath(metaOf(slice).namespace);
      const res = await send('create', 'POST', path, slice);
      if (res.status !== 201 && res.status !== 200) throw kubeWriteErrorOf('create', path, res);
      return object('create', path, res);
    },
    async replace(slice) {
      const { namespace, name } = metaOf(slice);
      const path = slicePath(namespace, name);
      const res = await send('replace', 'PUT', path, slice);
      if (res.status !== 200 && res.status !== 201) throw kubeWriteErrorOf('replace', path, res);
      return object('replace', path, res);
    },
    async delete(namespace, name, pre) {
      const path = slicePath(namespace, name);
      const res = await send('delete', 'DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pre.uid, resourceVersion: pre.resourceVersion } });
      if (res.status !== 200 && res.status !== 202) throw kubeWriteErrorOf('delete', path, res);
    },
  };
}
