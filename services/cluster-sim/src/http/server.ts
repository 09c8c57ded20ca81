// The HTTP front of the simulator: routes requests to discovery documents and resource
// handlers, and turns failures into Kubernetes Status responses.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Log } from '../log.ts';
import { createSimMetrics } from '../metrics.ts';
import type { SimMetrics } from '../metrics.ts';
import { ApiError } from '../store/api-error.ts';
import { servedWithout } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../time/clock.ts';
import type { HandlerContext } from './context.ts';
import { apiGroup, apiGroupList, apiResourceList, apiVersions, versionInfo } from './discovery.ts';
import { openapiGroupVersion, openapiRoot } from './openapi.ts';
import { handleGet, handleList } from './reads.ts';
import { sendError, sendJson } from './respond.ts';
import { parseRoute } from './router.ts';
import type { ResourceRoute, Route } from './router.ts';
import { handleWatch } from './watch.ts';
import { handleCreate, handleDelete, handleDeleteCollection, handlePatch, handleUpdate } from './writes.ts';

export interface ApiServerOptions {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly log: Log;
  /** BOOKMARK period for watches with allowWatchBookmarks=true. Defaults to 10 s. */
  readonly bookmarkIntervalMs?: number;
  /** Longest a watch stays open (0 = until the client leaves). Defaults to 0. */
  readonly maxWatchSeconds?: number;
  /** Served at /metrics. Defaults to a fresh registry. */
  readonly metrics?: SimMetrics;
  /** /readyz answers 503 while this is false. Defaults to always ready. */
  readonly ready?: () => boolean;
  /**
   * API groups left out of discovery and answered with 404, as a cluster without their CRDs
   * (e.g. MCS_GROUP). The store still holds such kinds; only the API does not offer them.
   */
  readonly withoutGroups?: readonly string[];
}

export interface ApiServer {
  readonly server: Server;
  readonly metrics: SimMetrics;
  /** Ends every open watch stream (clients see a clean end and would re-watch). */
  endWatches(): void;
}

const isTrue = (v: string | null): boolean => v === 'true' || v === '1';

function methodNotAllowed(method: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${method})`);
}

// The verb as kube-apiserver's request metrics name it.
function requestVerb(route: Route, method: string, query: URLSearchParams): string {
  if (route.type !== 'resource') return method.toLowerCase();
  const item = route.name !== undefined;
  switch (method) {
    case 'GET': return route.watchPrefix || isTrue(query.get('watch')) ? 'watch' : item ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return item ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}

function text(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(body);
}

async function serveMetrics(ctx: HandlerContext, res: ServerResponse): Promise<void> {
  ctx.metrics.observe(ctx.store, ctx.openWatches.size);
  const body = await ctx.metrics.registry.metrics();
  res.writeHead(200, { 'Content-Type': ctx.metrics.registry.contentType });
  res.end(body);
}

function serveDocument(ctx: HandlerContext, ready: () => boolean, served: readonly KindInfo[], route: Exclude<Route, ResourceRoute>, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
  if (route.type === 'simCompact') {
    // As an etcd compaction at the current revision: every open watch gets ERROR 410 and ends,
    // so clients re-list (a chaos harness cutting the watch streams of a separate process).
    if (req.method !== 'POST') throw methodNotAllowed(req.method ?? '');
    ctx.store.compact();
    return sendJson(res, 200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', message: `history compacted at resourceVersion ${ctx.store.resourceVersion}` });
  }
  // A path nothing serves is 404 whatever the method, as the API server's not-found handler answers
  // (a write to a group without its CRDs, say); 405 is for the documents' paths only.
  if (route.type === 'notFound') throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  if (req.method !== 'GET' && req.method !== 'HEAD') throw methodNotAllowed(req.method ?? '');
  switch (route.type) {
    case 'apiVersions': return sendJson(res, 200, apiVersions(req.socket.localAddress ?? '127.0.0.1', served));
    case 'groupList': return sendJson(res, 200, apiGroupList(served));
    case 'group': return sendJson(res, 200, apiGroup(route.group, served));
    case 'resourceList': return sendJson(res, 200, apiResourceList(route.group, route.version, served));
    case 'version': return sendJson(res, 200, versionInfo());
    case 'openapiRoot': return sendJson(res, 200, openapiRoot(served));
    case 'openapiGroupVersion': return sendJson(res, 200, openapiGroupVersion(route.group, route.version, served));
    case 'health':
      if (route.check === 'readyz' && !ready()) return text(res, 503, 'not ready: the scenario is not built yet or the server is shutting down');
      return text(res, 200, 'ok');
    case 'metrics': return serveMetrics(ctx, res);
  }
}

async function serveResource(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const sub = route.subresource;
  if (sub !== undefined && sub !== 'status') throw new ApiError(404, 'NotFound', `the server could not find the requested resource (subresource ${sub})`);
  const item = route.name !== undefined;
  switch (req.method) {
    case 'GET':
      if (route.watchPrefix || isTrue(query.get('watch'))) {
        if (item) {
          // Watching one object is a collection watch narrowed to its name.
          const q = new URLSearchParams(query);
          q.set('fieldSelector', [query.get('fieldSelector'), `metadata.name=${route.name}`].filter(Boolean).join(','));
          return handleWatch(ctx, { ...route, name: undefined }, q, req, res);
        }
        return handleWatch(ctx, route, query, req, res);
      }
      return item ? handleGet(ctx, route, query, req, res) : handleList(ctx, route, query, req, res);
    case 'POST':
      if (item) throw methodNotAllowed('POST');
      return handleCreate(ctx, route, query, req, res);
    case 'PUT':
      if (!item) throw methodNotAllowed('PUT');
      return handleUpdate(ctx, route, query, req, res);
    case 'PATCH':
      if (!item) throw methodNotAllowed('PATCH');
      return handlePatch(ctx, route, query, req, res);
    case 'DELETE':
      if (sub) throw methodNotAllowed('DELETE');
      return item ? handleDelete(ctx, route, query, req, res) : handleDeleteCollection(ctx, route, query, req, res);
    default:
      throw methodNotAllowed(req.method ?? '');
  }
}

export function createApiServer(options: ApiServerOptions): ApiServer {
  const ctx: HandlerContext = {
    store: options.store,
    clock: options.clock,
    log: options.log,
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 10_000,
    maxWatchSeconds: options.maxWatchSeconds ?? 0,
    openWatches: new Set(),
    metrics: options.metrics ?? createSimMetrics(),
  };
  const ready = options.ready ?? (() => true);
  const served = servedWithout(options.withoutGroups ?? []);
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://cluster-sim');
    const started = Date.now();
    let route: Route = { type: 'notFound' };
    res.on('finish', () => ctx.log('debug', 'request', { method: req.method, path: url.pathname, query: url.search, code: res.statusCode, ms: Date.now() - started }));
    // 'close' also fires when the client leaves early (watches mostly end that way).
    res.on('close', () => {
      const resource = route.type === 'resource' ? route.info.resource + (route.subresource === 'status' ? '/status' : '') : '';
      ctx.metrics.request(requestVerb(route, req.method ?? '', url.searchParams), resource, res.statusCode);
      if (res.statusCode === 410) ctx.metrics.gone('response');
    });
    const fail = (err: unknown): void => {
      const apiErr = err instanceof ApiError ? err : new ApiError(500, 'InternalError', `an error on the server has prevented the request from succeeding: ${(err as Error)?.message ?? String(err)}`);
      if (apiErr.code >= 500) ctx.log('error', 'request failed', { method: req.method, path: url.pathname, err: String((err as Error)?.stack ?? err) });
      if (res.headersSent) return void res.destroy();
      sendError(res, apiErr);
    };
    try {
      route = parseRoute(url.pathname, served);
      const done = route.type === 'resource' ? serveResource(ctx, route, url.searchParams, req, res) : serveDocument(ctx, ready, served, route, req, res);
      done?.catch(fail);
    } catch (err) {
      fail(err);
    }
  });
  return {
    server,
    metrics: ctx.metrics,
    endWatches: () => {
      for (const res of [...ctx.openWatches]) res.end();
      ctx.openWatches.clear();
    },
  };
}
