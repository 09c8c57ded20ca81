// The userspace proxy engine (D.10) on loopback: round-robin, retry past a dead endpoint, affinity,
// UDP relaying and endpoint swaps that leave established connections alone.

import type { AddressInfo, Server } from 'node:net';
import { connect, createServer } from 'node:net';
import { createSocket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { UserspaceProxier } from './userspace-proxy.ts';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

async function nameServer(name: string): Promise<number> {
  const srv: Server = createServer((s) => s.end(name));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  closers.push(() => srv.close());
  return (srv.address() as AddressInfo).port;
}

async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function ask(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    let data = '';
    s.on('data', (d) => (data += d.toString()));
    s.on('end', () => resolve(data || 'EMPTY'));
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'ERROR'));
  });
}

async function tally(port: number, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const r = await ask(port);
    out[r] = (out[r] ?? 0) + 1;
  }
  return out;
}

function proxier(now?: () => number): UserspaceProxier {
  const p = new UserspaceProxier({ host: '127.0.0.1', connectTimeoutMs: 500, udpIdleMs: 1000, ...(now ? { now } : {}) });
  closers.push(() => void p.close());
  return p;
}

describe('UserspaceProxier (TCP)', () => {
  it('alternates between endpoints and skips a dead one without the client noticing', async () => {
    const [a, b, dead] = [await nameServer('a'), await nameServer('b'), await deadPort()];
    const p = proxier();
    const ports = await p.sync([{ key: 'web', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: a }, { ip: '127.0.0.1', port: b }], affinityTimeoutSeconds: null }]);
    expect(await tally(ports['web'] ?? 0, 10)).toEqual({ a: 5, b: 5 });
    const again = await p.sync([{ key: 'web', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: dead }, { ip: '127.0.0.1', port: a }], affinityTimeoutSeconds: null }]);
    expect(again['web']).toBe(ports['web']);
    expect(await tally(again['web'] ?? 0, 10)).toEqual({ a: 10 });
    const st = await p.stats();
    expect(st.retries).toBe(5);
    expect(st.connectFailures).toBe(5);
    expect(st.exhausted).toBe(0);
  });

  it('closes the client only when every endpoint fails', async () => {
    const p = proxier();
    const ports = await p.sync([{ key: 'web', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: await deadPort() }], affinityTimeoutSeconds: null }]);
    expect(await ask(ports['web'] ?? 0)).toMatch(/EMPTY|ECONNRESET/);
    expect((await p.stats()).exhausted).toBe(1);
  });

  it('ClientIP affinity keeps a client on one endpoint until the timeout', async () => {
    let t = 0;
    const [a, b] = [await nameServer('a'), await nameServer('b')];
    const p = proxier(() => t);
    const ports = await p.sync([{ key: 'web', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: a }, { ip: '127.0.0.1', port: b }], affinityTimeoutSeconds: 10 }]);
    const port = ports['web'] ?? 0;
    expect(await tally(port, 6)).toEqual({ a: 6 });
    t += 11_000; // expired: round-robin picks the next one, which then sticks
    expect(await tally(port, 4)).toEqual({ b: 4 });
  });

  it('an endpoint removed keeps its established connection (drain)', async () => {
    const held: Server = createServer((s) => s.on('data', (d) => s.write(d)));
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    closers.push(() => held.close());
    const echo = (held.address() as AddressInfo).port;
    const p = proxier();
    const ports = await p.sync([{ key: 'e', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: echo }], affinityTimeoutSeconds: null }]);
    const s = connect({ host: '127.0.0.1', port: ports['e'] ?? 0 });
    closers.push(() => s.destroy());
    const first = new Promise<string>((r) => s.once('data', (d) => r(d.toString())));
    s.write('one');
    expect(await first).toBe('one');
    await p.sync([{ key: 'e', protocol: 'TCP', endpoints: [{ ip: '127.0.0.1', port: await deadPort() }], affinityTimeoutSeconds: null }]);
    const second = new Promise<string>((r) => s.once('data', (d) => r(d.toString())));
    s.write('two');
    expect(await second).toBe('two');
  });
});

describe('UserspaceProxier (UDP)', () => {
  it('relays requests and replies, round-robin per client address', async () => {
    const servers = await Promise.all(
      ['u1', 'u2'].map(async (name) => {
        const s = createSocket('udp4');
        s.on('message', (m, r) => s.send(`${name}:${m.toString()}`, r.port, r.address));
        await new Promise<void>((res) => s.bind(0, '127.0.0.1', res));
        closers.push(() => s.close());
        return s.address().port;
      }),
    );
    const p = proxier();
    const ports = await p.sync([{ key: 'dns', protocol: 'UDP', endpoints: servers.map((port) => ({ ip: '127.0.0.1', port })), affinityTimeoutSeconds: null }]);
    const replies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const c = createSocket('udp4');
      const got = new Promise<string>((r) => c.once('message', (m) => r(m.toString())));
      c.send(`q${i}`, ports['dns'] ?? 0, '127.0.0.1');
      replies.push(await got);
      c.close();
    }
    expect(replies).toEqual(['u1:q0', 'u2:q1', 'u1:q2', 'u2:q3']);
  });
});
