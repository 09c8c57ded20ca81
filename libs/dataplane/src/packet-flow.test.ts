// Packet-flow tables (habit 8): one model, rendered by both rule backends, traced packet by
// packet. The same expectations hold for iptables and nftables unless a case says otherwise.

import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpState } from './model.ts';
import { KUBE_PROXY_CHAINS } from './iptables/chain-names.ts';
import { renderIptablesFull } from './iptables/render.ts';
import { renderNftablesFull } from './nftables/render.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from './testing/builders.ts';
import type { TracePacket, TraceResult, TraceVerdict } from './testing/trace-result.ts';
import { describeTrace } from './testing/trace-result.ts';
import { traceIptables } from './testing/trace-iptables.ts';
import { traceNftables } from './testing/trace-nftables.ts';

const NODE_IP = '192.168.0.2';
const EXTERNAL_CLIENT = '203.0.113.2';
const POD = '10.0.0.2';

type Backend = 'iptables' | 'iptables (kube-proxy names)' | 'nftables';

interface FlowCase extends TracePacket {
  readonly name: string;
  /** Endpoints joined by ", ", or REJECT / DROP, or '' when none of our rules decides. */
  readonly output: string;
  readonly masq?: boolean;
  /** Checked when given (e.g. ACCEPT vs NONE, which both print as ''). */
  readonly verdict?: TraceVerdict;
  /** Backend-specific expectation where the two deliberately differ. */
  readonly only?: Partial<Record<Backend, { readonly output: string; readonly masq?: boolean; readonly verdict?: TraceVerdict }>>;
}

interface Scenario {
  readonly name: string;
  readonly state: DpState;
  readonly nodeIPs?: readonly string[];
  readonly cases: readonly FlowCase[];
}

const local = (ip: string, port = 80) => ep(ip, { isLocal: true, port });
const remote = (ip: string, port = 80) => ep(ip, { port });

const scenarios: Scenario[] = [
  {
    name: 'D.4.2/D.4.3/D.4.5 ClusterIP',
    state: dpState([
      svc('ns1/svc1:http', { clusterIP: '172.30.0.41', endpoints: [local('10.180.0.1')] }),
      svc('ns2/svc2:http', { clusterIP: '172.30.0.42', endpoints: [local('10.180.0.1'), remote('10.180.2.1')] }),
      svc('ns2/svc2:https', { clusterIP: '172.30.0.42', port: 443, endpoints: [local('10.180.0.1', 8443), remote('10.180.2.1', 8443)] }),
      svc('ns2/svc2:dns-sctp', { clusterIP: '172.30.0.42', port: 53, protocol: 'SCTP', endpoints: [local('10.180.0.1', 53), remote('10.180.2.1', 53)] }),
      svc('ns2/svc2:dns-tcp', { clusterIP: '172.30.0.42', port: 53, endpoints: [local('10.180.0.1', 5353), remote('10.180.2.1', 5353)] }),
      svc('ns3/svc3:dns', { clusterIP: '172.30.0.43', port: 53, protocol: 'UDP', endpoints: [remote('10.180.3.1', 53)] }),
    ]),
    cases: [
      { name: 'simple clusterIP', sourceIP: '10.180.0.2', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'hairpin to cluster IP is masqueraded (D.4.5)', sourceIP: '10.180.0.1', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'clusterIP with multiple endpoints reaches all of them', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 80, output: '10.180.0.1:80, 10.180.2.1:80' },
      { name: 'clusterIP with a target port', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 443, output: '10.180.0.1:8443, 10.180.2.1:8443' },
      { name: 'TCP and SCTP on the same port: TCP', sourceIP: '10.180.0.2', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:5353, 10.180.2.1:5353' },
      { name: 'TCP and SCTP on the same port: SCTP', sourceIP: '10.180.0.2', protocol: 'SCTP', destIP: '172.30.0.42', destPort: 53, output: '10.180.0.1:53, 10.180.2.1:53' },
      { name: 'UDP service port', sourceIP: '10.180.0.2', protocol: 'UDP', destIP: '172.30.0.43', destPort: 53, output: '10.180.3.1:53' },
      {
        name: 'a TCP-only port does not match UDP (nftables rejects unknown cluster IP ports)',
        sourceIP: '10.180.0.2',
        protocol: 'UDP',
        destIP: '172.30.0.42',
        destPort: 80,
        output: '',
        only: { nftables: { output: 'REJECT' } },
      },
      {
        name: "svc1 does not accept svc2's ports",
        sourceIP: '10.180.0.2',
        destIP: '172.30.0.41',
        destPort: 443,
        output: '',
        only: { nftables: { output: 'REJECT' } },
      },
      { name: 'off-cluster source to cluster IP is masqueraded (D.4.6)', sourceIP: '192.168.1.5', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'node process to cluster IP is masqueraded', sourceIP: NODE_IP, fromLocalProcess: true, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'an unrelated destination is left alone', sourceIP: POD, destIP: '172.30.0.99', destPort: 80, output: '', verdict: 'NONE' },
    ],
  },
  {
    name: 'D.4.8 no endpoints rejects every entry point',
    state: dpState([
      svc('ns1/svc1:p80', { clusterIP: '172.30.0.41', nodePort: 3001, externalIPs: ['192.168.99.11'], loadBalancerIPs: ['1.2.3.4'] }),
    ]),
    cases: [
      { name: 'pod to cluster IP', sourceIP: POD, destIP: '172.30.0.41', destPort: 80, output: 'REJECT' },
      { name: 'node process to cluster IP', sourceIP: NODE_IP, fromLocalProcess: true, destIP: '172.30.0.41', destPort: 80, output: 'REJECT' },
      { name: 'external to external IP', sourceIP: EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: 'REJECT' },
      { name: 'pod to NodePort', sourceIP: POD, destIP: NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'external to NodePort', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3001, output: 'REJECT' },
      { name: 'pod to LoadBalancer IP', sourceIP: POD, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
      { name: 'external to LoadBalancer IP', sourceIP: EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'REJECT' },
    ],
  },
  {
    name: 'D.4.7/D.4.9 NodePort and external IPs with externalTrafficPolicy Cluster',
    state: dpState([
      svc('ns1/svc1:p80', { clusterIP: '172.30.0.41', nodePort: 3001, externalIPs: ['192.168.99.11'], endpoints: [local('10.180.0.1'), remote('10.180.2.1')] }),
    ]),
    cases: [
      { name: 'external to NodePort reaches every endpoint, masqueraded', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.2.1:80', masq: true },
      { name: 'pod to NodePort is masqueraded too', sourceIP: POD, destIP: NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.2.1:80', masq: true },
      { name: 'node process to its own NodePort', sourceIP: NODE_IP, fromLocalProcess: true, destIP: NODE_IP, destPort: 3001, output: '10.180.0.1:80, 10.180.2.1:80', masq: true },
      { name: 'no localhost NodePorts', sourceIP: '127.0.0.1', fromLocalProcess: true, destIP: '127.0.0.1', destPort: 3001, output: '' },
      { name: 'external to external IP, masqueraded', sourceIP: EXTERNAL_CLIENT, destIP: '192.168.99.11', destPort: 80, output: '10.180.0.1:80, 10.180.2.1:80', masq: true },
      { name: 'another port on the node is left alone', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3002, output: '' },
      { name: 'pod to cluster IP is not masqueraded', sourceIP: POD, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80, 10.180.2.1:80' },
    ],
  },
  {
    name: 'D.4.7 externalTrafficPolicy Local',
    state: dpState([
      svc('ns2/svc2:p80', {
        clusterIP: '172.30.0.42',
        nodePort: 3001,
        externalIPs: ['192.168.99.22'],
        loadBalancerIPs: ['1.2.3.4'],
        externalPolicyLocal: true,
        healthCheckNodePort: 30000,
        endpoints: [local('10.180.0.2'), remote('10.180.1.2')],
      }),
    ]),
    cases: [
      { name: 'external to LB IP keeps the source and stays local', sourceIP: EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.2:80' },
      { name: 'external to NodePort stays local', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3001, output: '10.180.0.2:80' },
      { name: 'external to external IP stays local', sourceIP: EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: '10.180.0.2:80' },
      { name: 'pod to LB IP short-circuits to every endpoint', sourceIP: POD, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80' },
      { name: 'pod to NodePort short-circuits', sourceIP: POD, destIP: NODE_IP, destPort: 3001, output: '10.180.0.2:80, 10.180.1.2:80' },
      { name: 'node process to NodePort is masqueraded and short-circuits', sourceIP: NODE_IP, fromLocalProcess: true, destIP: NODE_IP, destPort: 3001, output: '10.180.0.2:80, 10.180.1.2:80', masq: true },
      { name: 'pod to cluster IP uses Cluster policy', sourceIP: POD, destIP: '172.30.0.42', destPort: 80, output: '10.180.0.2:80, 10.180.1.2:80' },
      {
        name: 'health check node port is accepted (iptables only)',
        sourceIP: EXTERNAL_CLIENT,
        destIP: NODE_IP,
        destPort: 30000,
        output: '',
        verdict: 'ACCEPT',
        only: { nftables: { output: '', verdict: 'NONE' } },
      },
    ],
  },
  {
    name: 'D.4.8 externalTrafficPolicy Local without local endpoints',
    state: dpState([
      svc('ns2/svc2:p80', {
        clusterIP: '172.30.0.42',
        nodePort: 3001,
        externalIPs: ['192.168.99.22'],
        loadBalancerIPs: ['1.2.3.4'],
        externalPolicyLocal: true,
        endpoints: [remote('10.180.1.2')],
      }),
    ]),
    cases: [
      { name: 'external to LB IP is dropped', sourceIP: EXTERNAL_CLIENT, destIP: '1.2.3.4', destPort: 80, output: 'DROP' },
      { name: 'external to NodePort is dropped', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3001, output: 'DROP' },
      { name: 'external to external IP is dropped', sourceIP: EXTERNAL_CLIENT, destIP: '192.168.99.22', destPort: 80, output: 'DROP' },
      { name: 'pod to LB IP still short-circuits', sourceIP: POD, destIP: '1.2.3.4', destPort: 80, output: '10.180.1.2:80' },
      { name: 'node process to NodePort still short-circuits, masqueraded', sourceIP: NODE_IP, fromLocalProcess: true, destIP: NODE_IP, destPort: 3001, output: '10.180.1.2:80', masq: true },
      { name: 'pod to cluster IP is unaffected', sourceIP: POD, destIP: '172.30.0.42', destPort: 80, output: '10.180.1.2:80' },
    ],
  },
  {
    name: 'D.1.3/D.4.8 internalTrafficPolicy Local',
    state: dpState([
      svc('ns1/with-local:p80', { clusterIP: '172.30.0.41', internalPolicyLocal: true, endpoints: [local('10.180.0.1'), remote('10.180.2.1')] }),
      svc('ns1/no-local:p80', { clusterIP: '172.30.0.42', internalPolicyLocal: true, endpoints: [remote('10.180.2.2')] }),
    ]),
    cases: [
      { name: 'with local endpoints: only those', sourceIP: POD, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'with local endpoints: off-cluster source masqueraded', sourceIP: '192.168.1.5', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true },
      { name: 'without local endpoints: dropped, not rejected', sourceIP: POD, destIP: '172.30.0.42', destPort: 80, output: 'DROP' },
      { name: 'without local endpoints: node process dropped', sourceIP: NODE_IP, fromLocalProcess: true, destIP: '172.30.0.42', destPort: 80, output: 'DROP' },
    ],
  },
  {
    name: 'D.4.10 LoadBalancer source ranges',
    nodeIPs: [NODE_IP],
    state: dpState(
      [
        svc('ns5/svc5:p80', { clusterIP: '172.30.0.45', nodePort: 3002, loadBalancerIPs: ['5.6.7.8'], loadBalancerSourceRanges: ['203.0.113.0/25'], endpoints: [remote('10.180.0.3')] }),
        svc('ns6/svc6:p80', { clusterIP: '172.30.0.46', loadBalancerIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['192.168.0.0/24'], endpoints: [remote('10.180.0.6')] }),
      ],
      { primaryNodeIP: NODE_IP },
    ),
    cases: [
      { name: 'allowed client reaches the service, masqueraded', sourceIP: EXTERNAL_CLIENT, destIP: '5.6.7.8', destPort: 80, output: '10.180.0.3:80', masq: true },
      { name: 'client outside the ranges is dropped', sourceIP: '203.0.113.200', destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'pod outside the ranges is dropped', sourceIP: POD, destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
      { name: 'NodePort is not subject to source ranges', sourceIP: '203.0.113.200', destIP: NODE_IP, destPort: 3002, output: '10.180.0.3:80', masq: true },
      { name: 'cluster IP is not subject to source ranges', sourceIP: POD, destIP: '172.30.0.45', destPort: 80, output: '10.180.0.3:80' },
      { name: 'node inside a range may use the LB IP as source', sourceIP: '1.2.3.4', destIP: '1.2.3.4', destPort: 80, output: '10.180.0.6:80', masq: true },
      { name: 'node outside the ranges may not', sourceIP: '5.6.7.8', destIP: '5.6.7.8', destPort: 80, output: 'DROP' },
    ],
  },
  {
    name: 'D.4.6 masqueradeAll',
    state: dpState([svc('ns1/svc1:p80', { endpoints: [remote('10.180.0.1')] })], { masqueradeAll: true }),
    cases: [{ name: 'pod to cluster IP is masqueraded', sourceIP: POD, destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80', masq: true }],
  },
  {
    name: 'D.4.6/D.4.7 without a local-traffic detector',
    state: dpState(
      [
        svc('ns1/svc1:p80', { endpoints: [remote('10.180.0.1')] }),
        svc('ns2/svc2:p80', { clusterIP: '172.30.0.42', loadBalancerIPs: ['1.2.3.4'], externalPolicyLocal: true, endpoints: [local('10.180.0.2'), remote('10.180.1.2')] }),
      ],
      { podCIDR: null },
    ),
    cases: [
      { name: 'off-cluster source to cluster IP is not masqueraded', sourceIP: '192.168.1.5', destIP: '172.30.0.41', destPort: 80, output: '10.180.0.1:80' },
      { name: 'pod to eTP=Local LB IP is not short-circuited', sourceIP: POD, destIP: '1.2.3.4', destPort: 80, output: '10.180.0.2:80' },
    ],
  },
  {
    name: 'D.4.9 NodePorts only on the configured node IPs',
    nodeIPs: [NODE_IP, '192.168.0.3'],
    state: dpState([svc('ns1/svc1:p80', { nodePort: 3001, endpoints: [remote('10.180.0.1')] })], { nodeIPs: [NODE_IP] }),
    cases: [
      { name: 'configured address', sourceIP: EXTERNAL_CLIENT, destIP: NODE_IP, destPort: 3001, output: '10.180.0.1:80', masq: true },
      { name: 'other local address', sourceIP: EXTERNAL_CLIENT, destIP: '192.168.0.3', destPort: 3001, output: '' },
    ],
  },
  {
    name: 'IPv6 rendering',
    nodeIPs: ['fd00:192:168::2'],
    state: dpState(
      [
        svc('ns1/svc1:p80', {
          clusterIP: 'fd00:172:30::41',
          nodePort: 3001,
          loadBalancerIPs: ['2001:db8::1234'],
          loadBalancerSourceRanges: ['2001:db8:1::/64'],
          endpoints: [local('fd00:10:180::1'), remote('fd00:10:180::2')],
        }),
        svc('ns1/empty:p80', { clusterIP: 'fd00:172:30::42' }),
      ],
      { family: 'IPv6', podCIDR: 'fd00:10::/32' },
    ),
    cases: [
      { name: 'pod to cluster IP', sourceIP: 'fd00:10:180::9', destIP: 'fd00:172:30::41', destPort: 80, output: '[fd00:10:180::1]:80, [fd00:10:180::2]:80' },
      { name: 'hairpin', sourceIP: 'fd00:10:180::1', destIP: 'fd00:172:30::41', destPort: 80, output: '[fd00:10:180::1]:80, [fd00:10:180::2]:80', masq: true },
      { name: 'external to NodePort', sourceIP: '2001:db8:9::1', destIP: 'fd00:192:168::2', destPort: 3001, output: '[fd00:10:180::1]:80, [fd00:10:180::2]:80', masq: true },
      { name: 'allowed client to LB IP', sourceIP: '2001:db8:1::5', destIP: '2001:db8::1234', destPort: 80, output: '[fd00:10:180::1]:80, [fd00:10:180::2]:80', masq: true },
      { name: 'disallowed client to LB IP', sourceIP: '2001:db8:2::5', destIP: '2001:db8::1234', destPort: 80, output: 'DROP' },
      { name: 'no endpoints', sourceIP: 'fd00:10:180::9', destIP: 'fd00:172:30::42', destPort: 80, output: 'REJECT' },
      { name: 'no localhost NodePorts', sourceIP: '::1', fromLocalProcess: true, destIP: '::1', destPort: 3001, output: '' },
    ],
  },
];

const backends: Record<Backend, (state: DpState) => (p: TracePacket, nodeIPs: readonly string[]) => TraceResult> = {
  iptables: (state) => {
    const script = renderIptablesFull(state);
    return (p, nodeIPs) => traceIptables(script, p, { nodeIPs });
  },
  // D.4.15: the names are the only difference, so every flow is the same.
  'iptables (kube-proxy names)': (state) => {
    const script = renderIptablesFull(state, KUBE_PROXY_CHAINS);
    return (p, nodeIPs) => traceIptables(script, p, { nodeIPs });
  },
  nftables: (state) => {
    const script = renderNftablesFull(state);
    return (p, nodeIPs) => traceNftables(script, p, { nodeIPs });
  },
};

for (const [backend, render] of Object.entries(backends) as [Backend, (typeof backends)[Backend]][]) {
  describe(`packet flows through ${backend}`, () => {
    for (const sc of scenarios) {
      describe(sc.name, () => {
        const trace = render(deepFreeze(sc.state));
        for (const tc of sc.cases) {
          it(tc.name, () => {
            const want = tc.only?.[backend] ?? tc;
            const got = trace(tc, sc.nodeIPs ?? [NODE_IP]);
            expect(describeTrace(got)).toBe(want.output);
            if (got.verdict === 'DNAT') expect(got.masquerade).toBe(want.masq ?? false);
            if (want.verdict !== undefined) expect(got.verdict).toBe(want.verdict);
          });
        }
      });
    }
  });
}
