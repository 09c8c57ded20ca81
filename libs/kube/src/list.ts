// Listing a collection as raw JSON, page by page.
//
// Why not CoreV1Api: its deserializer turns objects into model classes, timestamps into Date
// (an unparsable one becomes an Invalid Date that later serialises as null, silently) and
// drops what it does not know. The watcher must see exactly what the server sent, so that a
// malformed object is rejected with its real field, as the watch stream (raw JSON) already is.

import { request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A failed API call. `statusCode` is the HTTP status (0 when no response arrived). */
export class KubeApiError extends Error {
  readonly path: string;
  readonly statusCode: number;
  readonly reason: string;
  override readonly name = 'KubeApiError';
  constructor(
    path: string,
    statusCode: number,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(`GET ${path}: ${statusCode === 0 ? '' : `${statusCode} `}${reason}`, options);
    this.path = path;
    this.statusCode = statusCode;
    this.reason = reason;
  }
}

/** One consistent snapshot of a collection. */
export interface RawList {
  /** The collection's resourceVersion: a watch from it sees every later change. */
  readonly resourceVersion: string;
  /** Items as sent: objects without kind/apiVersion, possibly malformed. */
  readonly items: readonly unknown[];
}

export interface ListOptions {
  /** Items per page. Defaults to 500 (as client-go's pager). */
  readonly pageSize?: number;
  /** Per-request timeout, ms. Defaults to 60_000. */
  readonly timeoutMs?: number;
  /** Only objects matching this label selector (the API's syntax, e.g. `app=web`, `k notin (a,b)`). */
  readonly labelSelector?: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

async function getJson(kc: KubeConfig, path: string, timeoutMs: number): Promise<unknown> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new KubeApiError(path, 0, 'the kubeconfig has no current cluster');
  const opts: RequestOptions = {};
  // Adds the agent (TLS material, proxy), bearer token or basic auth of the current context.
  await kc.applyToHTTPSOptions(opts);
  const url = new URL(server.replace(/\/+$/, '') + path);
  const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = send(url, { ...opts, method: 'GET', headers: { ...opts.headers, accept: 'application/json' }, timeout: timeoutMs }, resolve);
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new KubeApiError(path, 0, err.message, { cause: err })));
    req.end();
  });
  let text: string;
  try {
    text = await readBody(res);
  } catch (err) {
    throw new KubeApiError(path, res.statusCode ?? 0, `response cut off: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const status = res.statusCode ?? 0;
  if (status !== 200) {
    const message = isRecord(body) && typeof body['message'] === 'string' ? body['message'] : text.slice(0, 200);
    throw new KubeApiError(path, status, message);
  }
  if (!isRecord(body)) throw new KubeApiError(path, status, 'the response is not a JSON object');
  return body;
}

/**
 * Lists every object at `path` (e.g. `/api/v1/pods`: all namespaces) following `continue`
 * tokens. Returns the first page's resourceVersion and all items in server order; an empty
 * collection gives `items: []`. Throws KubeApiError on any failed page (statusCode 410 when a
 * continue token expired: list again from the start).
 */
export async function listRaw(kc: KubeConfig, path: string, opts: ListOptions = {}): Promise<RawList> {
  const pageSize = opts.pageSize ?? 500;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const items: unknown[] = [];
  let resourceVersion: string | undefined;
  let token = '';
  do {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (opts.labelSelector !== undefined) query.set('labelSelector', opts.labelSelector);
    if (token) query.set('continue', token);
    const page = (await getJson(kc, `${path}?${query}`, timeoutMs)) as Record<string, unknown>;
    const meta = isRecord(page['metadata']) ? page['metadata'] : {};
    const pageItems = page['items'] ?? [];
    if (!Array.isArray(pageItems)) throw new KubeApiError(path, 200, '"items" is not an array');
    items.push(...pageItems);
    resourceVersion ??= typeof meta['resourceVersion'] === 'string' ? meta['resourceVersion'] : '';
    token = typeof meta['continue'] === 'string' ? meta['continue'] : '';
  } while (token !== '');
  return { resourceVersion: resourceVersion ?? '', items };
}
