// The HTTP endpoints every service exposes for Kubernetes probes and Prometheus scrapes.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A readiness answer; `reason` is the 503 body when not ready. */
export interface ReadyStatus {
  readonly ready: boolean;
  readonly reason?: string;
}

/** Options for `startHealthServer`. */
export interface HealthServerOptions {
  /** TCP port; 0 picks a free one (read it back from the result). */
  readonly port: number;
  /** Interface to bind; defaults to `0.0.0.0`. */
  readonly host?: string;
  /** Served at /metrics. */
  readonly registry: Registry;
  /** Readiness, e.g. "the consumer has caught up" (habit 5). A throw counts as not ready. */
  readonly ready: () => boolean | ReadyStatus | Promise<boolean | ReadyStatus>;
  /** Liveness; defaults to always live. */
  readonly live?: () => boolean;
}

/** A running health server. */
export interface HealthServer {
  /** The bound port (the ephemeral one when 0 was asked for). */
  readonly port: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const TEXT = { 'content-type': 'text/plain; charset=utf-8' };

async function readiness(check: HealthServerOptions['ready']): Promise<ReadyStatus> {
  try {
    const r = await check();
    return typeof r === 'boolean' ? { ready: r } : r;
  } catch (e) {
    return { ready: false, reason: `readiness check failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}

async function handle(options: HealthServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...TEXT, allow: 'GET, HEAD' }).end('method not allowed\n');
    return;
  }
  switch (path) {
    case '/metrics': {
      const body = await options.registry.metrics();
      res.writeHead(200, { 'content-type': options.registry.contentType }).end(body);
      return;
    }
    case '/healthz': {
      const live = options.live ? options.live() : true;
      res.writeHead(live ? 200 : 503, TEXT).end(live ? 'ok\n' : 'not live\n');
      return;
    }
    case '/readyz': {
      const status = await readiness(options.ready);
      res.writeHead(status.ready ? 200 : 503, TEXT).end(status.ready ? 'ok\n' : `${status.reason ?? 'not ready'}\n`);
      return;
    }
    default:
      res.writeHead(404, TEXT).end('not found\n');
  }
}

/**
 * Serves `/metrics` (Prometheus text from `registry`), `/healthz` (200 `ok` while live, else
 * 503) and `/readyz` (200 `ok` when ready, else 503 with the reason). Other paths are 404,
 * methods other than GET/HEAD 405. Resolves once listening; rejects if the port is taken.
 *
 * ### Examples
 * ```ts
 * const health = await startHealthServer({ port: 9090, registry: metrics.registry, ready: () => caughtUp });
 * await health.close();
 * ```
 */
export function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    handle(options, req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, TEXT);
      res.end(`internal error: ${e instanceof Error ? e.message : String(e)}\n`);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((err) => (err ? fail(err) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}
