// POST, PUT, PATCH and DELETE on resources, turned into store operations.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, notFound } from '../store/api-error.ts';
import { apiVersionOf, toWire } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';
import type { DeleteOptions } from '../store/object-store.ts';
import type { KubeObj } from '../store/types.ts';
import { isRecord } from '../store/validation.ts';
import type { HandlerContext } from './context.ts';
import { jsonPatch, mergePatch, patchTypeOf, strategicMergePatch } from './patch.ts';
import { filterFor } from './reads.ts';
import { decodeProtobufBody } from './protobuf.ts';
import { parseBody, readBody, readBodyBytes, sendJson, successStatus } from './respond.ts';
import type { ResourceRoute } from './router.ts';

function isDryRun(query: URLSearchParams, body?: Record<string, unknown>): boolean {
  const dry = body?.['dryRun'];
  return query.getAll('dryRun').includes('All') || (Array.isArray(dry) && dry.includes('All'));
}

/** A body in the route's form, in the stored form (views convert). */
function fromWire(info: KindInfo, obj: KubeObj): KubeObj {
  return info.codec ? info.codec.fromWire(obj) : obj;
}

/**
 * Reads the body as an object of the route's kind, with namespace and name checked against
 * the URL, in the stored form.
 */
async function objectBody(route: ResourceRoute, req: IncomingMessage): Promise<KubeObj> {
  const contentType = req.headers['content-type'];
  const bytes = await readBodyBytes(req);
  // kubectl's typed clients (e.g. `kubectl create namespace`) send protobuf.
  const body = /protobuf/i.test(contentType ?? '') ? decodeProtobufBody(bytes) : parseBody(bytes.toString('utf8'), contentType);
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object');
  const meta = isRecord(body['metadata']) ? body['metadata'] : {};
  if (route.namespace && meta['namespace'] !== undefined && meta['namespace'] !== '' && meta['namespace'] !== route.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  if (route.name && meta['name'] !== undefined && meta['name'] !== route.name) {
    throw badRequest(`the name of the object (${String(meta['name'])}) does not match the name on the URL (${route.name})`);
  }
  if (body['kind'] !== undefined && body['kind'] !== route.info.kind) {
    throw badRequest(`the object kind ${String(body['kind'])} does not match the resource kind ${route.info.kind}`);
  }
  const apiVersion = apiVersionOf(route.info);
  // A body of another version would lose its renamed fields (a core Event sent to events.k8s.io).
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== '' && body['apiVersion'] !== apiVersion) {
    throw badRequest(`the API version in the data (${String(body['apiVersion'])}) does not match the expected API version (${apiVersion})`);
  }
  return fromWire(route.info, {
    ...body,
    apiVersion,
    kind: route.info.kind,
    metadata: { ...meta, ...(route.namespace ? { namespace: route.namespace } : {}), ...(route.name ? { name: route.name } : {}) },
  } as KubeObj);
}

// API creates reset status for kinds whose status belongs to a controller; a Node keeps it
// so that `kubectl apply` of a node manifest can set allocatable CPU and conditions.
function resetsStatus(route: ResourceRoute): boolean {
  return route.info.statusSubresource && route.info.kind !== 'Node';
}

export async function handleCreate(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (route.info.namespaced && !route.namespace) throw new ApiError(405, 'MethodNotAllowed', 'create requires a namespaced path');
  const obj = await objectBody(route, req);
  const created = ctx.store.create(route.info.kind, obj, { resetStatus: resetsStatus(route), dryRun: isDryRun(query), as: route.info });
  sendJson(res, 201, toWire(route.info, created));
}

export async function handleUpdate(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const obj = await objectBody(route, req);
  const dryRun = isDryRun(query);
  const as = route.info;
  if (!route.subresource && route.info.allowCreateOnUpdate && !ctx.store.get(route.info.kind, route.namespace, route.name!)) {
    return sendJson(res, 201, toWire(as, ctx.store.create(route.info.kind, obj, { dryRun, as })));
  }
  const updated = ctx.store.update(route.info.kind, obj, { scope: route.subresource === 'status' ? 'status' : 'main', dryRun, as });
  sendJson(res, 200, toWire(as, updated));
}

export async function handlePatch(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const type = patchTypeOf(req.headers['content-type']);
  if (!type) throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json`);
  const text = await readBody(req);
  let patch: unknown;
  try {
    patch = type === 'apply' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw badRequest(`the patch could not be decoded: ${(err as Error).message}`);
  }
  const { info } = route;
  const dryRun = isDryRun(query);
  const current = ctx.store.get(info.kind, route.namespace, route.name!);
  if (!current) {
    // Server-side apply creates what does not exist yet.
    if (type !== 'apply' || !isRecord(patch)) throw notFound(info, route.name!);
    const meta = isRecord(patch['metadata']) ? patch['metadata'] : {};
    const obj = { ...patch, apiVersion: apiVersionOf(info), kind: info.kind, metadata: { ...meta, name: route.name, ...(route.namespace ? { namespace: route.namespace } : {}) } } as KubeObj;
    return sendJson(res, 201, toWire(info, ctx.store.create(info.kind, fromWire(info, obj), { resetStatus: resetsStatus(route), dryRun, as: info })));
  }
  // Patches apply to the object as this resource shows it.
  const shown = toWire(info, current);
  const patched =
    type === 'json' ? jsonPatch(shown, patch)
      : type === 'merge' ? mergePatch(shown, patch)
        : strategicMergePatch(shown, patch);
  if (!isRecord(patched) || !isRecord(patched['metadata'])) throw badRequest('the patch removed the object metadata');
  const meta = patched['metadata'];
  if (meta['name'] !== route.name || (route.namespace && meta['namespace'] !== route.namespace)) {
    throw badRequest('a patch may not change the name or namespace of an object');
  }
  const updated = ctx.store.update(info.kind, fromWire(info, patched as KubeObj), { scope: route.subresource === 'status' ? 'status' : 'main', dryRun, as: info });
  sendJson(res, 200, toWire(info, updated));
}

function deleteOptions(query: URLSearchParams, body: unknown): DeleteOptions {
  const opts = isRecord(body) ? body : {};
  const q = query.get('gracePeriodSeconds');
  const grace = q !== null && q !== '' ? Number(q) : opts['gracePeriodSeconds'];
  if (grace !== undefined && (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0)) throw badRequest('gracePeriodSeconds: must be a non-negative integer');
  const pre = isRecord(opts['preconditions']) ? opts['preconditions'] : undefined;
  return {
    ...(grace !== undefined ? { gracePeriodSeconds: grace } : {}),
    ...(pre ? { preconditions: { uid: pre['uid'] as string | undefined, resourceVersion: pre['resourceVersion'] as string | undefined } } : {}),
    dryRun: isDryRun(query, opts),
  };
}

export async function handleDelete(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseBody(await readBody(req), req.headers['content-type']);
  const { info } = route;
  const result = ctx.store.delete(info.kind, route.namespace, route.name!, { ...deleteOptions(query, body), as: info });
  if (info.returnDeletedObject || !result.removed) return sendJson(res, 200, toWire(info, result.object));
  sendJson(res, 200, successStatus({ name: route.name, ...(info.group ? { group: info.group } : {}), kind: info.resource, uid: result.object.metadata.uid }));
}

export async function handleDeleteCollection(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = parseBody(await readBody(req), req.headers['content-type']);
  const { info } = route;
  const options = { ...deleteOptions(query, body), as: info };
  const items: KubeObj[] = [];
  for (const obj of ctx.store.list(info.kind, filterFor(route, query))) {
    try {
      items.push(toWire(info, ctx.store.delete(info.kind, obj.metadata.namespace, obj.metadata.name, options).object));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  sendJson(res, 200, { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: { resourceVersion: String(ctx.store.resourceVersion) }, items });
}
