import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { KUBE_PROXY_CHAINS, iptablesChainNames } from '../iptables/chain-names.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { IPSET_NAME_MAX, ipvsCompanionJumps, ipvsExtraChains, ipvsSetNames, renderIpvsCompanion } from './companion.ts';

const state = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.1')] }),
      svc('ns1/lb:http', {
        clusterIP: '172.30.0.42',
        nodePort: 30080,
        externalIPs: ['192.168.99.1'],
        loadBalancerIPs: ['1.2.3.4'],
        loadBalancerSourceRanges: ['192.168.0.0/24'],
        externalPolicyLocal: true,
        healthCheckNodePort: 30000,
        endpoints: [ep('10.180.1.2')],
      }),
      svc('ns1/empty:dns', { clusterIP: '172.30.0.43', port: 53, protocol: 'UDP', nodePort: 30053 }),
      svc('ns1/sctp:s', { clusterIP: '172.30.0.11', port: 9, protocol: 'SCTP', nodePort: 30009, endpoints: [ep('10.180.2.2', { port: 9 })] }),
    ],
    { nodeIPs: ['192.168.0.2'], primaryNodeIP: '192.168.0.2', podCIDR: '10.180.0.0/16' },
  ),
);

const entries = (r: ReturnType<typeof renderIpvsCompanion>, name: string): readonly string[] | undefined => r.sets.find((s) => s.name === name)?.entries;

describe('D.5.4 ipvsSetNames', () => {
  it("kube-proxy's names exactly under the KUBE prefix, KUBE-6- for IPv6", () => {
    expect([ipvsSetNames('KUBE').clusterIP, ipvsSetNames('KUBE').nodePortLocalSCTP, ipvsSetNames('KUBE', 'IPv6').loadBalancerSourceCIDR]).toEqual([
      'KUBE-CLUSTER-IP',
      'KUBE-NODE-PORT-LOCAL-SCTP-HASH',
      'KUBE-6-LOAD-BALANCER-SOURCE-CIDR'.replace('LOAD-BALANCER', 'LB'),
    ]);
  });
  it('our prefix abbreviates only names over 31 characters, and every name fits', () => {
    const own = ipvsSetNames('SLICEMESH', 'IPv6');
    expect([own.clusterIP, own.loadBalancerSourceCIDR, own.nodePortLocalSCTP, own.healthCheckNodePort]).toEqual([
      'SLICEMESH-6-CLUSTER-IP',
      'SLICEMESH-6-LB-SOURCE-CIDR',
      'SLICEMESH-6-NP-LOCAL-SCTP-HASH',
      'SLICEMESH-6-HEALTH-CHECK-NP',
    ]);
    expect(Object.values(own).every((n) => n.length <= IPSET_NAME_MAX)).toBe(true);
    expect(new Set(Object.values(own)).size).toBe(Object.values(own).length);
  });
  it('extra chains: kube-proxy spelling, shortened for a long prefix', () => {
    expect(ipvsExtraChains(KUBE_PROXY_CHAINS)).toEqual({ loadBalancer: 'KUBE-LOAD-BALANCER', sourceRangesFirewall: 'KUBE-SOURCE-RANGES-FIREWALL', ipvsFilter: 'KUBE-IPVS-FILTER' });
    expect(ipvsExtraChains(iptablesChainNames('SLICEMESH'))).toEqual({ loadBalancer: 'SLICEMESH-LOAD-BALANCER', sourceRangesFirewall: 'SLICEMESH-SRC-RANGES-FW', ipvsFilter: 'SLICEMESH-IPVS-FILTER' });
  });
});

describe('D.5.4 renderIpvsCompanion', () => {
  const own = renderIpvsCompanion(state);
  const cases: { name: string; got: () => unknown; want: unknown }[] = [
    { name: 'cluster IPs with protocol and port', got: () => entries(own, 'SLICEMESH-CLUSTER-IP'), want: ['172.30.0.11,sctp:9', '172.30.0.41,tcp:80', '172.30.0.42,tcp:80', '172.30.0.43,udp:53'] },
    { name: 'hairpin entries once per endpoint', got: () => entries(own, 'SLICEMESH-LOOP-BACK'), want: ['10.180.0.1,tcp:80,10.180.0.1', '10.180.1.2,tcp:80,10.180.1.2', '10.180.2.2,sctp:9,10.180.2.2'] },
    { name: 'TCP and UDP node ports in bitmaps, Local ones also in the LOCAL set', got: () => [entries(own, 'SLICEMESH-NODE-PORT-TCP'), entries(own, 'SLICEMESH-NODE-PORT-LOCAL-TCP'), entries(own, 'SLICEMESH-NODE-PORT-UDP')], want: [['30080'], ['30080'], ['30053']] },
    { name: 'SCTP node ports per node IP', got: () => entries(own, 'SLICEMESH-NODE-PORT-SCTP-HASH'), want: ['192.168.0.2,sctp:30009'] },
    { name: 'source ranges, and the node itself when inside one', got: () => [entries(own, 'SLICEMESH-LB-SOURCE-CIDR'), entries(own, 'SLICEMESH-LB-SOURCE-IP'), entries(own, 'SLICEMESH-LOAD-BALANCER-FW')], want: [['1.2.3.4,tcp:80,192.168.0.0/24'], ['1.2.3.4,tcp:80,192.168.0.2'], ['1.2.3.4,tcp:80']] },
    { name: 'no endpoints: the service addresses are rejected', got: () => entries(own, 'SLICEMESH-NO-ENDPOINTS'), want: ['172.30.0.43,udp:53'] },
    { name: 'every service address is in IPVS-IPS', got: () => entries(own, 'SLICEMESH-IPVS-IPS'), want: ['1.2.3.4', '172.30.0.11', '172.30.0.41', '172.30.0.42', '172.30.0.43', '192.168.99.1'] },
    { name: 'health check node ports', got: () => entries(own, 'SLICEMESH-HEALTH-CHECK-NP'), want: ['30000'] },
    { name: 'ClusterIP masquerade only from outside the pod CIDR', got: () => own.iptablesRestore.includes('--match-set SLICEMESH-CLUSTER-IP dst,dst ! -s 10.180.0.0/16 -j SLICEMESH-MARK-MASQ'), want: true },
    { name: 'masqueradeAll marks every ClusterIP connection', got: () => renderIpvsCompanion({ ...state, masqueradeAll: true }).iptablesRestore.includes('--match-set SLICEMESH-CLUSTER-IP dst,dst -j SLICEMESH-MARK-MASQ'), want: true },
    { name: 'NodePort jump only for the configured node IPs', got: () => own.iptablesRestore.match(/^-A SLICEMESH-SERVICES .* -d 192\.168\.0\.2 -j SLICEMESH-NODEPORTS$/gm)?.length, want: 1 },
    { name: 'kube-proxy names throughout under KUBE', got: () => /SLICEMESH/.test(renderIpvsCompanion(state, KUBE_PROXY_CHAINS).iptablesRestore + renderIpvsCompanion(state, KUBE_PROXY_CHAINS).ipsetRestore), want: false },
    { name: 'IPVS access filter: new connections to a service address on another port are rejected', got: () => own.iptablesRestore.includes('-A SLICEMESH-IPVS-FILTER -m comment --comment "service address, but no service on this port" -m conntrack --ctstate NEW -m set --match-set SLICEMESH-IPVS-IPS dst -j REJECT'), want: true },
    { name: 'jumps: the iptables mode\'s plus filter INPUT to the IPVS filter; none with includeJumps false', got: () => [own.iptablesRestore.match(/^-I /gm)?.length, /^-I INPUT 4 .* -j SLICEMESH-IPVS-FILTER$/m.test(own.iptablesRestore), /^-I /m.test(renderIpvsCompanion(state, undefined, { includeJumps: false }).iptablesRestore)], want: [ipvsCompanionJumps().length, true, false] },
    { name: 'deterministic', got: () => renderIpvsCompanion(state).ipsetRestore + renderIpvsCompanion(state).iptablesRestore, want: own.ipsetRestore + own.iptablesRestore },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.got()).toEqual(tc.want));

  it('ipset restore text: create, flush and add per set; bitmaps span every port', () => {
    expect(own.ipsetRestore).toMatch(/^create SLICEMESH-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536\nflush SLICEMESH-LOOP-BACK\nadd /);
    expect(own.ipsetRestore).toContain('create SLICEMESH-NODE-PORT-TCP bitmap:port range 0-65535\n');
    expect(renderIpvsCompanion({ ...state, family: 'IPv6', servicePorts: [] }).ipsetRestore).toContain('create SLICEMESH-6-CLUSTER-IP hash:ip,port family inet6 ');
  });
});
