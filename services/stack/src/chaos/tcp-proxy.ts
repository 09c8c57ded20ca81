// A TCP proxy in front of NATS for one client (an agent): `cut(ms)` drops its connections and
// refuses new ones for that long, as a network partition between that client and the server would,
// while every other client keeps its connection.

import { createConnection, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  /** `nats://127.0.0.1:<port>`-style URL with the proxy's port in place of the target's. */
  readonly port: number;
  /** True while cut. */
  isCut(): boolean;
  /** Drops every open connection and refuses new ones for `ms`. Resolves when the cut ends. */
  cut(ms: number): Promise<void>;
  /** Ends a cut now (the pending cut() resolves with it). */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let cutUntil = 0;
  let endCut: () => void = () => {};
  const isCut = (): boolean => Date.now() < cutUntil;
  const server: Server = createServer((client) => {
    if (isCut()) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: targetHost, port: targetPort });
    open.add(client);
    open.add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    isCut,
    cut: async (ms) => {
      cutUntil = Date.now() + ms;
      for (const s of open) s.destroy();
      open.clear();
      await new Promise<void>((r) => {
        const timer = setTimeout(r, ms);
        endCut = () => {
          clearTimeout(timer);
          r();
        };
      });
    },
    restore: () => {
      cutUntil = 0;
      endCut();
    },
    close: async () => {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
