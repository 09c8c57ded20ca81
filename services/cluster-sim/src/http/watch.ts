// Watch streams: chunked newline-delimited JSON events, with the upstream semantics for
// resourceVersion (unset/"0": synthetic ADDED for the current state first; N: everything
// after N, or 410 Gone when that history is no longer kept), sendInitialEvents, periodic
// BOOKMARKs, timeoutSeconds, and an ERROR 410 event when an open watch's history is
// compacted away (the stream then ends and clients re-list).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, expired, statusOf } from '../store/api-error.ts';
import type { ApiError } from '../store/api-error.ts';
import { apiVersionOf } from '../store/kinds.ts';
import type { KubeObj } from '../store/types.ts';
import type { TimerHandle } from '../time/clock.ts';
import type { HandlerContext } from './context.ts';
import { filterFor } from './reads.ts';
import { sendError } from './respond.ts';
import type { ResourceRoute } from './router.ts';
import { toTable, wantsTable } from './table.ts';
import { projectEvent, watchStart } from './watch-events.ts';

/** A watcher whose unread output exceeds this is cut off (it resumes from its last event). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

// One serialisation per stored object, shared by every watcher that sends it unchanged.
const objectJson = new WeakMap<KubeObj, string>();
function jsonOf(obj: KubeObj): string {
  let text = objectJson.get(obj);
  if (text === undefined) {
    text = JSON.stringify(obj);
    objectJson.set(obj, text);
  }
  return text;
}

function seconds(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw badRequest(`${name}: must be a non-negative integer`);
  return Number(v);
}

export function handleWatch(ctx: HandlerContext, route: ResourceRoute, query: URLSearchParams, req: IncomingMessage, res: ServerResponse): void {
  const { info } = route;
  const filter = filterFor(route, query);
  const start = watchStart(query.get('resourceVersion'));
  if (!start) throw badRequest(`resourceVersion: invalid value ${JSON.stringify(query.get('resourceVersion'))}`);
  const bookmarks = query.get('allowWatchBookmarks') === 'true' || query.get('allowWatchBookmarks') === '1';
  const sendInitial = query.get('sendInitialEvents') === 'true' || (start.kind === 'initialState' && query.get('sendInitialEvents') !== 'false');
  const timeout = seconds(query, 'timeoutSeconds') ?? 0;
  const table = wantsTable(req.headers.accept);
  const now = () => ctx.clock.now();

  // Decide 410 before any byte of the stream is written, so it is a plain HTTP error.
  const floor = ctx.store.historyFloor(info.kind);
  if (start.kind === 'after' && !query.get('sendInitialEvents') && start.rv < floor) {
    return sendError(res, expired(`too old resource version: ${start.rv} (${floor})`));
  }

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  ctx.openWatches.add(res);
  let bookmarkTimer: TimerHandle | undefined;
  let timeoutTimer: TimerHandle | undefined;
  let stopWatch = (): void => {};
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    stopWatch();
    if (bookmarkTimer) ctx.clock.clearTimer(bookmarkTimer);
    if (timeoutTimer) ctx.clock.clearTimer(timeoutTimer);
    ctx.openWatches.delete(res);
    if (!res.writableEnded) res.end();
  };
  const write = (type: string, object: KubeObj): void => {
    if (closed) return;
    const body = table && type !== 'BOOKMARK' && type !== 'ERROR'
      ? JSON.stringify(toTable(info, [object], now(), { resourceVersion: object.metadata.resourceVersion }))
      : type === 'BOOKMARK' || type === 'ERROR' ? JSON.stringify(object)
        : info.codec ? JSON.stringify(info.codec.toWire(object)) : jsonOf(object);
    res.write(`{"type":"${type}","object":${body}}\n`);
    ctx.metrics.watchEvent(info.resource, type);
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      ctx.log('warn', 'watch cut off: client not reading', { resource: info.resource });
      close();
    }
  };
  const bookmark = (annotations?: Record<string, string>): void =>
    write('BOOKMARK', { kind: info.kind, apiVersion: apiVersionOf(info), metadata: { name: '', resourceVersion: String(ctx.store.resourceVersion), ...(annotations ? { annotations } : {}) } });

  req.on('close', close);
  res.on('close', close);

  const onExpired = (err: ApiError): void => {
    ctx.metrics.gone('watch');
    write('ERROR', statusOf(err) as unknown as KubeObj);
    close();
  };
  const onEvent = (event: Parameters<typeof projectEvent>[0]): void => {
    const wire = projectEvent(event, filter);
    if (wire) write(wire.type, wire.object);
  };
  if (sendInitial) {
    for (const obj of ctx.store.list(info.kind, filter)) write('ADDED', obj);
    if (bookmarks && query.get('sendInitialEvents') === 'true') bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  // Listing and subscribing happen in one synchronous step: no event can fall in between.
  stopWatch = ctx.store.watch(info.kind, { onEvent, onExpired }, start.kind === 'after' && !sendInitial ? start.rv : undefined);

  if (bookmarks && ctx.bookmarkIntervalMs > 0) {
    const tick = (): void => {
      if (closed) return;
      bookmark();
      bookmarkTimer = ctx.clock.setTimer(tick, ctx.bookmarkIntervalMs);
    };
    bookmarkTimer = ctx.clock.setTimer(tick, ctx.bookmarkIntervalMs);
  }
  const limit = Math.min(...[timeout, ctx.maxWatchSeconds].filter((s) => s > 0));
  if (Number.isFinite(limit)) timeoutTimer = ctx.clock.setTimer(close, limit * 1000);
}
