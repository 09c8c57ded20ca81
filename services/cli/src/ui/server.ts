// The web view's HTTP server: node:http around `route`. Binds to 127.0.0.1 unless told
// otherwise — the view reads the whole log, which is nobody else's business by default.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Asset } from './assets.ts';
import { loadAssets } from './assets.ts';
import type { UiEngine } from './engine.ts';
import { route } from './routes.ts';

export interface UiServerOptions {
  readonly engine: UiEngine;
  /** Defaults to 127.0.0.1. */
  readonly host?: string;
  /** Defaults to 0 (any free port). */
  readonly port?: number;
  /** Defaults to the page's files read from their usual place (loadAssets()). */
  readonly assets?: ReadonlyMap<string, Asset>;
}

export interface UiServer {
  /** e.g. http://127.0.0.1:8080/ */
  readonly url: string;
  /** Stops listening and closes open connections; does not close the engine. Idempotent. */
  close(): Promise<void>;
}

/** Starts the server and resolves once it listens; rejects when the port cannot be bound. */
export async function startUiServer(options: UiServerOptions): Promise<UiServer> {
  const assets = options.assets ?? (await loadAssets());
  const server = createServer((req, res) => {
    void route(options.engine, assets, req.method ?? 'GET', req.url ?? '/').then((reply) => {
      res.writeHead(reply.status, { 'content-type': reply.type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      res.end(req.method === 'HEAD' ? undefined : reply.body);
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  // Listening on every address: print one that works from this machine.
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
