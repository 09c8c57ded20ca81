import type { IPFamily, Service } from '@slicemesh/model';
import { deepFreeze, makeService } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { ServicePortInfo } from './service-port.ts';
import { parseCIDR, proxiedServicePorts, servicePortsOf } from './service-port.ts';

const dual = (spec: Partial<Service['spec']> = {}, status?: Service['status']): Service => ({
  ...makeService('web', {
    ipFamilies: ['IPv4', 'IPv6'],
    ports: [
      { name: 'http', port: 80, protocol: 'TCP', nodePort: 30080 },
      { name: 'dns', port: 53, protocol: 'UDP' },
    ],
    spec: { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10', 'fd00::0a'], ...spec },
  }),
  ...(status ? { status } : {}),
});

interface Case {
  readonly name: string;
  readonly service: Service;
  readonly family?: IPFamily;
  /** Expected fields of each port, in order. */
  readonly expect: readonly Partial<ServicePortInfo>[];
}

const cases: Case[] = [
  {
    name: 'D.1.1 one port model per spec port, named <ns>/<name>:<port>, protocol defaults to TCP',
    service: makeService('web', { namespace: 'shop', ports: [{ port: 80 }, { name: 'metrics', port: 9090, protocol: 'TCP' }] }),
    expect: [
      { servicePortName: 'shop/web:', portName: '', protocol: 'TCP', port: 80, clusterIP: '10.96.0.10', nodePort: null },
      { servicePortName: 'shop/web:metrics', protocol: 'TCP', port: 9090 },
    ],
  },
  {
    name: 'D.1.1 the cluster IP is the one of the proxy family (canonical text)',
    service: dual(),
    family: 'IPv6',
    expect: [{ clusterIP: 'fd00::a', family: 'IPv6' }, { clusterIP: 'fd00::a', protocol: 'UDP' }],
  },
  {
    name: 'D.1.1 a single-stack service has no cluster IP in the other family',
    service: makeService('web'),
    family: 'IPv6',
    expect: [{ clusterIP: null, usesClusterEndpoints: true }],
  },
  {
    name: 'D.1.1 headless services have no cluster IP',
    service: makeService('web', { clusterIP: 'None' }),
    expect: [{ clusterIP: null }],
  },
  { name: 'D.1 ExternalName services produce nothing', service: makeService('web', { spec: { type: 'ExternalName', externalName: 'x.example' } }), expect: [] },
  { name: 'D.1 a service without ports produces nothing', service: makeService('web', { ports: [] }), expect: [] },
  {
    name: 'D.1.2 a NodePort port is externally accessible and uses cluster endpoints',
    service: dual({ type: 'NodePort' }),
    expect: [
      { nodePort: 30080, externallyAccessible: true, usesClusterEndpoints: true, usesLocalEndpoints: false },
      { nodePort: null, externallyAccessible: false },
    ],
  },
  {
    name: 'D.1.2 externalIPs of the proxy family make a ClusterIP port externally accessible',
    service: makeService('web', { spec: { externalIPs: ['192.0.2.1', '2001:db8::1', 'not-an-ip'] } }),
    expect: [{ externalIPs: ['192.0.2.1'], externallyAccessible: true }],
  },
  {
    name: 'D.1.2 externalIPs of the other family do not make the port externally accessible',
    service: makeService('web', { spec: { externalIPs: ['2001:db8::1'], externalTrafficPolicy: 'Local' } }),
    expect: [{ externalIPs: [], externallyAccessible: false, externalPolicyLocal: true, usesLocalEndpoints: false }],
  },
  {
    name: 'D.1.3 eTP Local counts only when the service is externally accessible at API level',
    service: makeService('web', { spec: { externalTrafficPolicy: 'Local' } }),
    expect: [{ externalPolicyLocal: false, usesLocalEndpoints: false, usesClusterEndpoints: true }],
  },
  {
    name: 'D.1.4 eTP Local on a NodePort uses both Cluster (short-circuit) and Local endpoints',
    service: dual({ type: 'NodePort', externalTrafficPolicy: 'Local' }),
    expect: [
      { externalPolicyLocal: true, usesClusterEndpoints: true, usesLocalEndpoints: true },
      // The UDP port has no node port: not externally accessible by itself.
      { externalPolicyLocal: true, usesClusterEndpoints: true, usesLocalEndpoints: false },
    ],
  },
  {
    name: 'D.1.4 iTP Local on an internal-only service uses only Local endpoints',
    service: makeService('web', { spec: { internalTrafficPolicy: 'Local' } }),
    expect: [{ internalPolicyLocal: true, usesClusterEndpoints: false, usesLocalEndpoints: true }],
  },
  {
    name: 'D.1.5 ClientIP affinity defaults to 10800 seconds',
    service: makeService('web', { spec: { sessionAffinity: 'ClientIP' } }),
    expect: [{ sessionAffinityTimeoutSeconds: 10800 }],
  },
  {
    name: 'D.1.5 ClientIP affinity uses the configured timeout',
    service: makeService('web', { spec: { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } } }),
    expect: [{ sessionAffinityTimeoutSeconds: 60 }],
  },
  { name: 'D.1.5 no affinity gives null', service: makeService('web', { spec: { sessionAffinity: 'None' } }), expect: [{ sessionAffinityTimeoutSeconds: null }] },
  {
    name: 'D.1.6 LB ingress IPs are used only in VIP mode or with ipMode unset, per family',
    service: dual({ type: 'LoadBalancer' }, {
      loadBalancer: { ingress: [{ ip: '198.51.100.1' }, { ip: '198.51.100.2', ipMode: 'VIP' }, { ip: '198.51.100.3', ipMode: 'Proxy' }, { ip: '2001:db8::2' }, { hostname: 'lb.example' }] },
    }),
    expect: [{ loadBalancerIPs: ['198.51.100.1', '198.51.100.2'] }, { loadBalancerIPs: ['198.51.100.1', '198.51.100.2'], externallyAccessible: true }],
  },
  {
    name: 'D.1.6 source ranges are trimmed, split by family and masked',
    service: dual({ type: 'LoadBalancer', loadBalancerSourceRanges: [' 10.0.0.7/8 ', '2001:db8::1/32', 'bogus', '192.168.1.0/33'] }),
    expect: [{ loadBalancerSourceRanges: ['10.0.0.0/8'] }, { loadBalancerSourceRanges: ['10.0.0.0/8'] }],
  },
  {
    name: 'D.1.6 IPv6 source ranges go to the IPv6 proxy',
    service: dual({ type: 'LoadBalancer', loadBalancerSourceRanges: ['10.0.0.0/8', '2001:DB8::1/32'] }),
    family: 'IPv6',
    expect: [{ loadBalancerSourceRanges: ['2001:db8::/32'] }, {}],
  },
  {
    name: 'D.1 health check node port only for LoadBalancer with eTP Local',
    service: dual({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 }),
    expect: [{ healthCheckNodePort: 32000 }, { healthCheckNodePort: 32000 }],
  },
  {
    name: 'D.1 no health check node port for NodePort services',
    service: dual({ type: 'NodePort', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 }),
    expect: [{ healthCheckNodePort: null }, {}],
  },
  {
    name: 'D.1.1 legacy objects with only spec.clusterIP still resolve the family',
    service: makeService('web', { ipFamilies: [], spec: { clusterIP: '10.96.0.99' } }),
    expect: [{ clusterIP: '10.96.0.99' }],
  },
];

describe('servicePortsOf', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const got = servicePortsOf(deepFreeze(tc.service), tc.family ?? 'IPv4');
      expect(got).toHaveLength(tc.expect.length);
      tc.expect.forEach((want, i) => expect(got[i]).toMatchObject(want));
    });
  }
});

describe('proxiedServicePorts', () => {
  const cases = [
    { name: 'D.1 ports with a cluster IP of the family are programmed', service: dual(), family: 'IPv6' as const, count: 2 },
    { name: 'D.1 headless services are not programmed', service: makeService('web', { clusterIP: 'None' }), family: 'IPv4' as const, count: 0 },
    { name: 'D.1 a single-stack service is not programmed by the other family', service: makeService('web'), family: 'IPv6' as const, count: 0 },
  ];
  for (const tc of cases) it(tc.name, () => expect(proxiedServicePorts(deepFreeze(tc.service), tc.family)).toHaveLength(tc.count));
});

describe('parseCIDR', () => {
  const cases = [
    { name: 'masks host bits of IPv4', text: '10.1.2.3/16', want: { family: 'IPv4', cidr: '10.1.0.0/16' } },
    { name: 'canonicalises IPv6', text: '2001:DB8:0:0:1::/64', want: { family: 'IPv6', cidr: '2001:db8::/64' } },
    { name: 'rejects prefixes longer than the address', text: '10.0.0.0/40', want: null },
    { name: 'rejects text without prefix', text: '10.0.0.0', want: null },
    { name: 'rejects IPv4-mapped IPv6 networks', text: '::ffff:10.0.0.0/104', want: null },
  ];
  for (const tc of cases) it(tc.name, () => expect(parseCIDR(tc.text)).toEqual(tc.want));
});
