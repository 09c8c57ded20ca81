import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '../testing/builders.ts';
import type { IpvsRenderResult, IpvsVirtualServer } from './desired.ts';
import { renderIpvs } from './desired.ts';
import type { IpvsOperation } from './diff.ts';
import { diffIpvs, ipvsadmArgs } from './diff.ts';

const state = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', {
        clusterIP: '172.30.0.41',
        nodePort: 30080,
        externalIPs: ['192.168.99.11'],
        loadBalancerIPs: ['1.2.3.4'],
        externalPolicyLocal: true,
        sessionAffinityTimeoutSeconds: 10800,
        endpoints: [ep('10.180.0.1', { isLocal: true }), ep('10.180.1.1')],
      }),
      svc('kube-system/dns:dns', { clusterIP: '172.30.0.10', port: 53, protocol: 'UDP', endpoints: [ep('10.180.2.1', { port: 53 })] }),
      svc('ns1/empty:http', { clusterIP: '172.30.0.42' }),
    ],
    { nodeIPs: ['192.168.0.2'] },
  ),
);

describe('D.5 renderIpvs', () => {
  const r = renderIpvs(state);
  const byKey = new Map(r.virtualServers.map((vs) => [`${vs.protocol}/${vs.address}:${vs.port}`, vs]));
  const cases = [
    { name: 'D.5.1 ClusterIP uses the internal (Cluster) endpoints', key: 'TCP/172.30.0.41:80', real: ['10.180.0.1:80', '10.180.1.1:80'] },
    { name: 'eTP=Local external IP uses only local endpoints', key: 'TCP/192.168.99.11:80', real: ['10.180.0.1:80'] },
    { name: 'eTP=Local LB IP uses only local endpoints', key: 'TCP/1.2.3.4:80', real: ['10.180.0.1:80'] },
    { name: 'NodePort on each node IP', key: 'TCP/192.168.0.2:30080', real: ['10.180.0.1:80'] },
    { name: 'UDP service', key: 'UDP/172.30.0.10:53', real: ['10.180.2.1:53'] },
    { name: 'a port without endpoints keeps an empty virtual server', key: 'TCP/172.30.0.42:80', real: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const vs = byKey.get(tc.key);
      expect(vs?.realServers.map((rs) => `${rs.address}:${rs.port}`)).toEqual(tc.real);
      expect(vs?.realServers.every((rs) => rs.weight === 1)).toBe(true);
    });
  }
  it('D.5.3 ClientIP affinity becomes persistence with the affinity timeout', () => {
    expect(byKey.get('TCP/172.30.0.41:80')?.persistenceTimeout).toBe(10800);
    expect(byKey.get('UDP/172.30.0.10:53')?.persistenceTimeout).toBeNull();
  });
  it('D.5.1 binds service IPs, not node IPs, to kube-ipvs0', () => {
    expect(r.boundAddresses).toEqual(['1.2.3.4', '172.30.0.10', '172.30.0.41', '172.30.0.42', '192.168.99.11']);
    expect(r.iproute[0]).toBe('ip addr add 1.2.3.4/32 dev kube-ipvs0');
  });
  it('D.5.2 scheduler defaults to rr and is passed through', () => {
    expect(r.virtualServers.every((vs) => vs.scheduler === 'rr')).toBe(true);
    expect(renderIpvs(state, { scheduler: 'sed', interface: 'dummy0' }).ipvsadmRestore).toContain('-A -t 172.30.0.41:80 -s sed -p 10800');
    expect(renderIpvs(state, { interface: 'dummy0' }).iproute[0]).toBe('ip addr add 1.2.3.4/32 dev dummy0');
  });
  it('prints ipvsadm-restore input', () => {
    expect(r.ipvsadmRestore.split('\n').filter((l) => l.includes('172.30.0.'))).toEqual([
      '-A -t 172.30.0.41:80 -s rr -p 10800',
      '-a -t 172.30.0.41:80 -r 10.180.0.1:80 -m -w 1',
      '-a -t 172.30.0.41:80 -r 10.180.1.1:80 -m -w 1',
      '-A -t 172.30.0.42:80 -s rr',
      '-A -u 172.30.0.10:53 -s rr',
      '-a -u 172.30.0.10:53 -r 10.180.2.1:53 -m -w 1',
    ]);
  });
  it('renders IPv6 with brackets and /128', () => {
    const v6 = renderIpvs(deepFreeze(dpState([svc('ns1/a:p', { clusterIP: 'fd00::41', endpoints: [ep('fd00:10::1')] })], { family: 'IPv6' })));
    expect(v6.ipvsadmRestore).toBe('-A -t [fd00::41]:80 -s rr\n-a -t [fd00::41]:80 -r [fd00:10::1]:80 -m -w 1\n');
    expect(v6.iproute).toEqual(['ip addr add fd00::41/128 dev kube-ipvs0']);
  });
  it('SCTP uses --sctp-service', () => {
    const s = renderIpvs(deepFreeze(dpState([svc('ns1/a:p', { protocol: 'SCTP', endpoints: [ep('10.1.1.1')] })])));
    expect(s.ipvsadmRestore).toContain('-A --sctp-service 172.30.0.41:80 -s rr');
  });
  it('an empty state renders nothing', () => {
    expect(renderIpvs(deepFreeze(dpState([])))).toEqual({ virtualServers: [], boundAddresses: [], ipvsadmRestore: '', iproute: [] });
  });
});

const vs = (address: string, protocol: IpvsVirtualServer['protocol'], reals: [string, number][], extra: Partial<IpvsVirtualServer> = {}): IpvsVirtualServer => ({
  address,
  port: 80,
  protocol,
  scheduler: 'rr',
  persistenceTimeout: null,
  realServers: reals.map(([address, weight]) => ({ address, port: 80, weight })),
  ...extra,
});
const st = (...servers: IpvsVirtualServer[]): Pick<IpvsRenderResult, 'virtualServers' | 'boundAddresses'> =>
  deepFreeze({ virtualServers: servers, boundAddresses: [...new Set(servers.map((s) => s.address))].sort() });
const show = (ops: readonly IpvsOperation[]): string[] => ops.map((o) => ipvsadmArgs(o) ?? `${o.op} ${'address' in o ? o.address : ''}`);

describe('D.5.5 diffIpvs graceful termination', () => {
  const cases = [
    {
      name: 'a removed TCP real server with connections is quiesced to weight 0',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1], ['10.1.0.2', 1]])),
      next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])),
      conns: 5,
      want: ['-e -t 10.0.0.1:80 -r 10.1.0.2:80 -m -w 0'],
    },
    {
      name: 'a quiesced TCP real server is deleted once it has no connections',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1], ['10.1.0.2', 0]])),
      next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])),
      conns: 0,
      want: ['-d -t 10.0.0.1:80 -r 10.1.0.2:80'],
    },
    {
      name: 'a quiesced TCP real server with connections is left alone',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1], ['10.1.0.2', 0]])),
      next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])),
      conns: 3,
      want: [],
    },
    {
      name: 'a removed TCP real server without connections is deleted at once',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.2', 1]])),
      next: st(vs('10.0.0.1', 'TCP', [])),
      conns: 0,
      want: ['-d -t 10.0.0.1:80 -r 10.1.0.2:80'],
    },
    {
      name: 'UDP real servers are deleted at once even with connections',
      prev: st(vs('10.0.0.1', 'UDP', [['10.1.0.1', 1], ['10.1.0.2', 1]])),
      next: st(vs('10.0.0.1', 'UDP', [['10.1.0.1', 1]])),
      conns: 9,
      want: ['-d -u 10.0.0.1:80 -r 10.1.0.2:80'],
    },
    {
      name: 'SCTP real servers are deleted at once too',
      prev: st(vs('10.0.0.1', 'SCTP', [['10.1.0.2', 1]])),
      next: st(vs('10.0.0.1', 'SCTP', [])),
      conns: 9,
      want: ['-d --sctp-service 10.0.0.1:80 -r 10.1.0.2:80'],
    },
    {
      name: 'an endpoint coming back while quiesced gets its weight back',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 0]])),
      next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])),
      conns: 2,
      want: ['-e -t 10.0.0.1:80 -r 10.1.0.1:80 -m -w 1'],
    },
    {
      name: 'new service: bind, add virtual server, then real servers',
      prev: st(),
      next: st(vs('10.0.0.2', 'TCP', [['10.1.0.1', 1]], { persistenceTimeout: 30 })),
      conns: 0,
      want: ['bindAddress 10.0.0.2', '-A -t 10.0.0.2:80 -s rr -p 30', '-a -t 10.0.0.2:80 -r 10.1.0.1:80 -m -w 1'],
    },
    {
      name: 'removed service: virtual server deleted at once, then unbound',
      prev: st(vs('10.0.0.2', 'TCP', [['10.1.0.1', 1]])),
      next: st(),
      conns: 7,
      want: ['-D -t 10.0.0.2:80', 'unbindAddress 10.0.0.2'],
    },
    {
      name: 'scheduler or persistence changes edit the virtual server in place',
      prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])),
      next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]], { scheduler: 'lc' })),
      conns: 0,
      want: ['-E -t 10.0.0.1:80 -s lc'],
    },
    { name: 'equal states need no operations', prev: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])), next: st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1]])), conns: 0, want: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => expect(show(diffIpvs(tc.prev, tc.next, { activeConnections: () => tc.conns }))).toEqual(tc.want));
  }

  it('without a connection counter a removed TCP server is assumed busy', () => {
    const ops = diffIpvs(st(vs('10.0.0.1', 'TCP', [['10.1.0.2', 1]])), st(vs('10.0.0.1', 'TCP', [])));
    expect(show(ops)).toEqual(['-e -t 10.0.0.1:80 -r 10.1.0.2:80 -m -w 0']);
  });
  it('terminatingGrace false deletes TCP servers at once', () => {
    const ops = diffIpvs(st(vs('10.0.0.1', 'TCP', [['10.1.0.2', 1]])), st(vs('10.0.0.1', 'TCP', [])), { terminatingGrace: false, activeConnections: () => 4 });
    expect(show(ops)).toEqual(['-d -t 10.0.0.1:80 -r 10.1.0.2:80']);
  });
  it('asks the counter about the right real server', () => {
    const asked: string[] = [];
    diffIpvs(st(vs('10.0.0.1', 'TCP', [['10.1.0.1', 1], ['10.1.0.2', 1]])), st(vs('10.0.0.1', 'TCP', [])), {
      activeConnections: (v, r) => {
        asked.push(`${v.address}->${r.address}`);
        return 0;
      },
    });
    expect(asked).toEqual(['10.0.0.1->10.1.0.1', '10.0.0.1->10.1.0.2']);
  });
  it('diffing two renders follows an endpoint removal', () => {
    const next = deepFreeze({ ...state, servicePorts: state.servicePorts.map((sp) => (sp.servicePortName === 'kube-system/dns:dns' ? { ...sp, clusterEndpoints: [] , hasAnyEndpoints: false } : sp)) });
    expect(show(diffIpvs(renderIpvs(state), renderIpvs(next), { activeConnections: () => 1 }))).toEqual(['-d -u 172.30.0.10:53 -r 10.180.2.1:53']);
  });
});
