import type { KubeObject } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../cli-error.ts';
import { dpState, nodeIPOf } from './dp-state.ts';
import type { ProxyPlanOptions } from './proxy-plan.ts';
import { proxyPlanCommand, proxyPlanOptions } from './proxy-plan.ts';

const objects: KubeObject[] = deepFreeze([
  makeService('web', { clusterIP: '10.96.0.10', ipFamilies: ['IPv4', 'IPv6'], spec: { clusterIPs: ['10.96.0.10', 'fd00::a'] } }),
  makeNode('node-1', { zone: 'zone-a', internalIP: '192.168.0.1' }),
  makeSlice('web-v4', [
    { addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'node-1' },
    { addresses: ['10.0.0.2'], conditions: { ready: true }, nodeName: 'node-2' },
  ]),
  makeSlice('web-v6', [{ addresses: ['fd00::1'], conditions: { ready: true }, nodeName: 'node-1' }], { addressType: 'IPv6' }),
]);

const run = (opts: Partial<ProxyPlanOptions>, input: readonly KubeObject[] = objects): { out: ReturnType<typeof proxyPlanCommand>; warnings: string[] } => {
  const warnings: string[] = [];
  const out = proxyPlanCommand(input, { node: 'node-1', format: 'json', family: undefined, ...opts }, (w) => warnings.push(w));
  return { out, warnings };
};
const text = (o: ReturnType<typeof proxyPlanCommand>): string => ('text' in o ? o.text : '');

describe('proxyPlanCommand', () => {
  const cases: { name: string; opts: Partial<ProxyPlanOptions>; check: (o: ReturnType<typeof proxyPlanCommand>) => void }[] = [
    {
      name: 'json: one entry per service port and family, IPv4 first',
      opts: {},
      check: (o) => expect('json' in o && (o.json as { servicePort: string; clusterEndpoints: string[] }[]).map((e) => e.clusterEndpoints)).toEqual([['10.0.0.1:8080', '10.0.0.2:8080'], ['[fd00::1]:8080']]),
    },
    { name: 'json with --ip-family IPv6 only', opts: { family: 'IPv6' }, check: (o) => expect('json' in o && (o.json as unknown[]).length).toBe(1) },
    { name: 'iptables: one IPv4 restore script with the jumps from the built-in chains', opts: { format: 'iptables' }, check: (o) => expect(text(o)).toMatch(/^\*filter\n[\s\S]*-I OUTPUT 1 [\s\S]*COMMIT\n\*nat\n[\s\S]*10\.0\.0\.2:8080[\s\S]*COMMIT\n$/) },
    { name: 'iptables --ip-family IPv6 renders the IPv6 endpoints', opts: { format: 'iptables', family: 'IPv6' }, check: (o) => expect(text(o)).toContain('[fd00::1]:8080') },
    { name: 'D.4.15 iptables: our own chain names by default', opts: { format: 'iptables' }, check: (o) => expect(text(o).match(/^:(\S+)-SVC-/m)?.[1]).toBe('SLICEMESH') },
    { name: 'D.4.15 iptables with kube-proxy chain names', opts: { format: 'iptables', iptablesChains: 'kube-proxy' }, check: (o) => expect([text(o).match(/^:(\S+)-SVC-/m)?.[1], text(o).includes('--or-mark 0x4000')]).toEqual(['KUBE', true]) },
    { name: 'nftables: both family tables in one script', opts: { format: 'nftables' }, check: (o) => expect([/^add table ip \S+$/m.test(text(o)), /^add table ip6 \S+$/m.test(text(o))]).toEqual([true, true]) },
    { name: 'ipvs: ipvsadm-restore lines for both families', opts: { format: 'ipvs' }, check: (o) => expect(text(o).split('\n').filter((l) => l.startsWith('-A -'))).toEqual(['-A -t 10.96.0.10:80 -s rr', '-A -t [fd00::a]:80 -s rr']) },
    {
      name: 'D.5.4 ipvs: the whole node plan in apply order: sets, rules, interface with addresses, virtual servers',
      opts: { format: 'ipvs', family: 'IPv4' },
      check: (o) =>
        expect(text(o).split('\n').filter((l) => l.startsWith('#') || l.startsWith('ip ') || l.startsWith('sysctl ') || l.startsWith('add SLICEMESH-CLUSTER-IP'))).toEqual([
          '# IPVS mode: kernel settings',
          'sysctl -w net.ipv4.vs.conntrack=1',
          'sysctl -w net.ipv4.vs.expire_nodest_conn=1',
          'sysctl -w net.ipv4.vs.expire_quiescent_template=1',
          'sysctl -w net.ipv4.ip_forward=1',
          '# IPVS mode: dummy interface kube-ipvs0',
          'ip link add kube-ipvs0 type dummy',
          '# IPv4: ipset restore -exist',
          'add SLICEMESH-CLUSTER-IP 10.96.0.10,tcp:80',
          '# IPv4: iptables-restore --noflush',
          '# IPv4: service addresses on kube-ipvs0',
          'ip addr add 10.96.0.10/32 dev kube-ipvs0',
          '# IPv4: ipvsadm-restore',
        ]),
    },
    { name: 'ipvs: kube-proxy set and chain names, another interface', opts: { format: 'ipvs', family: 'IPv6', iptablesChains: 'kube-proxy', ipvsInterface: 'sm-ipvs0' }, check: (o) => expect([text(o).includes('add KUBE-6-CLUSTER-IP fd00::a,tcp:80'), text(o).includes('-A KUBE-SERVICES '), text(o).includes('ip addr add fd00::a/128 dev sm-ipvs0'), /SLICEMESH/.test(text(o))]).toEqual([true, true, true, false]) },
    { name: 'ipvs: the same input gives the same text', opts: { format: 'ipvs' }, check: (o) => expect(text(o)).toBe(text(run({ format: 'ipvs' }).out)) },
  ];
  for (const tc of cases) it(tc.name, () => tc.check(run(tc.opts).out));

  it('warns (once) when the node is not in the input and treats it as unlabelled', () => {
    const { out, warnings } = run({ node: 'node-9' });
    expect(warnings).toEqual(['Node node-9 is not in the input; assuming a node without labels']);
    expect('json' in out && (out.json as unknown[]).length).toBe(2);
  });

  it('no services: an empty json plan', () => {
    expect(run({}, [objects[1] as KubeObject]).out).toEqual({ json: [] });
  });
});

describe('dpState', () => {
  it('fills node settings with kube-proxy defaults, our mark bit (D.4.15) and the node IP of the family', () => {
    const s = dpState({ services: [], slices: [], nodes: [objects[1] as never], nodeName: 'node-1' }, 'IPv4');
    expect(s).toEqual({ family: 'IPv4', nodeIPs: [], primaryNodeIP: '192.168.0.1', podCIDR: null, masqueradeAll: false, masqueradeBit: 13, servicePorts: [] });
  });
  it('with kube-proxy chain names, kube-proxy\'s mark bit 14', () => {
    expect(dpState({ services: [], slices: [], nodes: [], nodeName: 'node-1' }, 'IPv4', 'kube-proxy').masqueradeBit).toBe(14);
  });
  it('nodeIPOf returns null without an InternalIP of the family', () => {
    expect(nodeIPOf(objects[1] as never, 'IPv6')).toBeNull();
  });
});

describe('proxyPlanOptions', () => {
  const bad: { name: string; flags: Record<string, string>; message: RegExp }[] = [
    { name: '--node is required', flags: {}, message: /needs --node NAME/ },
    { name: '--node must be a node name', flags: { node: 'node 1' }, message: /DNS-1123 subdomain/ },
    { name: '--format is one of four', flags: { node: 'n', format: 'ebpf' }, message: /json, iptables, nftables, ipvs/ },
    { name: '--ip-family is IPv4 or IPv6', flags: { node: 'n', 'ip-family': 'ipv4' }, message: /IPv4 or IPv6/ },
  ];
  for (const tc of bad) {
    it(tc.name, () => {
      expect(() => proxyPlanOptions(tc.flags)).toThrow(UsageError);
      expect(() => proxyPlanOptions(tc.flags)).toThrow(tc.message);
    });
  }
  it('defaults to json for both families and our own iptables chains', () => expect(proxyPlanOptions({ node: 'n1' })).toEqual({ node: 'n1', format: 'json', family: undefined, iptablesChains: 'own' }));
  it('takes --iptables-chains kube-proxy', () => expect(proxyPlanOptions({ node: 'n1', 'iptables-chains': 'kube-proxy' }).iptablesChains).toBe('kube-proxy'));
  it('takes --ipvs-interface and refuses a name the kernel would not', () => {
    expect(proxyPlanOptions({ node: 'n1', 'ipvs-interface': 'sm-ipvs0' }).ipvsInterface).toBe('sm-ipvs0');
    expect(() => proxyPlanOptions({ node: 'n1', 'ipvs-interface': 'a b' })).toThrow(/--ipvs-interface/);
  });
});
