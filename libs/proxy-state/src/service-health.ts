// D.9: what a node says about itself to load balancers and probes. Per Service with a
// health-check node port (LoadBalancer, externalTrafficPolicy Local) the node answers on that
// port how many ready endpoints of the Service run here (D.9.1, D.9.2); the proxy's own
// /healthz turns unhealthy when a change has waited too long for a successful sync (D.9.3).
// All of it as data: the HTTP servers that carry the answers live in the agent.

import type { ProxyModelEntry } from './proxy-plan.ts';

/** What one Service contributes to the health-check servers on this node. */
export interface ServiceHealthInfo {
  /** The health-check node port of the Service, or null when it has none (D.9.1). */
  readonly healthCheckNodePort: number | null;
  /** Distinct IPs of the Service's ready endpoints on this node, over all its ports (D.9.2). */
  readonly localReadyEndpoints: number;
}

/**
 * The health facts of one Service from its model entries (all ports of one Service, one
 * family). The port comes from the first port that carries one (every port of a Service
 * carries the same); endpoints count once per IP however many ports they serve, and only
 * when ready: a node whose only local endpoints are terminating fails the check on purpose.
 *
 *     serviceHealthInfo(proxyModel({ ... }).filter((e) => e.key.startsWith('shop/web:')))
 *     // { healthCheckNodePort: 32000, localReadyEndpoints: 2 }
 */
export function serviceHealthInfo(entries: readonly ProxyModelEntry[]): ServiceHealthInfo {
  let port: number | null = null;
  const ips = new Set<string>();
  for (const e of entries) {
    if (port === null && e.servicePort.healthCheckNodePort !== null && e.servicePort.healthCheckNodePort > 0) port = e.servicePort.healthCheckNodePort;
    for (const ep of e.merged) if (ep.isLocal && ep.ready) ips.add(ep.ip);
  }
  return { healthCheckNodePort: port, localReadyEndpoints: ips.size };
}

/** One answer of a health-check server. */
export interface HealthAnswer {
  readonly status: 200 | 503;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The answer on a Service's health-check node port (D.9.2): 200 when this node has at least
 * one ready local endpoint and the proxy itself is healthy, else 503. The endpoint count is
 * also sent as `X-Load-Balancing-Endpoint-Weight`, which some cloud load balancers use to
 * weigh nodes; the JSON body names the Service.
 *
 *     serviceHealthAnswer({ namespace: 'shop', name: 'web' }, 2, true).status  // 200
 */
export function serviceHealthAnswer(service: { readonly namespace: string; readonly name: string }, localEndpoints: number, proxyHealthy: boolean): HealthAnswer {
  const body = {
    service: { namespace: service.namespace, name: service.name },
    localEndpoints,
    serviceProxyHealthy: proxyHealthy,
  };
  return {
    status: localEndpoints > 0 && proxyHealthy ? 200 : 503,
    headers: {
      'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff',
      'X-Load-Balancing-Endpoint-Weight': String(localEndpoints),
    },
    body: `${JSON.stringify(body, null, 2)}\n`,
  };
}

/** The proxy's health at one moment (D.9.3). */
export interface ProxierHealthStatus {
  readonly healthy: boolean;
  /** When the rules were last brought up to date (ms), or null before the first time. */
  readonly lastUpdated: number | null;
  /** When the oldest change still waiting for a sync arrived (ms), or null when none waits. */
  readonly oldestPending: number | null;
}

/**
 * kube-proxy's proxier health (D.9.3) with the clock passed in: healthy while nothing waits
 * for a sync, and while the oldest waiting change is younger than `timeoutMs`. A quiet proxy
 * is healthy however long ago it last synced; a proxy whose syncs keep failing turns
 * unhealthy `timeoutMs` after the first change it could not apply.
 *
 *     const h = new ProxierHealth(60_000);
 *     h.queued(0); h.status(59_999).healthy  // true
 *     h.status(60_000).healthy               // false
 *     h.updated(61_000); h.status(61_000)    // { healthy: true, lastUpdated: 61000, oldestPending: null }
 */
export class ProxierHealth {
  readonly #timeoutMs: number;
  #lastUpdated: number | null = null;
  #oldestPending: number | null = null;

  constructor(timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
  }

  /** A change arrived that the rules do not reflect yet; only the first of a run counts. */
  queued(now: number): void {
    if (this.#oldestPending === null) this.#oldestPending = now;
  }

  /** The rules reflect every change queued so far. */
  updated(now: number): void {
    this.#oldestPending = null;
    this.#lastUpdated = now;
  }

  status(now: number): ProxierHealthStatus {
    const healthy = this.#oldestPending === null || now - this.#oldestPending < this.#timeoutMs;
    return { healthy, lastUpdated: this.#lastUpdated, oldestPending: this.#oldestPending };
  }
}
