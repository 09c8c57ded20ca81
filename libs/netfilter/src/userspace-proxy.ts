// The socket half of the userspace proxy mode (D.10): per service port a TCP or UDP socket on the node
// that the nat REDIRECT rules (@slicemesh/dataplane userspace.ts) send the virtual IPs to.
//  - TCP: each accepted connection goes to the next endpoint round-robin; when connecting
//    fails (refused, unreachable, timeout) the next endpoint is tried, up to once each, and
//    only when all fail is the client's connection closed. Bytes are piped both ways with
//    backpressure.
//  - UDP: per client address a socket to the chosen endpoint; replies are relayed back from
//    the proxy socket; the session ends after `udpIdleMs` without traffic.
//  - ClientIP affinity: a client IP keeps its endpoint until `timeoutSeconds` pass without a
//    new connection (or the endpoint goes away).
//  - Updates swap the endpoint list: removed endpoints get no new connections, established
//    ones keep running until either side closes (they drain). A removed service port stops
//    accepting; its open connections drain too.
// This file imports only node built-ins so that `userspace-host.ts` can run it with plain
// `node` inside another network namespace.

import type { Server, Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import type { RemoteInfo, Socket as UdpSocket } from 'node:dgram';
import { createSocket } from 'node:dgram';

export interface ProxyEndpoint {
  readonly ip: string;
  readonly port: number;
}

export interface ProxySpec {
  readonly key: string;
  readonly protocol: 'TCP' | 'UDP';
  readonly endpoints: readonly ProxyEndpoint[];
  readonly affinityTimeoutSeconds: number | null;
}

export interface ProxyStats {
  /** TCP connections handed to an endpoint, UDP sessions opened. */
  readonly connections: number;
  /** Connect attempts to an endpoint that failed. */
  readonly connectFailures: number;
  /** Attempts made after a failure (to the next endpoint). */
  readonly retries: number;
  /** Client connections closed because no endpoint accepted. */
  readonly exhausted: number;
  /** Successful connections per endpoint `ip:port`. */
  readonly perEndpoint: Readonly<Record<string, number>>;
}

export interface UserspaceProxierOptions {
  /** Address the proxy sockets bind; default every IPv4 address. */
  readonly host?: string;
  /** How long one connect attempt may take before the next endpoint is tried. */
  readonly connectTimeoutMs?: number;
  readonly udpIdleMs?: number;
  readonly now?: () => number;
}

/** The operations the agent needs, in-process or in another namespace (userspace-host.ts). */
export interface UserspaceProxies {
  /** Opens, updates and closes proxies to match `specs`; resolves to key → local port. */
  sync(specs: readonly ProxySpec[]): Promise<Record<string, number>>;
  stats(): Promise<ProxyStats>;
  close(): Promise<void>;
}

const epKey = (e: ProxyEndpoint) => (e.ip.includes(':') ? `[${e.ip}]:${e.port}` : `${e.ip}:${e.port}`);

interface Counters {
  connections: number;
  connectFailures: number;
  retries: number;
  exhausted: number;
  perEndpoint: Record<string, number>;
}

class Picker {
  endpoints: readonly ProxyEndpoint[] = [];
  affinitySeconds: number | null = null;
  #next = 0;
  readonly #affinity = new Map<string, { ep: string; at: number }>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Endpoints in the order to try for `client`: the affinity one first, then round-robin. */
  order(client: string): ProxyEndpoint[] {
    const n = this.endpoints.length;
    if (n === 0) return [];
    const start = this.#next % n;
    this.#next = (start + 1) % n;
    const out = [...this.endpoints.slice(start), ...this.endpoints.slice(0, start)];
    if (this.affinitySeconds !== null) {
      const a = this.#affinity.get(client);
      if (a !== undefined && this.#now() - a.at <= this.affinitySeconds * 1000) {
        const i = out.findIndex((e) => epKey(e) === a.ep);
        if (i > 0) out.unshift(...out.splice(i, 1));
        if (i >= 0) this.#next = start; // the affinity hit does not consume a round-robin turn
      }
    }
    return out;
  }

  chose(client: string, ep: ProxyEndpoint): void {
    if (this.affinitySeconds !== null) this.#affinity.set(client, { ep: epKey(ep), at: this.#now() });
  }
}

interface Proxy {
  readonly spec: ProxySpec;
  readonly picker: Picker;
  readonly port: number;
  close(): void;
}

/** In-process proxies (the agent's own namespace). */
export class UserspaceProxier implements UserspaceProxies {
  readonly #opts: Required<UserspaceProxierOptions>;
  readonly #proxies = new Map<string, Proxy>();
  readonly #c: Counters = { connections: 0, connectFailures: 0, retries: 0, exhausted: 0, perEndpoint: {} };

  constructor(opts: UserspaceProxierOptions = {}) {
    this.#opts = { host: opts.host ?? '0.0.0.0', connectTimeoutMs: opts.connectTimeoutMs ?? 2000, udpIdleMs: opts.udpIdleMs ?? 30_000, now: opts.now ?? Date.now };
  }

  async sync(specs: readonly ProxySpec[]): Promise<Record<string, number>> {
    const want = new Map(specs.map((s) => [s.key, s]));
    for (const [key, p] of this.#proxies) {
      const s = want.get(key);
      if (s === undefined || s.protocol !== p.spec.protocol) {
        p.close();
        this.#proxies.delete(key);
      }
    }
    const ports: Record<string, number> = {};
    for (const s of specs) {
      let p = this.#proxies.get(s.key);
      if (p === undefined) {
        p = s.protocol === 'TCP' ? await this.#openTcp(s) : await this.#openUdp(s);
        this.#proxies.set(s.key, p);
      }
      p.picker.endpoints = s.endpoints;
      p.picker.affinitySeconds = s.affinityTimeoutSeconds;
      ports[s.key] = p.port;
    }
    return ports;
  }

  stats(): Promise<ProxyStats> {
    return Promise.resolve({ ...this.#c, perEndpoint: { ...this.#c.perEndpoint } });
  }

  close(): Promise<void> {
    for (const p of this.#proxies.values()) p.close();
    this.#proxies.clear();
    return Promise.resolve();
  }

  #openTcp(spec: ProxySpec): Promise<Proxy> {
    const picker = new Picker(this.#opts.now);
    const server: Server = createServer({ pauseOnConnect: true }, (client) => this.#accept(client, picker));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.#opts.host, port: 0 }, () => {
        server.off('error', reject);
        server.on('error', () => {});
        const addr = server.address();
        const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
        resolve({ spec, picker, port, close: () => server.close() });
      });
    });
  }

  #accept(client: Socket, picker: Picker): void {
    client.on('error', () => {});
    const who = client.remoteAddress ?? '';
    const order = picker.order(who);
    const attempt = (i: number): void => {
      const ep = order[i];
      if (ep === undefined) {
        if (order.length > 0) this.#c.exhausted++;
        client.destroy();
        return;
      }
      if (i > 0) this.#c.retries++;
      const up = connect({ host: ep.ip, port: ep.port });
      const timer = setTimeout(() => up.destroy(new Error('ETIMEDOUT')), this.#opts.connectTimeoutMs);
      const failed = () => {
        clearTimeout(timer);
        this.#c.connectFailures++;
        attempt(i + 1);
      };
      up.once('error', failed);
      up.once('connect', () => {
        clearTimeout(timer);
        up.off('error', failed);
        up.on('error', () => client.destroy());
        client.on('error', () => up.destroy());
        client.on('close', () => up.destroy());
        up.on('close', () => client.destroy());
        this.#c.connections++;
        const k = epKey(ep);
        this.#c.perEndpoint[k] = (this.#c.perEndpoint[k] ?? 0) + 1;
        picker.chose(who, ep);
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
    };
    if (client.destroyed) return;
    attempt(0);
  }

  #openUdp(spec: ProxySpec): Promise<Proxy> {
    const picker = new Picker(this.#opts.now);
    const v6 = this.#opts.host.includes(':');
    const sock: UdpSocket = createSocket(v6 ? 'udp6' : 'udp4');
    const sessions = new Map<string, { up: UdpSocket; ep: ProxyEndpoint; timer: NodeJS.Timeout }>();
    const end = (k: string) => {
      const s = sessions.get(k);
      if (s === undefined) return;
      clearTimeout(s.timer);
      s.up.close();
      sessions.delete(k);
    };
    sock.on('message', (msg: Buffer, rinfo: RemoteInfo) => {
      const k = `${rinfo.address}|${rinfo.port}`;
      let s = sessions.get(k);
      if (s === undefined) {
        const ep = picker.order(rinfo.address)[0];
        if (ep === undefined) return;
        const up = createSocket(ep.ip.includes(':') ? 'udp6' : 'udp4');
        up.on('error', () => end(k));
        up.on('message', (reply: Buffer) => {
          const cur = sessions.get(k);
          if (cur !== undefined) cur.timer.refresh();
          try {
            sock.send(reply, rinfo.port, rinfo.address);
          } catch {
            end(k);
          }
        });
        s = { up, ep, timer: setTimeout(() => end(k), this.#opts.udpIdleMs) };
        sessions.set(k, s);
        this.#c.connections++;
        const ek = epKey(ep);
        this.#c.perEndpoint[ek] = (this.#c.perEndpoint[ek] ?? 0) + 1;
        picker.chose(rinfo.address, ep);
      } else {
        s.timer.refresh();
      }
      s.up.send(msg, s.ep.port, s.ep.ip);
    });
    sock.on('error', () => {});
    return new Promise((resolve, reject) => {
      sock.once('error', reject);
      sock.bind({ address: this.#opts.host, port: 0 }, () => {
        sock.off('error', reject);
        resolve({
          spec,
          picker,
          port: sock.address().port,
          close: () => {
            // Replies leave through the proxy socket, so a removed UDP port ends its sessions.
            for (const k of [...sessions.keys()]) end(k);
            sock.close();
          },
        });
      });
    });
  }
}
