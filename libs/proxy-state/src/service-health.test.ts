import type { Endpoint, Service } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { proxyModel } from './proxy-plan.ts';
import { ProxierHealth, serviceHealthAnswer, serviceHealthInfo } from './service-health.ts';

const NODE = 'node-a';

function ep(ip: string, node: string, o: { ready?: boolean; serving?: boolean; terminating?: boolean } = {}): Endpoint {
  const ready = o.ready ?? true;
  return { addresses: [ip], nodeName: node, conditions: { ready, serving: o.serving ?? ready, terminating: o.terminating ?? false } };
}

function lbLocal(o: { hc?: number; type?: 'LoadBalancer' | 'NodePort'; etp?: 'Local' | 'Cluster' } = {}): Service {
  return makeService('web', {
    namespace: 'shop',
    ports: [
      { name: 'dns', port: 53, targetPort: 5353, protocol: 'UDP', nodePort: 30053 },
      { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 },
    ],
    spec: { type: o.type ?? 'LoadBalancer', externalTrafficPolicy: o.etp ?? 'Local', ...(o.hc === 0 ? {} : { healthCheckNodePort: o.hc ?? 32000 }) },
  });
}

function info(service: Service, endpoints: readonly Endpoint[]) {
  const slice = makeSlice('web-1', endpoints, {
    service: 'web',
    namespace: 'shop',
    ports: [
      { name: 'dns', port: 5353, protocol: 'UDP' },
      { name: 'http', port: 8080, protocol: 'TCP' },
    ],
  });
  return serviceHealthInfo(proxyModel(deepFreeze({ services: [service], slices: [slice], nodes: [], nodeName: NODE, family: 'IPv4' as const })));
}

describe('serviceHealthInfo (D.9.1, D.9.2)', () => {
  const cases: { name: string; service: Service; endpoints: Endpoint[]; want: ReturnType<typeof serviceHealthInfo> }[] = [
    {
      name: 'D.9.2 counts each local ready endpoint IP once although it serves two ports',
      service: lbLocal(),
      endpoints: [ep('10.244.1.2', NODE), ep('10.244.1.3', NODE), ep('10.244.2.2', 'node-b')],
      want: { healthCheckNodePort: 32000, localReadyEndpoints: 2 },
    },
    {
      name: 'D.9.2 terminating and unready local endpoints do not count, even when serving',
      service: lbLocal(),
      endpoints: [ep('10.244.1.2', NODE, { ready: false, serving: true, terminating: true }), ep('10.244.1.3', NODE, { ready: false })],
      want: { healthCheckNodePort: 32000, localReadyEndpoints: 0 },
    },
    { name: 'D.9.2 no endpoints at all: zero', service: lbLocal(), endpoints: [], want: { healthCheckNodePort: 32000, localReadyEndpoints: 0 } },
    {
      name: 'D.9.1 externalTrafficPolicy Cluster has no health-check port',
      service: lbLocal({ etp: 'Cluster' }),
      endpoints: [ep('10.244.1.2', NODE)],
      want: { healthCheckNodePort: null, localReadyEndpoints: 1 },
    },
    {
      name: 'D.9.1 a NodePort service has no health-check port even with Local policy',
      service: lbLocal({ type: 'NodePort' }),
      endpoints: [ep('10.244.1.2', NODE)],
      want: { healthCheckNodePort: null, localReadyEndpoints: 1 },
    },
    { name: 'D.9.1 a LoadBalancer with Local policy but no allocated port has none', service: lbLocal({ hc: 0 }), endpoints: [], want: { healthCheckNodePort: null, localReadyEndpoints: 0 } },
  ];
  for (const c of cases) it(c.name, () => expect(info(c.service, c.endpoints)).toEqual(c.want));
});

describe('serviceHealthAnswer (D.9.2)', () => {
  const svc = { namespace: 'shop', name: 'web' };
  const cases = [
    { name: 'D.9.2 local endpoints and a healthy proxy: 200', count: 2, healthy: true, status: 200 },
    { name: 'D.9.2 no local endpoint: 503', count: 0, healthy: true, status: 503 },
    { name: 'D.9.2 an unhealthy proxy fails the check although endpoints are local', count: 3, healthy: false, status: 503 },
  ] as const;
  for (const c of cases) {
    it(c.name, () => {
      const a = serviceHealthAnswer(svc, c.count, c.healthy);
      expect(a.status).toBe(c.status);
      expect(a.headers).toEqual({ 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff', 'X-Load-Balancing-Endpoint-Weight': String(c.count) });
      expect(JSON.parse(a.body)).toEqual({ service: svc, localEndpoints: c.count, serviceProxyHealthy: c.healthy });
    });
  }
});

describe('ProxierHealth (D.9.3)', () => {
  type Step = readonly ['queued' | 'updated', number] | readonly ['status', number, boolean];
  const cases: { name: string; steps: Step[] }[] = [
    { name: 'D.9.3 healthy before anything happened', steps: [['status', 1e9, true]] },
    { name: 'D.9.3 a quiet proxy stays healthy however old its last sync', steps: [['updated', 0], ['status', 1e9, true]] },
    {
      name: 'D.9.3 a waiting change turns it unhealthy exactly at the timeout',
      steps: [['updated', 0], ['queued', 100], ['status', 60_099, true], ['status', 60_100, false]],
    },
    {
      name: 'D.9.3 the oldest waiting change counts, not the newest',
      steps: [['queued', 0], ['queued', 50_000], ['status', 60_000, false]],
    },
    { name: 'D.9.3 a successful sync makes it healthy again', steps: [['queued', 0], ['status', 70_000, false], ['updated', 70_001], ['status', 70_001, true]] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const h = new ProxierHealth(60_000);
      for (const s of c.steps) {
        if (s[0] === 'queued') h.queued(s[1]);
        else if (s[0] === 'updated') h.updated(s[1]);
        else expect(h.status(s[1]).healthy, `at ${s[1]}`).toBe(s[2]);
      }
    });
  }

  it('D.9.3 reports when it was last updated and what waits', () => {
    const h = new ProxierHealth(1000);
    h.updated(5);
    h.queued(7);
    expect(h.status(8)).toEqual({ healthy: true, lastUpdated: 5, oldestPending: 7 });
  });
});
