// The health-check node ports (D.9.1, D.9.2): one HTTP server per Service that has a
// health-check node port, on every node address that accepts NodePorts (all addresses when
// none are configured). After each successful sync the agent hands over the health facts of
// every Service; servers of Services that lost their port (or changed it) close, new ones
// open, and the counts the servers answer with are replaced. A port that cannot be opened is
// logged and tried again at the next sync, as kube-proxy does.

import { createServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import type { Listen } from '@slicemesh/netfilter';
import type { ServiceHealthInfo } from '@slicemesh/proxy-state';
import { serviceHealthAnswer } from '@slicemesh/proxy-state';
import type { Logger } from '@slicemesh/runtime';
import type { ProxyMetrics } from './metrics.ts';

export interface HealthCheckServersOptions {
  /** Addresses to listen on; [] listens on every address of `family`. */
  readonly addresses: readonly string[];
  readonly family: 'IPv4' | 'IPv6';
  /** The node's network namespace, when the agent runs outside it. */
  readonly netns?: string;
  readonly listen: Listen;
  /** The proxy's own health (D.9.3), part of every answer. */
  readonly proxyHealthy: () => boolean;
  readonly log: Logger;
  readonly metrics: Pick<ProxyMetrics, 'healthCheckServers' | 'healthCheckListenFailures'>;
}

interface Instance {
  readonly port: number;
  readonly namespace: string;
  readonly name: string;
  readonly sockets: Server[];
  readonly http: HttpServer;
}

export class HealthCheckServers {
  readonly #o: HealthCheckServersOptions;
  readonly #open = new Map<string, Instance>();
  /** Local ready endpoints per Service `<ns>/<name>`, as of the last sync. */
  #counts = new Map<string, number>();
  #closed = false;

  constructor(opts: HealthCheckServersOptions) {
    this.#o = opts;
  }

  /** `<ns>/<name>` → the port served, for every Service whose server is open. */
  get ports(): ReadonlyMap<string, number> {
    return new Map([...this.#open].map(([k, v]) => [k, v.port]));
  }

  /**
   * Makes the open servers match `services` (every Service the agent knows, by `<ns>/<name>`)
   * and takes their local endpoint counts. Never throws: listen failures are logged.
   */
  async sync(services: ReadonlyMap<string, ServiceHealthInfo>): Promise<void> {
    if (this.#closed) return;
    const counts = new Map<string, number>();
    for (const [key, h] of services) counts.set(key, h.localReadyEndpoints);
    this.#counts = counts;
    for (const [key, inst] of [...this.#open]) {
      const want = services.get(key)?.healthCheckNodePort ?? null;
      if (want === inst.port) continue;
      this.#open.delete(key);
      this.#o.log.info({ service: key, port: inst.port }, 'closing health check server');
      await closeInstance(inst);
    }
    for (const [key, h] of services) {
      if (h.healthCheckNodePort === null || this.#open.has(key)) continue;
      const inst = await this.#openInstance(key, h.healthCheckNodePort);
      if (inst === null) continue;
      if (this.#closed) {
        await closeInstance(inst);
        return;
      }
      this.#open.set(key, inst);
    }
    this.#o.metrics.healthCheckServers.set(this.#open.size);
  }

  async #openInstance(key: string, port: number): Promise<Instance | null> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const http = createServer((req, res) => {
      const answer = serviceHealthAnswer({ namespace, name }, this.#counts.get(key) ?? 0, this.#o.proxyHealthy());
      res.writeHead(answer.status, answer.headers).end(req.method === 'HEAD' ? undefined : answer.body);
    });
    const hosts = this.#o.addresses.length > 0 ? this.#o.addresses : [this.#o.family === 'IPv6' ? '::' : '0.0.0.0'];
    const sockets: Server[] = [];
    try {
      for (const host of hosts) {
        const s = await this.#o.listen({ host, port, ...(this.#o.netns !== undefined ? { netns: this.#o.netns } : {}) });
        s.on('connection', (c) => http.emit('connection', c));
        sockets.push(s);
      }
    } catch (err) {
      // As upstream: close what opened, so a later sync (or another owner of the port) can retry.
      await Promise.all(sockets.map((s) => closeSocket(s)));
      this.#o.metrics.healthCheckListenFailures.inc();
      this.#o.log.error({ err, service: key, port }, 'failed to start health check server');
      return null;
    }
    this.#o.log.info({ service: key, port, addresses: hosts }, 'opened health check server');
    return { port, namespace, name, sockets, http };
  }

  /** Closes every server; later syncs do nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#open.values()];
    this.#open.clear();
    await Promise.all(all.map((i) => closeInstance(i)));
    this.#o.metrics.healthCheckServers.set(0);
  }
}

function closeSocket(s: Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}

async function closeInstance(inst: Instance): Promise<void> {
  inst.http.closeAllConnections();
  await Promise.all(inst.sockets.map((s) => closeSocket(s)));
}
