import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpEndpoint, DpServicePort, DpState } from '../model.ts';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import { applyIptablesRestore, dumpIptablesTable, emptyIptables } from '../testing/iptables-restore-sim.ts';
import { traceIptables } from '../testing/trace-iptables.ts';
import { KUBE_PROXY_CHAINS, OWN_CHAINS, endpointChainName, serviceChainNames } from './chain-names.ts';
import { renderIptables, renderIptablesFull } from './render.ts';
import { renderIptablesJumps } from './top-level.ts';

const frozen = (s: DpState): DpState => deepFreeze(s);
const port = (servicePortName: string, protocol: DpServicePort['protocol'] = 'TCP') => deepFreeze({ servicePortName, protocol });
const addr = (ip: string) => deepFreeze({ ip, port: 80 });
const eps = (n: number, base = '10.180.0.'): DpEndpoint[] => Array.from({ length: n }, (_, i) => ep(`${base}${i + 1}`));

describe('iptables golden ruleset (TestOverallIPTablesRules style)', () => {
  const golden = (o: Partial<DpState> = {}) =>
    frozen(
      dpState(
        [
          svc('ns1/svc1:p80', { clusterIP: '172.30.0.41', endpoints: [ep('10.180.0.1'), ep('10.180.0.2', { isLocal: true })] }),
          svc('ns2/svc2:p80', { clusterIP: '172.30.0.42', nodePort: 3001, externalPolicyLocal: true, healthCheckNodePort: 30000, endpoints: [ep('10.180.0.3', { isLocal: true })] }),
          svc('ns3/svc3:p80', { clusterIP: '172.30.0.43' }),
        ],
        o,
      ),
    );

  it('D.4.15 kube-proxy mode renders kube-proxy\'s exact restore text for a small cluster (mark 0x4000)', () => {
    expect(renderIptablesFull(golden(), KUBE_PROXY_CHAINS)).toBe(
      [
        '*filter',
        ':KUBE-NODEPORTS - [0:0]',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-EXTERNAL-SERVICES - [0:0]',
        ':KUBE-FORWARD - [0:0]',
        ':KUBE-PROXY-FIREWALL - [0:0]',
        '-I INPUT 1 -m comment --comment "kubernetes externally-visible service portals" -m conntrack --ctstate NEW -j KUBE-EXTERNAL-SERVICES',
        '-I INPUT 2 -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
        '-I INPUT 3 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j KUBE-PROXY-FIREWALL',
        '-I FORWARD 1 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j KUBE-PROXY-FIREWALL',
        '-I FORWARD 2 -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
        '-I FORWARD 3 -m comment --comment "kubernetes service portals" -m conntrack --ctstate NEW -j KUBE-SERVICES',
        '-I FORWARD 4 -m comment --comment "kubernetes externally-visible service portals" -m conntrack --ctstate NEW -j KUBE-EXTERNAL-SERVICES',
        '-I OUTPUT 1 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j KUBE-PROXY-FIREWALL',
        '-I OUTPUT 2 -m comment --comment "kubernetes service portals" -m conntrack --ctstate NEW -j KUBE-SERVICES',
        '-A KUBE-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT',
        '-A KUBE-SERVICES -m comment --comment "ns3/svc3:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j REJECT',
        '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
        '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
        '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
        'COMMIT',
        '*nat',
        ':KUBE-NODEPORTS - [0:0]',
        ':KUBE-SERVICES - [0:0]',
        ':KUBE-MARK-MASQ - [0:0]',
        ':KUBE-POSTROUTING - [0:0]',
        ':KUBE-SVC-XPGD46QRK7WJZT7O - [0:0]',
        ':KUBE-SEP-SXIVWICOYRO3J4NJ - [0:0]',
        ':KUBE-SEP-LXVODXWDISEETFEF - [0:0]',
        ':KUBE-SVC-GNZBNJ2PO5MGZ6GT - [0:0]',
        ':KUBE-SVL-GNZBNJ2PO5MGZ6GT - [0:0]',
        ':KUBE-EXT-GNZBNJ2PO5MGZ6GT - [0:0]',
        ':KUBE-SEP-2GOKER2KF7NAANZN - [0:0]',
        '-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-I OUTPUT 1 -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-I POSTROUTING 1 -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
        '-A KUBE-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j KUBE-EXT-GNZBNJ2PO5MGZ6GT',
        '-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-SVC-XPGD46QRK7WJZT7O',
        '-A KUBE-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 -j KUBE-SVC-GNZBNJ2PO5MGZ6GT',
        '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j KUBE-NODEPORTS',
        '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
        '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
        '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
        '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
        '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
        '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j KUBE-SEP-SXIVWICOYRO3J4NJ',
        '-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -j KUBE-SEP-LXVODXWDISEETFEF',
        '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-SXIVWICOYRO3J4NJ -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80',
        '-A KUBE-SEP-LXVODXWDISEETFEF -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-LXVODXWDISEETFEF -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80',
        '-A KUBE-SVC-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 ! -s 10.0.0.0/8 -j KUBE-MARK-MASQ',
        '-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "pod traffic for ns2/svc2:p80 external destinations" -s 10.0.0.0/8 -j KUBE-SVC-GNZBNJ2PO5MGZ6GT',
        '-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ',
        '-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -m comment --comment "route LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j KUBE-SVC-GNZBNJ2PO5MGZ6GT',
        '-A KUBE-EXT-GNZBNJ2PO5MGZ6GT -j KUBE-SVL-GNZBNJ2PO5MGZ6GT',
        '-A KUBE-SVC-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 -> 10.180.0.3:80" -j KUBE-SEP-2GOKER2KF7NAANZN',
        '-A KUBE-SVL-GNZBNJ2PO5MGZ6GT -m comment --comment "ns2/svc2:p80 -> 10.180.0.3:80" -j KUBE-SEP-2GOKER2KF7NAANZN',
        '-A KUBE-SEP-2GOKER2KF7NAANZN -m comment --comment ns2/svc2:p80 -s 10.180.0.3 -j KUBE-MARK-MASQ',
        '-A KUBE-SEP-2GOKER2KF7NAANZN -m comment --comment ns2/svc2:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });

  it('D.4.15 own mode (the default) renders the same rules under SLICEMESH- names and our mark 0x2000', () => {
    expect(renderIptablesFull(golden({ masqueradeBit: 13 }))).toBe(
      [
        '*filter',
        ':SLICEMESH-NODEPORTS - [0:0]',
        ':SLICEMESH-SERVICES - [0:0]',
        ':SLICEMESH-EXTERNAL-SERVICES - [0:0]',
        ':SLICEMESH-FORWARD - [0:0]',
        ':SLICEMESH-PROXY-FIREWALL - [0:0]',
        '-I INPUT 1 -m comment --comment "kubernetes externally-visible service portals" -m conntrack --ctstate NEW -j SLICEMESH-EXTERNAL-SERVICES',
        '-I INPUT 2 -m comment --comment "kubernetes health check service ports" -j SLICEMESH-NODEPORTS',
        '-I INPUT 3 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j SLICEMESH-PROXY-FIREWALL',
        '-I FORWARD 1 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j SLICEMESH-PROXY-FIREWALL',
        '-I FORWARD 2 -m comment --comment "kubernetes forwarding rules" -j SLICEMESH-FORWARD',
        '-I FORWARD 3 -m comment --comment "kubernetes service portals" -m conntrack --ctstate NEW -j SLICEMESH-SERVICES',
        '-I FORWARD 4 -m comment --comment "kubernetes externally-visible service portals" -m conntrack --ctstate NEW -j SLICEMESH-EXTERNAL-SERVICES',
        '-I OUTPUT 1 -m comment --comment "kubernetes load balancer firewall" -m conntrack --ctstate NEW -j SLICEMESH-PROXY-FIREWALL',
        '-I OUTPUT 2 -m comment --comment "kubernetes service portals" -m conntrack --ctstate NEW -j SLICEMESH-SERVICES',
        '-A SLICEMESH-NODEPORTS -m comment --comment "ns2/svc2:p80 health check node port" -m tcp -p tcp --dport 30000 -j ACCEPT',
        '-A SLICEMESH-SERVICES -m comment --comment "ns3/svc3:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.43 --dport 80 -j REJECT',
        '-A SLICEMESH-FORWARD -m conntrack --ctstate INVALID -j DROP',
        '-A SLICEMESH-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x2000/0x2000 -j ACCEPT',
        '-A SLICEMESH-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
        'COMMIT',
        '*nat',
        ':SLICEMESH-NODEPORTS - [0:0]',
        ':SLICEMESH-SERVICES - [0:0]',
        ':SLICEMESH-MARK-MASQ - [0:0]',
        ':SLICEMESH-POSTROUTING - [0:0]',
        ':SLICEMESH-SVC-XPGD46QRK7WJZT - [0:0]',
        ':SLICEMESH-SEP-SXIVWICOYRO3J4 - [0:0]',
        ':SLICEMESH-SEP-LXVODXWDISEETF - [0:0]',
        ':SLICEMESH-SVC-GNZBNJ2PO5MGZ6 - [0:0]',
        ':SLICEMESH-SVL-GNZBNJ2PO5MGZ6 - [0:0]',
        ':SLICEMESH-EXT-GNZBNJ2PO5MGZ6 - [0:0]',
        ':SLICEMESH-SEP-2GOKER2KF7NAAN - [0:0]',
        '-I PREROUTING 1 -m comment --comment "kubernetes service portals" -j SLICEMESH-SERVICES',
        '-I OUTPUT 1 -m comment --comment "kubernetes service portals" -j SLICEMESH-SERVICES',
        '-I POSTROUTING 1 -m comment --comment "kubernetes postrouting rules" -j SLICEMESH-POSTROUTING',
        '-A SLICEMESH-NODEPORTS -m comment --comment ns2/svc2:p80 -m tcp -p tcp --dport 3001 -j SLICEMESH-EXT-GNZBNJ2PO5MGZ6',
        '-A SLICEMESH-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j SLICEMESH-SVC-XPGD46QRK7WJZT',
        '-A SLICEMESH-SERVICES -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 -j SLICEMESH-SVC-GNZBNJ2PO5MGZ6',
        '-A SLICEMESH-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j SLICEMESH-NODEPORTS',
        '-A SLICEMESH-MARK-MASQ -j MARK --or-mark 0x2000',
        '-A SLICEMESH-POSTROUTING -m mark ! --mark 0x2000/0x2000 -j RETURN',
        '-A SLICEMESH-POSTROUTING -j MARK --xor-mark 0x2000',
        '-A SLICEMESH-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
        '-A SLICEMESH-SVC-XPGD46QRK7WJZT -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 ! -s 10.0.0.0/8 -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-SVC-XPGD46QRK7WJZT -m comment --comment "ns1/svc1:p80 -> 10.180.0.1:80" -m statistic --mode random --probability 0.5000000000 -j SLICEMESH-SEP-SXIVWICOYRO3J4',
        '-A SLICEMESH-SVC-XPGD46QRK7WJZT -m comment --comment "ns1/svc1:p80 -> 10.180.0.2:80" -j SLICEMESH-SEP-LXVODXWDISEETF',
        '-A SLICEMESH-SEP-SXIVWICOYRO3J4 -m comment --comment ns1/svc1:p80 -s 10.180.0.1 -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-SEP-SXIVWICOYRO3J4 -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.1:80',
        '-A SLICEMESH-SEP-LXVODXWDISEETF -m comment --comment ns1/svc1:p80 -s 10.180.0.2 -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-SEP-LXVODXWDISEETF -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.2:80',
        '-A SLICEMESH-SVC-GNZBNJ2PO5MGZ6 -m comment --comment "ns2/svc2:p80 cluster IP" -m tcp -p tcp -d 172.30.0.42 --dport 80 ! -s 10.0.0.0/8 -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-EXT-GNZBNJ2PO5MGZ6 -m comment --comment "pod traffic for ns2/svc2:p80 external destinations" -s 10.0.0.0/8 -j SLICEMESH-SVC-GNZBNJ2PO5MGZ6',
        '-A SLICEMESH-EXT-GNZBNJ2PO5MGZ6 -m comment --comment "masquerade LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-EXT-GNZBNJ2PO5MGZ6 -m comment --comment "route LOCAL traffic for ns2/svc2:p80 external destinations" -m addrtype --src-type LOCAL -j SLICEMESH-SVC-GNZBNJ2PO5MGZ6',
        '-A SLICEMESH-EXT-GNZBNJ2PO5MGZ6 -j SLICEMESH-SVL-GNZBNJ2PO5MGZ6',
        '-A SLICEMESH-SVC-GNZBNJ2PO5MGZ6 -m comment --comment "ns2/svc2:p80 -> 10.180.0.3:80" -j SLICEMESH-SEP-2GOKER2KF7NAAN',
        '-A SLICEMESH-SVL-GNZBNJ2PO5MGZ6 -m comment --comment "ns2/svc2:p80 -> 10.180.0.3:80" -j SLICEMESH-SEP-2GOKER2KF7NAAN',
        '-A SLICEMESH-SEP-2GOKER2KF7NAAN -m comment --comment ns2/svc2:p80 -s 10.180.0.3 -j SLICEMESH-MARK-MASQ',
        '-A SLICEMESH-SEP-2GOKER2KF7NAAN -m comment --comment ns2/svc2:p80 -m tcp -p tcp -j DNAT --to-destination 10.180.0.3:80',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });
});

describe('D.4.2 chain names (kube-proxy mode)', () => {
  // Hashes from upstream's own golden tests.
  const K = KUBE_PROXY_CHAINS;
  const cases = [
    { name: 'SVC of ns1/svc1:p80', got: () => serviceChainNames(port('ns1/svc1:p80', 'TCP'), K).svc, want: 'KUBE-SVC-XPGD46QRK7WJZT7O' },
    { name: 'EXT of ns2/svc2:p80', got: () => serviceChainNames(port('ns2/svc2:p80', 'TCP'), K).ext, want: 'KUBE-EXT-GNZBNJ2PO5MGZ6GT' },
    { name: 'FW of ns5/svc5:p80', got: () => serviceChainNames(port('ns5/svc5:p80', 'TCP'), K).fw, want: 'KUBE-FW-NUKIZ6OKUXPJNT4C' },
    { name: 'SVL shares the hash', got: () => serviceChainNames(port('ns4/svc4:p80', 'TCP'), K).svl, want: 'KUBE-SVL-4SW47YFZTEDKD3PK' },
    { name: 'SEP hashes name, protocol and ip:port', got: () => endpointChainName(port('ns1/svc1:p80'), addr('10.180.0.1'), K), want: 'KUBE-SEP-SXIVWICOYRO3J4NJ' },
    { name: 'SEP of another endpoint', got: () => endpointChainName(port('ns4/svc4:p80'), addr('10.180.0.5'), K), want: 'KUBE-SEP-C6EBXVWJJZMIWKLZ' },
    {
      name: 'an unnamed port hashes as ns/name whether given with a trailing colon or not',
      got: () => serviceChainNames(port('ns1/svc1:', 'TCP')).svc,
      want: serviceChainNames(port('ns1/svc1', 'TCP')).svc,
    },
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.got()).toBe(tc.want));

  it('the protocol is part of the hash', () => {
    expect(serviceChainNames(port('ns1/svc1:p80', 'UDP'), K).svc).not.toBe('KUBE-SVC-XPGD46QRK7WJZT7O');
  });
});

describe('D.4.3 load balancing probabilities', () => {
  const cases = [
    { n: 1, want: [] },
    { n: 2, want: ['0.5000000000'] },
    { n: 3, want: ['0.3333333333', '0.5000000000'] },
    { n: 4, want: ['0.2500000000', '0.3333333333', '0.5000000000'] },
    { n: 5, want: ['0.2000000000', '0.2500000000', '0.3333333333', '0.5000000000'] },
  ];
  for (const tc of cases) {
    it(`n=${tc.n}: rule i has 1/(n-i) with 10 decimals and the last rule is unconditional`, () => {
      const state = frozen(dpState([svc('ns1/svc1:p80', { endpoints: eps(tc.n) })]));
      const svcChain = serviceChainNames(port('ns1/svc1:p80', 'TCP')).svc;
      const jumps = renderIptables(state).script.split('\n').filter((l) => l.startsWith(`-A ${svcChain} `) && l.includes('-j SLICEMESH-SEP-'));
      expect(jumps).toHaveLength(tc.n);
      expect(jumps.map((l) => /--probability (\S+)/.exec(l)?.[1]).filter((p) => p !== undefined)).toEqual(tc.want);
      expect(jumps[tc.n - 1]).not.toContain('statistic');
      const traced = traceIptables(renderIptablesFull(state), { sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80 }, { nodeIPs: [] });
      expect(traced.endpoints).toHaveLength(tc.n);
    });
  }
});

describe('D.4.4 session affinity', () => {
  const state = frozen(dpState([svc('ns1/svc1:p80', { sessionAffinityTimeoutSeconds: 10800, endpoints: eps(3) })]));
  const sp = state.servicePorts[0] as DpServicePort;
  const seps = eps(3).map((e) => endpointChainName(sp, e));
  const pkt = { sourceIP: '10.0.0.2', destIP: '172.30.0.41', destPort: 80 };

  it('checks every endpoint with recent --rcheck before the random rules', () => {
    const lines = renderIptables(state).script.split('\n').filter((l) => l.startsWith('-A SLICEMESH-SVC-'));
    const rcheck = lines.filter((l) => l.includes('--rcheck'));
    expect(rcheck).toHaveLength(3);
    expect(rcheck[0]).toContain(`-m recent --name ${seps[0]} --rcheck --seconds 10800 --reap -j ${seps[0]}`);
    expect(lines.findIndex((l) => l.includes('statistic'))).toBeGreaterThan(lines.findIndex((l) => l.includes('--rcheck')));
  });
  it('a new client is recorded by the endpoint chain it lands in', () => {
    const r = traceIptables(renderIptablesFull(state), pkt, { nodeIPs: [] });
    expect(r.endpoints).toHaveLength(3);
    for (const p of r.paths) expect(p.affinity).toEqual([seps[r.endpoints.indexOf(p.endpoint ?? '')]]);
  });
  it('a known client goes straight to its endpoint', () => {
    const r = traceIptables(renderIptablesFull(state), pkt, { nodeIPs: [], affinityHits: [seps[1] ?? ''] });
    expect(r.endpoints).toEqual(['10.180.0.2:80']);
  });
});

describe('D.4.13 large-cluster mode', () => {
  const cases = [
    { name: 'exactly 1000 endpoints keep per-endpoint comments', endpoints: 1000, large: false },
    { name: 'more than 1000 endpoints drop them', endpoints: 1001, large: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const state = frozen(dpState([svc('ns1/a:p', { endpoints: eps(500, '10.1.') }), svc('ns1/b:p', { clusterIP: '172.30.0.42', endpoints: eps(tc.endpoints - 500, '10.2.') })]));
      const r = renderIptables(state);
      expect(r.largeClusterMode).toBe(tc.large);
      const sepRules = r.script.split('\n').filter((l) => l.startsWith('-A SLICEMESH-SEP-'));
      expect(sepRules.some((l) => l.includes('--comment'))).toBe(!tc.large);
      expect(r.script).toContain('"ns1/a:p cluster IP"');
    });
  }
  it('can be forced by option', () => {
    const r = renderIptables(frozen(dpState([svc('ns1/a:p', { endpoints: eps(1) })])), { largeClusterMode: true });
    expect(r.script).not.toContain('ns1/a:p -> 10.180.0.1:80');
  });
});

describe('rule counts and ownership', () => {
  it('counts the rules of every owned chain and lists the chains', () => {
    const state = frozen(dpState([svc('ns1/svc1:p80', { endpoints: eps(2) }), svc('ns3/svc3:p80', { clusterIP: '172.30.0.43' })]));
    const r = renderIptables(state);
    // filter: REJECT + 3 forward; nat: 1 dispatch + 1 nodeports jump + 4 masquerade + svc chain (1 masq + 2) + 2 SEP x 2.
    expect(r.ruleCounts).toEqual({ filter: 4, nat: 13 });
    expect(r.chains.nat).toEqual(expect.arrayContaining([OWN_CHAINS.services, serviceChainNames(state.servicePorts[0] as DpServicePort).svc]));
    expect(r.chains.nat).toHaveLength(4 + 3);
  });
  it('an empty state still creates and fills the top-level chains', () => {
    const r = renderIptables(frozen(dpState([])));
    expect(r.chains.nat).toEqual(['SLICEMESH-NODEPORTS', 'SLICEMESH-SERVICES', 'SLICEMESH-MARK-MASQ', 'SLICEMESH-POSTROUTING']);
    expect(r.ruleCounts).toEqual({ filter: 3, nat: 5 });
    expect(() => applyIptablesRestore(emptyIptables(), r.script)).not.toThrow();
  });
});

describe('jumps from the built-in chains', () => {
  it('lists every jump of D.4.1 with its NEW-state match where upstream has one (kube-proxy mode)', () => {
    const jumps = renderIptablesJumps(KUBE_PROXY_CHAINS).map((j) => `${j.table}/${j.chain}->${j.target}${j.args.includes('NEW') ? ' (NEW)' : ''}`);
    expect(jumps).toEqual([
      'filter/INPUT->KUBE-EXTERNAL-SERVICES (NEW)',
      'filter/INPUT->KUBE-NODEPORTS',
      'filter/INPUT->KUBE-PROXY-FIREWALL (NEW)',
      'filter/FORWARD->KUBE-PROXY-FIREWALL (NEW)',
      'filter/FORWARD->KUBE-FORWARD',
      'filter/FORWARD->KUBE-SERVICES (NEW)',
      'filter/FORWARD->KUBE-EXTERNAL-SERVICES (NEW)',
      'filter/OUTPUT->KUBE-PROXY-FIREWALL (NEW)',
      'filter/OUTPUT->KUBE-SERVICES (NEW)',
      'nat/PREROUTING->KUBE-SERVICES',
      'nat/OUTPUT->KUBE-SERVICES',
      'nat/POSTROUTING->KUBE-POSTROUTING',
    ]);
  });
  it('renderIptables leaves the built-in chains alone unless asked', () => {
    expect(renderIptables(frozen(dpState([]))).script).not.toMatch(/^-I /m);
  });
  it('the full script puts the jumps at the top of the built-in chains of a fresh node', () => {
    const tables = applyIptablesRestore(emptyIptables(), renderIptablesFull(frozen(dpState([]))));
    expect(tables.get('nat')?.get('PREROUTING')?.map((r) => r.words.at(-1))).toEqual(['SLICEMESH-SERVICES']);
    expect(tables.get('filter')?.get('FORWARD')?.map((r) => r.words.at(-1))).toEqual(['SLICEMESH-PROXY-FIREWALL', 'SLICEMESH-FORWARD', 'SLICEMESH-SERVICES', 'SLICEMESH-EXTERNAL-SERVICES']);
  });
  it('documented trade-off: applying the full script twice duplicates only the built-in jumps', () => {
    const script = renderIptablesFull(frozen(dpState([svc('ns1/svc1:p80', { endpoints: eps(1) })])));
    const once = applyIptablesRestore(emptyIptables(), script);
    const twice = applyIptablesRestore(once, script);
    expect(twice.get('nat')?.get('PREROUTING')).toHaveLength(2);
    expect(dumpIptablesTable(twice, 'nat').filter((l) => l.includes('SLICEMESH-SVC'))).toEqual(dumpIptablesTable(once, 'nat').filter((l) => l.includes('SLICEMESH-SVC')));
  });
});
