// The services both restart tests (iptables and nftables) program on the real kernel: one of
// every kind of rule the renderers write, so each kind is shown to be kept when unchanged.
// Test-only.

import type { DpServicePort, DpState } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';

/** ns1/web with `n` endpoints (the service the tests change). */
export const restartWeb = (n: number): DpServicePort =>
  svc('ns1/web:http', { clusterIP: '10.96.0.10', endpoints: Array.from({ length: n }, (_, i) => ep(`10.180.0.${i + 1}`, { port: 8080 })) });

/** web first, ns2/internal last (the tests drop it to make a stale service). */
export const RESTART_PORTS: readonly DpServicePort[] = [
  restartWeb(3),
  svc('ns1/db:pg', { clusterIP: '10.96.0.11', port: 5432, sessionAffinityTimeoutSeconds: 10800, endpoints: [ep('10.180.1.1', { port: 5432 }), ep('10.180.1.2', { port: 5432 })] }),
  svc('ns1/dns:dns', { clusterIP: '10.96.0.12', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] }),
  svc('ns2/empty:http', { clusterIP: '10.96.0.13' }),
  svc('ns2/np:http', { clusterIP: '10.96.0.14', nodePort: 30080, endpoints: [ep('10.180.3.1', { port: 8080 })] }),
  svc('ns2/local:http', { clusterIP: '10.96.0.15', nodePort: 30081, externalPolicyLocal: true, endpoints: [ep('10.180.4.1', { port: 8080, isLocal: true }), ep('10.180.4.2', { port: 8080 })] }),
  svc('ns2/lb:https', {
    clusterIP: '10.96.0.16',
    port: 443,
    nodePort: 30443,
    loadBalancerIPs: ['192.0.2.10'],
    loadBalancerSourceRanges: ['203.0.113.0/24'],
    externalIPs: ['198.51.100.20'],
    endpoints: [ep('10.180.5.1', { port: 8443 })],
  }),
  svc('ns2/internal:http', { clusterIP: '10.96.0.17', internalPolicyLocal: true, endpoints: [ep('10.180.6.1', { port: 8080, isLocal: true })] }),
];

/** The node the tests program: pods in 10.180.0.0/16, node IP 192.168.9.1. */
export const restartState = (ports: readonly DpServicePort[]): DpState => dpState(ports, { podCIDR: '10.180.0.0/16', nodeIPs: ['192.168.9.1'], primaryNodeIP: '192.168.9.1' });
