import type { Endpoint, Service } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { ConntrackPortState } from './conntrack-cleanup.ts';
import { conntrackPortStates, flowFilterText, staleConntrackFlows } from './conntrack-cleanup.ts';
import { proxyModel } from './proxy-plan.ts';

const NODE = 'node-a';

function ep(ip: string, o: { ready?: boolean; serving?: boolean; terminating?: boolean; node?: string } = {}): Endpoint {
  const ready = o.ready ?? true;
  return { addresses: [ip], nodeName: o.node ?? 'node-b', conditions: { ready, serving: o.serving ?? ready, terminating: o.terminating ?? false } };
}

interface SvcOpts {
  readonly nodePort?: number;
  readonly externalIPs?: string[];
  readonly lbIP?: string;
  readonly port?: number;
  readonly etpLocal?: boolean;
  readonly family?: 'IPv4' | 'IPv6';
}

/** `ns/dns` with a UDP port "dns" (53 → 5353) and a TCP port "tcp" (53 → 5353). */
function dns(o: SvcOpts = {}): Service {
  const v6 = o.family === 'IPv6';
  return makeService('dns', {
    namespace: 'ns',
    clusterIP: v6 ? 'fd00:96::a' : '10.96.0.10',
    ipFamilies: [o.family ?? 'IPv4'],
    ports: [
      { name: 'dns', port: o.port ?? 53, targetPort: 5353, protocol: 'UDP', ...(o.nodePort ? { nodePort: o.nodePort } : {}) },
      { name: 'tcp', port: 53, targetPort: 5353, protocol: 'TCP' },
    ],
    spec: {
      ...(o.nodePort || o.lbIP ? { type: o.lbIP ? ('LoadBalancer' as const) : ('NodePort' as const) } : {}),
      ...(o.externalIPs ? { externalIPs: o.externalIPs } : {}),
      ...(o.etpLocal ? { externalTrafficPolicy: 'Local' as const } : {}),
    },
  });
}

function withLB(s: Service, ip: string | undefined): Service {
  return ip === undefined ? s : { ...s, status: { loadBalancer: { ingress: [{ ip }] } } };
}

function states(o: SvcOpts, endpoints: readonly Endpoint[] | null): ConntrackPortState[] {
  const service = withLB(dns(o), o.lbIP);
  const slices =
    endpoints === null
      ? []
      : [
          makeSlice('dns-1', endpoints, {
            service: 'dns',
            namespace: 'ns',
            addressType: o.family ?? 'IPv4',
            ports: [
              { name: 'dns', port: 5353, protocol: 'UDP' },
              { name: 'tcp', port: 5353, protocol: 'TCP' },
            ],
          }),
        ];
  return conntrackPortStates(proxyModel(deepFreeze({ services: [service], slices, nodes: [], nodeName: NODE, family: o.family ?? 'IPv4' })));
}

/** The filters as text, with the reason. */
const texts = (prev: ConntrackPortState[], cur: ConntrackPortState[]) => staleConntrackFlows(prev, cur).map((f) => `${f.reason}: ${flowFilterText(f.filter)}`);

interface Case {
  readonly name: string;
  readonly before: { readonly svc?: SvcOpts; readonly eps: readonly Endpoint[] | null } | null;
  readonly after: { readonly svc?: SvcOpts; readonly eps: readonly Endpoint[] | null } | null;
  readonly want: readonly string[];
}

const A = ep('10.244.1.2');
const B = ep('10.244.2.2');

const cases: Case[] = [
  { name: 'D.7 nothing changed: nothing to delete', before: { eps: [A, B] }, after: { eps: [A, B] }, want: [] },
  {
    name: 'D.7.1 a removed endpoint: the flows to the ClusterIP and port answered by it',
    before: { eps: [A, B] },
    after: { eps: [B] },
    want: ['endpoint-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=10.244.1.2'],
  },
  {
    name: 'D.7.1 the same flows through every external IP, LB IP and the NodePort',
    before: { svc: { nodePort: 30053, externalIPs: ['192.0.2.7'], lbIP: '198.51.100.9' }, eps: [A, B] },
    after: { svc: { nodePort: 30053, externalIPs: ['192.0.2.7'], lbIP: '198.51.100.9' }, eps: [B] },
    want: [
      'endpoint-removed: IPv4 UDP dst=* dport=30053 reply-src=10.244.1.2',
      'endpoint-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=10.244.1.2',
      'endpoint-removed: IPv4 UDP dst=192.0.2.7 dport=53 reply-src=10.244.1.2',
      'endpoint-removed: IPv4 UDP dst=198.51.100.9 dport=53 reply-src=10.244.1.2',
    ],
  },
  {
    name: 'D.7.1 an endpoint that stops serving counts as removed',
    before: { eps: [A, B] },
    after: { eps: [ep('10.244.1.2', { ready: false, serving: false, terminating: true }), B] },
    want: ['endpoint-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=10.244.1.2'],
  },
  {
    name: 'D.7 a terminating endpoint that still serves keeps its flows (graceful termination)',
    before: { eps: [A, B] },
    after: { eps: [ep('10.244.1.2', { ready: false, serving: true, terminating: true }), B] },
    want: [],
  },
  {
    name: 'D.7 an endpoint that was not serving had no flows: its removal deletes nothing',
    before: { eps: [ep('10.244.1.2', { ready: false, serving: false }), B] },
    after: { eps: [B] },
    want: [],
  },
  {
    name: 'D.7 traffic policy does not matter: a remote endpoint leaving a Local-policy selection keeps its flows',
    before: { svc: { nodePort: 30053 }, eps: [ep('10.244.1.2', { node: NODE }), B] },
    after: { svc: { nodePort: 30053, etpLocal: true }, eps: [ep('10.244.1.2', { node: NODE }), B] },
    want: [],
  },
  {
    name: 'D.7.1 the last endpoint removed: its flows go, the port is not "newly active"',
    before: { svc: { nodePort: 30053 }, eps: [A] },
    after: { svc: { nodePort: 30053 }, eps: [] },
    want: ['endpoint-removed: IPv4 UDP dst=* dport=30053 reply-src=10.244.1.2', 'endpoint-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=10.244.1.2'],
  },
  {
    name: 'D.7.2 the first serving endpoint: every flow to the service addresses, port and NodePort',
    before: { svc: { nodePort: 30053, externalIPs: ['192.0.2.7'] }, eps: [] },
    after: { svc: { nodePort: 30053, externalIPs: ['192.0.2.7'] }, eps: [A] },
    want: ['newly-active: IPv4 UDP dst=* dport=30053 reply-src=*', 'newly-active: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=*', 'newly-active: IPv4 UDP dst=192.0.2.7 dport=53 reply-src=*'],
  },
  {
    name: 'D.7.2 a new Service that arrives with endpoints is newly active too',
    before: null,
    after: { eps: [A] },
    want: ['newly-active: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=*'],
  },
  {
    name: 'D.7.2 only unready endpoints before: the first serving one makes the port newly active',
    before: { eps: [ep('10.244.1.2', { ready: false, serving: false })] },
    after: { eps: [A] },
    want: ['newly-active: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=*'],
  },
  { name: 'D.7.2 no endpoints before and after: nothing', before: { eps: [] }, after: { eps: null }, want: [] },
  {
    name: 'D.7.3 a removed UDP Service: every flow to its addresses, port and NodePort',
    before: { svc: { nodePort: 30053 }, eps: [A] },
    after: null,
    want: ['service-removed: IPv4 UDP dst=* dport=30053 reply-src=*', 'service-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=*'],
  },
  {
    name: 'D.7.1 a dropped external IP: flows to it that went to a removed endpoint go as well',
    before: { svc: { externalIPs: ['192.0.2.7'] }, eps: [A, B] },
    after: { eps: [B] },
    want: ['endpoint-removed: IPv4 UDP dst=10.96.0.10 dport=53 reply-src=10.244.1.2', 'endpoint-removed: IPv4 UDP dst=192.0.2.7 dport=53 reply-src=10.244.1.2'],
  },
  {
    name: 'D.7.1 IPv6 endpoints give IPv6 filters',
    before: { svc: { family: 'IPv6' }, eps: [ep('fd00:244::2'), ep('fd00:244::3')] },
    after: { svc: { family: 'IPv6' }, eps: [ep('fd00:244::3')] },
    want: ['endpoint-removed: IPv6 UDP dst=fd00:96::a dport=53 reply-src=fd00:244::2'],
  },
];

describe('staleConntrackFlows (D.7)', () => {
  for (const c of cases) {
    it(c.name, () => {
      const prev = c.before === null ? [] : states(c.before.svc ?? {}, c.before.eps);
      const cur = c.after === null ? [] : states(c.after.svc ?? {}, c.after.eps);
      expect(texts(prev, cur)).toEqual(c.want);
    });
  }

  it('D.7 TCP ports are never kept nor cleaned', () => {
    expect(states({}, [A]).map((s) => s.key)).toEqual(['ns/dns:dns/UDP']);
  });

  it('D.7.1 names the service port and carries the filter fields the adapter needs', () => {
    expect(staleConntrackFlows(states({}, [A]), states({}, []))).toEqual([
      { servicePort: 'ns/dns:dns/UDP', reason: 'endpoint-removed', filter: { family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.1.2' } },
    ]);
  });
});
