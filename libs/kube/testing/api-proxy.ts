// A hostile network between a client and an API server, for integration tests: forwards
// requests to `target`, can rewrite every object in list responses and watch streams (to serve
// objects the server itself would never accept), cut open connections abruptly, refuse
// connections for a while, and answer 404 under a path (an API group not installed) — without
// touching the server's state.

import { createServer, request } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Rewrites one object (a list item or a watch event's object); may return anything at all. */
export type Mutate = (obj: Record<string, unknown>) => unknown;

export interface ApiProxy {
  readonly url: string;
  readonly port: number;
  /** Applied to every object passing through; identity by default. Can be swapped any time. */
  mutate: Mutate;
  /** Watch requests seen so far (path and query), in order. */
  readonly watches: readonly string[];
  /** List requests seen so far. */
  readonly lists: readonly string[];
  /** Destroys every open connection at once, as a network cut would (no clean end). */
  cut(): void;
  /** Cuts and stops listening: connections are refused until resume(). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  /** Answers 404 NotFound (or `code`, e.g. 403 Forbidden) for every path under `prefix`, as a server without that API group, and cuts open connections. */
  hide(prefix: string, code?: 403 | 404): Promise<void>;
  /** Forwards everything again. */
  unhide(): Promise<void>;
  close(): Promise<void>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function rewriteList(text: string, mutate: Mutate): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  if (isRecord(body) && Array.isArray(body['items'])) {
    return JSON.stringify({ ...body, items: body['items'].map((i: unknown) => (isRecord(i) ? mutate(i) : i)) });
  }
  return isRecord(body) && typeof body['kind'] === 'string' && body['kind'] !== 'Status' ? JSON.stringify(mutate(body)) : text;
}

function rewriteEvent(line: string, mutate: Mutate): string {
  let ev: unknown;
  try {
    ev = JSON.parse(line);
  } catch {
    return line;
  }
  if (!isRecord(ev) || !isRecord(ev['object']) || ev['type'] === 'ERROR' || ev['type'] === 'BOOKMARK') return line;
  return JSON.stringify({ ...ev, object: mutate(ev['object']) });
}

const HIDDEN_STATUS = {
  403: { reason: 'Forbidden', message: 'forbidden: the user cannot list this resource' },
  404: { reason: 'NotFound', message: 'the server could not find the requested resource' },
} as const;

function forward(target: URL, proxy: ApiProxy & { log: (kind: 'watch' | 'list', url: string) => void; hidden: { prefix: string; code: 403 | 404 } | undefined }, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', target);
  if (proxy.hidden !== undefined && url.pathname.startsWith(proxy.hidden.prefix)) {
    const { code } = proxy.hidden;
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', ...HIDDEN_STATUS[code], details: {}, code }));
    return;
  }
  const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
  if (req.method === 'GET') proxy.log(watch ? 'watch' : 'list', `${url.pathname}${url.search}`);
  const upstream = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (up) => {
    // Bodies may change length when rewritten: let Node frame them (chunked) instead.
    const { 'content-length': _length, ...headers } = up.headers;
    res.writeHead(up.statusCode ?? 502, headers);
    if (watch && up.statusCode === 200) {
      let buffered = '';
      up.setEncoding('utf8');
      up.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          res.write(`${line === '' ? '' : rewriteEvent(line, proxy.mutate)}\n`);
        }
      });
      up.on('end', () => res.end(buffered));
      up.on('error', () => res.destroy());
      return;
    }
    const chunks: Buffer[] = [];
    up.on('data', (c: Buffer) => chunks.push(c));
    up.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const out = req.method === 'GET' && up.statusCode === 200 ? rewriteList(text, proxy.mutate) : text;
      res.end(out);
    });
  });
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
}

/** Starts a proxy to `target` (e.g. a cluster-sim URL) on `port` (default: any free one). */
export async function startApiProxy(target: string, port = 0): Promise<ApiProxy> {
  const base = new URL(target);
  const sockets = new Set<Socket>();
  const watches: string[] = [];
  const lists: string[] = [];
  let server: Server;
  const proxy = {
    url: '',
    port: 0,
    mutate: ((o) => o) as Mutate,
    hidden: undefined as { prefix: string; code: 403 | 404 } | undefined,
    watches,
    lists,
    log: (kind: 'watch' | 'list', url: string) => (kind === 'watch' ? watches : lists).push(url),
    cut: () => {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    down: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      proxy.cut();
      await closed;
    },
    resume: () => listen(proxy.port),
    hide: async (prefix: string, code: 403 | 404 = 404) => {
      proxy.hidden = { prefix, code };
      proxy.cut();
    },
    unhide: async () => {
      proxy.hidden = undefined;
    },
    close: () => proxy.down(),
  };
  function listen(p: number): Promise<void> {
    server = createServer((req, res) => forward(base, proxy, req, res));
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, '127.0.0.1', () => {
        server.off('error', reject);
        proxy.port = (server.address() as AddressInfo).port;
        proxy.url = `http://127.0.0.1:${proxy.port}`;
        resolve();
      });
    });
  }
  await listen(port);
  return proxy;
}
