// The web view's routes as one function of (method, URL) → reply, so tests call it without a
// socket. JSON endpoints answer errors as {"error": "..."} with 400 (a bad point or parameter),
// 404 (an unknown Service, node or path) or 500; other paths get a small HTML error page.
//   GET /                      the page (and /app.js, /style.css)
//   GET /api/summary           {source, first, latest}
//   GET /api/timeline?buckets=N  [{from, to, events}], N in 1..500 (default 60)
//   GET /api/state?at=SPEC     the state as of SPEC: a sequence, an RFC 3339 time, first or latest (default)
//   GET /api/why?at=SPEC&node=N&service=NS/NAME   why node N sends (or not) to each endpoint
//   GET /api/endpoint?at=SPEC&service=NS/NAME&ip=IP   which nodes send to one endpoint, and why
import type { Asset } from './assets.ts';
import type { UiEngine } from './engine.ts';
import { UiInputError, UiNotFoundError } from './ui-errors.ts';

export interface Reply {
  readonly status: number;
  readonly type: string;
  readonly body: string | Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const json = (status: number, value: unknown): Reply => ({ status, type: JSON_TYPE, body: `${JSON.stringify(value)}\n` });

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function errorPage(status: number, title: string, message: string): Reply {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} ${escapeHtml(title)} — slicemesh</title><link rel="stylesheet" href="/style.css"></head><body class="error-page"><main><h1>${status} ${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="/">Back to the web view</a></p></main></body></html>\n`;
  return { status, type: 'text/html; charset=utf-8', body };
}

export const DEFAULT_BUCKETS = 60;
const MAX_BUCKETS = 500;

function bucketsOf(q: URLSearchParams): number {
  const text = q.get('buckets');
  if (text === null) return DEFAULT_BUCKETS;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_BUCKETS) throw new UiInputError(`buckets must be a whole number in 1..${MAX_BUCKETS}, not ${JSON.stringify(text)}`);
  return n;
}

function required(q: URLSearchParams, name: string, example: string): string {
  const v = q.get(name);
  if (v === null || v === '') throw new UiInputError(`missing parameter ${name} (e.g. ${name}=${example})`);
  return v;
}

/** `ns/name` → its parts; anything else is a UiInputError. */
export function parseServiceRef(text: string): { namespace: string; name: string } {
  const m = /^([^/]+)\/([^/]+)$/.exec(text);
  if (m === null) throw new UiInputError(`service must be <namespace>/<name>, not ${JSON.stringify(text)}`);
  return { namespace: m[1] as string, name: m[2] as string };
}

async function api(engine: UiEngine, path: string, q: URLSearchParams): Promise<Reply | undefined> {
  const at = q.get('at') ?? 'latest';
  switch (path) {
    case '/api/summary':
      return json(200, await engine.summary());
    case '/api/timeline':
      return json(200, await engine.timeline(bucketsOf(q)));
    case '/api/state':
      return json(200, await engine.state(at));
    case '/api/why': {
      const node = required(q, 'node', 'worker-a-1');
      const service = parseServiceRef(required(q, 'service', 'shop/web'));
      return json(200, await engine.why(at, node, service));
    }
    case '/api/endpoint': {
      const service = parseServiceRef(required(q, 'service', 'shop/web'));
      return json(200, await engine.endpoint(at, service, required(q, 'ip', '10.1.0.5')));
    }
    default:
      return undefined;
  }
}

/** Answers one request. Never throws: engine failures become 500 with their message. */
export async function route(engine: UiEngine, assets: ReadonlyMap<string, Asset>, method: string, rawUrl: string): Promise<Reply> {
  const url = new URL(rawUrl, 'http://ui.invalid');
  const isApi = url.pathname.startsWith('/api/');
  if (method !== 'GET' && method !== 'HEAD') return isApi ? json(405, { error: `method ${method} not allowed; the web view only reads` }) : errorPage(405, 'Method not allowed', `The web view only reads; ${method} is not allowed.`);
  if (url.pathname === '/healthz') return { status: 200, type: 'text/plain; charset=utf-8', body: 'ok\n' };
  const asset = assets.get(url.pathname === '/index.html' ? '/' : url.pathname);
  if (asset !== undefined) return { status: 200, type: asset.type, body: asset.body };
  if (!isApi) return errorPage(404, 'Not found', `There is no page at ${url.pathname}.`);
  try {
    return (await api(engine, url.pathname, url.searchParams)) ?? json(404, { error: `no endpoint ${url.pathname}; there are /api/summary, /api/timeline, /api/state, /api/why and /api/endpoint` });
  } catch (err) {
    if (err instanceof UiInputError) return json(400, { error: err.message });
    if (err instanceof UiNotFoundError) return json(404, { error: err.message });
    return json(500, { error: `internal error: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}` });
  }
}
