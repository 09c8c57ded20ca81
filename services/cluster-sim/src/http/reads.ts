// GET of one object or a list, with selectors, paging and Table / metadata-only output.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, notFound } from '../store/api-error.ts';
import { apiVersionOf, toWire } from '../store/kinds.ts';
import { parseFieldSelector, parseLabelSelector } from '../store/selectors.ts';
import type { ObjectFilter } from '../store/selectors.ts';
import type { HandlerContext } from './context.ts';
import { pageOf } from './paging.ts';
import { sendJson } from './respond.ts';
import type { ResourceRoute } from './router.ts';
import { partialMetadata, partialMetadataList, toTable, wantsPartialMetadata, wantsTable } from './table.ts';
import type { IncludeObject } from './table.ts';

export function filterFor(route: ResourceRoute, query: URLSearchParams): ObjectFilter {
  return {
    ...(route.namespace ? { namespace: route.namespace } : {}),
    labels: parseLabelSelector(query.get('labelSelector') ?? undefined),
    fields: parseFieldSelector(query.get('fieldSelector') ?? undefined, route.info),
  };
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  if (v === null || v === '') return 'Metadata';
  if (v === 'None' || v === 'Metadata' || v === 'Object') return v;
  throw badRequest(`includeObject: unsupported value ${JSON.stringify(v)}`);
}

function parseLimit(query: URLSearchParams): number | undefined {
  const v = query.get('limit');
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`limit: must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function handleGet(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const obj = ctx.store.get(route.info.kind, route.namespace, route.name!);
  if (!obj) throw notFound(route.info, route.name!);
  const accept = req.headers.accept;
  if (wantsTable(accept)) {
    return sendJson(res, 200, toTable(route.info, [obj], ctx.clock.now(), { resourceVersion: obj.metadata.resourceVersion }, includeObject(query)));
  }
  sendJson(res, 200, wantsPartialMetadata(accept) ? partialMetadata(obj) : toWire(route.info, obj));
}

export function handleList(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const { info } = route;
  const all = ctx.store.list(info.kind, filterFor(route, query));
  const page = pageOf(all, ctx.store.resourceVersion, ctx.store.historyFloor(info.kind), parseLimit(query), query.get('continue') ?? undefined);
  const listMeta = {
    resourceVersion: page.resourceVersion,
    ...(page.continueToken ? { continue: page.continueToken } : {}),
    ...(page.remainingItemCount !== undefined ? { remainingItemCount: page.remainingItemCount } : {}),
  };
  const accept = req.headers.accept;
  if (wantsTable(accept)) return sendJson(res, 200, toTable(info, page.items, ctx.clock.now(), listMeta, includeObject(query)));
  if (wantsPartialMetadata(accept)) return sendJson(res, 200, partialMetadataList(page.items, listMeta));
  sendJson(res, 200, { kind: info.listKind, apiVersion: apiVersionOf(info), metadata: listMeta, items: info.codec ? page.items.map(info.codec.toWire) : page.items });
}
