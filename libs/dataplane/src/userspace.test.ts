// D.10 the userspace mode's proxies and REDIRECT rules.
import { describe, expect, it } from 'vitest';
import { dpEndpoint, dpServicePort, dpState } from './testing/builders.ts';
import { KUBE_PROXY_CHAINS } from './iptables/chain-names.ts';
import { renderUserspaceRules, userspaceJumps, userspaceProxies } from './userspace.ts';

const a = dpEndpoint('10.244.1.2', { port: 8080 });
const b = dpEndpoint('10.244.2.2', { port: 8080, isLocal: true });

describe('userspaceProxies', () => {
  const cases = [
    { name: 'ClusterIP with two endpoints', sp: dpServicePort('ns/web:http', { endpoints: [a, b] }), want: [{ key: 'ns/web:http/TCP', vips: [{ ip: '172.30.0.41', port: 80 }], eps: ['10.244.1.2', '10.244.2.2'] }] },
    { name: 'no endpoints: no proxy', sp: dpServicePort('ns/web:http', { endpoints: [] }), want: [] },
    {
      name: 'NodePort, external and LB IPs share the ClusterIP proxy under Cluster policy',
      sp: dpServicePort('ns/web:http', { endpoints: [a], nodePort: 30080, externalIPs: ['192.0.2.1'], loadBalancerIPs: ['198.51.100.1'] }),
      want: [{ key: 'ns/web:http/TCP', vips: [{ ip: '172.30.0.41', port: 80 }, { ip: '192.0.2.1', port: 80 }, { ip: '198.51.100.1', port: 80 }, { ip: null, port: 30080 }], eps: ['10.244.1.2'] }],
    },
    {
      name: 'externalTrafficPolicy Local: a separate external proxy with the local endpoints',
      sp: dpServicePort('ns/web:http', { endpoints: [a, b], nodePort: 30080, externalPolicyLocal: true }),
      want: [
        { key: 'ns/web:http/TCP', vips: [{ ip: '172.30.0.41', port: 80 }], eps: ['10.244.1.2', '10.244.2.2'] },
        { key: 'ns/web:http/TCP#external', vips: [{ ip: null, port: 30080 }], eps: ['10.244.2.2'] },
      ],
    },
    { name: 'internalTrafficPolicy Local: only the local endpoint', sp: dpServicePort('ns/web:http', { endpoints: [a, b], internalPolicyLocal: true }), want: [{ key: 'ns/web:http/TCP', vips: [{ ip: '172.30.0.41', port: 80 }], eps: ['10.244.2.2'] }] },
    { name: 'SCTP is not proxied', sp: dpServicePort('ns/web:http', { endpoints: [a], protocol: 'SCTP' }), want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = userspaceProxies(dpState([c.sp])).map((p) => ({ key: p.key, vips: p.vips, eps: p.endpoints.map((e) => e.ip) }));
      expect(got).toEqual(c.want);
    });
  }

  it('keeps protocol and affinity', () => {
    const [p] = userspaceProxies(dpState([dpServicePort('ns/dns:dns', { endpoints: [a], protocol: 'UDP', sessionAffinityTimeoutSeconds: 30 })]));
    expect(p).toMatchObject({ protocol: 'UDP', affinityTimeoutSeconds: 30, endpoints: [{ ip: '10.244.1.2', port: 8080 }] });
  });
});

describe('renderUserspaceRules', () => {
  const proxies = userspaceProxies(dpState([dpServicePort('ns/web:http', { endpoints: [a], nodePort: 30080 }), dpServicePort('ns/dns:dns', { endpoints: [a], protocol: 'UDP', clusterIP: '172.30.0.10', port: 53 })]));

  it('redirects every VIP in both chains to the proxy port', () => {
    const { script, ruleCount } = renderUserspaceRules(proxies, { 'ns/web:http/TCP': 40001, 'ns/dns:dns/UDP': 40002 });
    expect(script.split('\n')).toEqual([
      '*nat',
      ':SLICEMESH-PORTALS-CONTAINER - [0:0]',
      ':SLICEMESH-PORTALS-HOST - [0:0]',
      '-A SLICEMESH-PORTALS-CONTAINER -m comment --comment "ns/dns:dns" -d 172.30.0.10/32 -p udp -m udp --dport 53 -j REDIRECT --to-ports 40002',
      '-A SLICEMESH-PORTALS-HOST -m comment --comment "ns/dns:dns" -d 172.30.0.10/32 -p udp -m udp --dport 53 -j REDIRECT --to-ports 40002',
      '-A SLICEMESH-PORTALS-CONTAINER -m comment --comment "ns/web:http" -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 40001',
      '-A SLICEMESH-PORTALS-HOST -m comment --comment "ns/web:http" -d 172.30.0.41/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 40001',
      '-A SLICEMESH-PORTALS-CONTAINER -m comment --comment "ns/web:http nodePort" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j REDIRECT --to-ports 40001',
      '-A SLICEMESH-PORTALS-HOST -m comment --comment "ns/web:http nodePort" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j REDIRECT --to-ports 40001',
      'COMMIT',
      '',
    ]);
    expect(ruleCount).toBe(6);
  });

  it('NodePorts on the configured node IPs only; proxies without a port get no rule; kube-proxy naming', () => {
    const { script } = renderUserspaceRules(proxies, { 'ns/web:http/TCP': 40001 }, { nodeIPs: ['192.168.1.5'], chains: KUBE_PROXY_CHAINS });
    expect(script).toContain('-A KUBE-PORTALS-CONTAINER -m comment --comment "ns/web:http nodePort" -d 192.168.1.5/32 -p tcp -m tcp --dport 30080 -j REDIRECT --to-ports 40001');
    expect(script).not.toContain('udp');
    expect(userspaceJumps(KUBE_PROXY_CHAINS).map((j) => `${j.chain} -> ${j.target}`)).toEqual(['PREROUTING -> KUBE-PORTALS-CONTAINER', 'OUTPUT -> KUBE-PORTALS-HOST']);
  });
});
