import { connect as tcpConnect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { withJetStream } from '../testing/jetstream.ts';
import { connectNats, NATS_START_HINT } from './connect.ts';
import type { NatsStatusEvent } from './connect.ts';
import { NatsUnreachableError } from './errors.ts';
import { spawn } from 'node:child_process';
import { findNatsServerBinary } from './local-cluster.ts';

/** A local port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const addr = srv.address();
  await new Promise<void>((r) => srv.close(() => r()));
  if (addr === null || typeof addr === 'string') throw new Error('no port');
  return addr.port;
}

/** A TCP forwarder to the NATS server that the test can cut and restore on the same port. */
function forwarder(target: URL, port: number): { start(): Promise<void>; cut(): Promise<void> } {
  let server: Server | undefined;
  const sockets = new Set<Socket>();
  return {
    async start() {
      server = createServer((client) => {
        const upstream = tcpConnect(Number(target.port), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => s.destroy());
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r));
    },
    async cut() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server!.close(() => r()));
    },
  };
}

async function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('connectNats', () => {
  it('an unreachable server fails at once with the URL, the reason and how to start NATS', async () => {
    const url = `nats://127.0.0.1:${await freePort()}`;
    const err = await connectNats({ url, name: 'test', timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NatsUnreachableError);
    const e = err as NatsUnreachableError;
    expect(e.url).toBe(url);
    expect(e.message).toMatch(new RegExp(`^NATS not reachable at ${url}: .*refused.* — start it with: `));
    expect(e.message.endsWith(NATS_START_HINT)).toBe(true);
    expect(NATS_START_HINT).toContain('nats-server');
  });

  it('connects with the given name and reports status changes to log (not to the console)', async () => {
    const { url, cleanup } = await withJetStream();
    await cleanup();
    const events: NatsStatusEvent[] = [];
    const nc = await connectNats({ url, name: 'slicemesh-test', log: (e) => events.push(e) });
    expect(nc.isClosed()).toBe(false);
    expect(nc.info?.jetstream).toBe(true);
    await nc.close();
    await new Promise((r) => setTimeout(r, 10));
    expect(events.map((e) => e.type)).toContain('close');
  });

  it('after the first connection it reconnects (forever) when the server comes back', async () => {
    const { url, cleanup } = await withJetStream();
    await cleanup();
    const port = await freePort();
    const fwd = forwarder(new URL(url), port);
    await fwd.start();
    const events: NatsStatusEvent[] = [];
    const nc = await connectNats({ url: `nats://127.0.0.1:${port}`, name: 'reconnect-test', reconnectWaitMs: 50, log: (e) => events.push(e) });
    try {
      await fwd.cut();
      await waitFor(() => events.some((e) => e.type === 'disconnect'));
      await new Promise((r) => setTimeout(r, 300)); // several failed attempts while down
      await fwd.start();
      await waitFor(() => events.some((e) => e.type === 'reconnect'));
      await nc.flush();
      expect(nc.isClosed()).toBe(false);
    } finally {
      await nc.close();
      await fwd.cut();
    }
  });

  it('a list: an unreachable first entry is skipped, and credentials in one URL apply to every server (masked in errors)', async () => {
    const binary = findNatsServerBinary();
    if (binary === undefined) throw new Error('nats-server not found');
    const port = await freePort();
    const server = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '--user', 'u', '--pass', 's3cret'], { stdio: 'ignore' });
    try {
      const dead = `nats://127.0.0.1:${await freePort()}`;
      const good = `nats://u:s3cret@127.0.0.1:${port}`;
      let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
      const until = Date.now() + 10_000;
      while (nc === undefined) {
        try {
          nc = await connectNats({ url: `${dead},${good}`, name: 'list-test', timeoutMs: 1000 });
        } catch (err) {
          if (Date.now() > until) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      expect(nc.getServer()).toBe(`127.0.0.1:${port}`);
      await nc.close();
      // The client ignores credentials in a URL: the same server without them in its entry is
      // reached with those of another entry.
      const other = await connectNats({ url: `nats://u:s3cret@127.0.0.1:${await freePort()},127.0.0.1:${port}`, name: 'list-test-2', timeoutMs: 2000 });
      await other.close();
      const refused = await connectNats({ url: `nats://u:wrong@127.0.0.1:${port}`, name: 'list-test-3', timeoutMs: 2000 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(NatsUnreachableError);
      expect((refused as Error).message).toContain(`NATS not reachable at nats://u:***@127.0.0.1:${port}`);
      expect((refused as Error).message).not.toContain('wrong');
    } finally {
      server.kill('SIGKILL');
    }
  });
});
