import { KUBE_PROXY_CHAINS, OWN_CHAINS } from '@slicemesh/dataplane';
import { dpEndpoint as ep, dpServicePort as svc, dpState } from '@slicemesh/dataplane/testing';
import { IpsetRestorer, IptablesRestorer, IpvsClient, SysctlWriter } from '@slicemesh/netfilter';
import { FakeIpLink, FakeIpset, FakeIptables, FakeIpvs, FakeSysctl, RecordingExec } from '@slicemesh/netfilter/testing';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { DryRunBackend } from './dry-run-backend.ts';
import { IpvsBackend } from './ipvs-backend.ts';

const state = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', { clusterIP: '10.96.0.10', nodePort: 30080, endpoints: [ep('10.244.1.2')] }),
      svc('ns1/empty:http', { clusterIP: '10.96.0.20' }),
    ],
    { nodeIPs: ['192.168.0.2'], podCIDR: '10.244.0.0/16' },
  ),
);

function harness(chains = OWN_CHAINS) {
  const ipset = new FakeIpset();
  const ipt = new FakeIptables();
  const ipvs = new FakeIpvs();
  const link = new FakeIpLink();
  const sysctl = new FakeSysctl({ 'net.ipv4.vs.conntrack': '0', 'net.ipv4.vs.expire_nodest_conn': '0', 'net.ipv4.vs.expire_quiescent_template': '0', 'net.ipv4.ip_forward': '0' });
  const rec = new RecordingExec([ipset, ipt, ipvs, link, sysctl]);
  const backend = new IpvsBackend({
    client: new IpvsClient({ exec: rec.exec }),
    scheduler: 'rr',
    sysctl: new SysctlWriter({ exec: rec.exec }),
    companion: { ipset: new IpsetRestorer({ exec: rec.exec }), iptables: new IptablesRestorer({ exec: rec.exec }), chains },
  });
  return { ipset, ipt, ipvs, link, sysctl, rec, backend };
}

describe('D.5.4 IpvsBackend with the companion rules (fake kernel)', () => {
  it('applies sets, then rules (and jumps), then the interface addresses and IPVS, in that order', async () => {
    const h = harness();
    const r = await h.backend.sync({ state, changedServices: null });
    expect(r.detail).toMatchObject({ ipset_members: expect.any(Number) });
    const tools = h.rec.calls.map((c) => c.command).filter((c, i, all) => c !== all[i - 1]);
    expect(tools.indexOf('ipset')).toBeLessThan(tools.indexOf('iptables-restore'));
    expect(tools.indexOf('iptables-restore')).toBeLessThan(tools.indexOf('ipvsadm'));
    expect([h.ipset.members('SLICEMESH-CLUSTER-IP'), h.ipset.members('SLICEMESH-NODE-PORT-TCP'), h.ipset.members('SLICEMESH-NO-ENDPOINTS')]).toEqual([
      ['10.96.0.10,tcp:80', '10.96.0.20,tcp:80'],
      ['30080'],
      ['10.96.0.20,tcp:80'],
    ]);
    expect(h.ipt.rules('nat', 'SLICEMESH-SERVICES').some((l) => l.includes('--match-set SLICEMESH-CLUSTER-IP dst,dst'))).toBe(true);
    expect(h.ipt.rules('nat', 'PREROUTING').filter((l) => l.includes('SLICEMESH-SERVICES'))).toHaveLength(1);
    expect(h.ipt.rules('filter', 'INPUT').filter((l) => l.includes('SLICEMESH-IPVS-FILTER'))).toHaveLength(1);
    expect(h.link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', '10.96.0.20/32']);
    expect(Object.fromEntries(h.sysctl.values)).toEqual({ 'net.ipv4.vs.conntrack': '1', 'net.ipv4.vs.expire_nodest_conn': '1', 'net.ipv4.vs.expire_quiescent_template': '1', 'net.ipv4.ip_forward': '1' });
  });

  it('a second sync keeps one copy of every rule and jump, and the sets follow the state', async () => {
    const h = harness();
    await h.backend.sync({ state, changedServices: null });
    const once = h.ipt.rules('nat', 'SLICEMESH-SERVICES');
    await h.backend.sync({ state: { ...state, servicePorts: state.servicePorts.slice(0, 1) }, changedServices: null });
    expect(h.ipt.rules('nat', 'SLICEMESH-SERVICES')).toEqual(once);
    expect(h.ipt.rules('nat', 'PREROUTING').filter((l) => l.includes('SLICEMESH-SERVICES'))).toHaveLength(1);
    expect(h.ipt.rules('filter', 'INPUT').filter((l) => l.includes('SLICEMESH-IPVS-FILTER'))).toHaveLength(1);
    expect([h.ipset.members('SLICEMESH-CLUSTER-IP'), h.ipset.members('SLICEMESH-NO-ENDPOINTS')]).toEqual([['10.96.0.10,tcp:80'], []]);
  });

  it("kube-proxy's set and chain names under IPTABLES_CHAINS=kube-proxy", async () => {
    const h = harness(KUBE_PROXY_CHAINS);
    await h.backend.sync({ state, changedServices: null });
    expect([h.ipset.members('KUBE-CLUSTER-IP')?.length, h.ipt.userChains('nat').includes('KUBE-LOAD-BALANCER'), h.ipset.members('SLICEMESH-CLUSTER-IP')]).toEqual([2, true, undefined]);
  });

  it('D.5.1 without NODE_IPS, NodePorts go on the addresses of the node\'s interfaces (not loopback, not the dummy)', async () => {
    const h = harness();
    h.link.addHostAddress('lo', '127.0.0.1/8');
    h.link.addHostAddress('eth0', '192.168.0.7/24');
    const r = await h.backend.sync({ state: { ...state, nodeIPs: [] }, changedServices: null });
    expect(r.counts).toMatchObject({ virtual_servers: 3 });
    expect(h.ipvs.dump().filter((l) => l.includes(':30080'))).toEqual([expect.stringContaining('192.168.0.7:30080')]);
  });
});

const stateV6 = deepFreeze(
  dpState(
    [
      svc('ns1/web:http', { clusterIP: 'fd00:96::10', nodePort: 30080, endpoints: [ep('fd00:244:1::2')] }),
      svc('ns1/v6only:http', { clusterIP: 'fd00:96::30', endpoints: [ep('fd00:244:1::3')] }),
    ],
    { family: 'IPv6', nodeIPs: ['fd00::2'], podCIDR: 'fd00:244::/48' },
  ),
);

/** Two backends, one per family, on one fake kernel: one IPVS table, one dummy interface, one ipset namespace, iptables and ip6tables. */
function dualHarness() {
  const ipset = new FakeIpset();
  const ipt = new FakeIptables();
  const ip6t = new FakeIptables({ family: 'IPv6' });
  const ipvs = new FakeIpvs();
  const link = new FakeIpLink();
  const sysctl = new FakeSysctl({ 'net.ipv4.vs.conntrack': '0', 'net.ipv4.vs.expire_nodest_conn': '0', 'net.ipv4.vs.expire_quiescent_template': '0', 'net.ipv4.ip_forward': '0', 'net.ipv6.conf.all.forwarding': '0' });
  const rec = new RecordingExec([ipset, ipt, ip6t, ipvs, link, sysctl]);
  const backend = (family: 'IPv4' | 'IPv6') =>
    new IpvsBackend({
      client: new IpvsClient({ exec: rec.exec }),
      scheduler: 'rr',
      sysctl: new SysctlWriter({ exec: rec.exec }),
      companion: { ipset: new IpsetRestorer({ exec: rec.exec }), iptables: new IptablesRestorer({ exec: rec.exec, family }), chains: OWN_CHAINS },
    });
  return { ipset, ipt, ip6t, ipvs, link, sysctl, rec, v4: backend('IPv4'), v6: backend('IPv6') };
}

const services = (dump: readonly string[]) => dump.filter((l) => !l.startsWith(' '));

describe('D.11 IpvsBackend dual stack: one backend per family on one kernel (fake)', () => {
  it('repeated full syncs of both families keep both families\' virtual servers, addresses, sets and rules', async () => {
    const h = dualHarness();
    for (let round = 0; round < 3; round++) {
      const r4 = await h.v4.sync({ state, changedServices: null });
      const r6 = await h.v6.sync({ state: stateV6, changedServices: null });
      if (round > 0) expect([r4.detail, r6.detail]).toMatchObject([{ operations: 0 }, { operations: 0 }]);
    }
    expect(services(h.ipvs.dump())).toEqual([
      'TCP/10.96.0.10:80 rr',
      'TCP/10.96.0.20:80 rr',
      'TCP/192.168.0.2:30080 rr',
      'TCP/[fd00:96::10]:80 rr',
      'TCP/[fd00:96::30]:80 rr',
      'TCP/[fd00::2]:30080 rr',
    ]);
    expect(h.link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', '10.96.0.20/32', 'fd00:96::10/128', 'fd00:96::30/128']);
    expect([h.ipset.members('SLICEMESH-CLUSTER-IP'), h.ipset.members('SLICEMESH-6-CLUSTER-IP')]).toEqual([
      ['10.96.0.10,tcp:80', '10.96.0.20,tcp:80'],
      ['fd00:96::10,tcp:80', 'fd00:96::30,tcp:80'],
    ]);
    expect(h.ip6t.rules('nat', 'SLICEMESH-SERVICES').some((l) => l.includes('--match-set SLICEMESH-6-CLUSTER-IP dst,dst'))).toBe(true);
    expect(h.ipt.rules('nat', 'SLICEMESH-SERVICES').some((l) => l.includes('SLICEMESH-6-'))).toBe(false);
    expect(h.ip6t.rules('nat', 'PREROUTING').filter((l) => l.includes('SLICEMESH-SERVICES'))).toHaveLength(1);
    expect(h.sysctl.values.get('net.ipv6.conf.all.forwarding')).toBe('1');
  });

  it('removing an IPv6 service takes only its virtual server and address; removing an IPv4 one leaves IPv6 alone', async () => {
    const h = dualHarness();
    await h.v4.sync({ state, changedServices: null });
    await h.v6.sync({ state: stateV6, changedServices: null });
    await h.v6.sync({ state: { ...stateV6, servicePorts: stateV6.servicePorts.slice(0, 1) }, changedServices: null });
    await h.v4.sync({ state, changedServices: null });
    expect(services(h.ipvs.dump())).toEqual(['TCP/10.96.0.10:80 rr', 'TCP/10.96.0.20:80 rr', 'TCP/192.168.0.2:30080 rr', 'TCP/[fd00:96::10]:80 rr', 'TCP/[fd00::2]:30080 rr']);
    expect(h.link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', '10.96.0.20/32', 'fd00:96::10/128']);
    await h.v4.sync({ state: { ...state, servicePorts: state.servicePorts.slice(0, 1) }, changedServices: null });
    expect(services(h.ipvs.dump())).toEqual(['TCP/10.96.0.10:80 rr', 'TCP/192.168.0.2:30080 rr', 'TCP/[fd00:96::10]:80 rr', 'TCP/[fd00::2]:30080 rr']);
    expect(h.link.addresses('kube-ipvs0')).toEqual(['10.96.0.10/32', 'fd00:96::10/128']);
    expect(h.ipvs.dump()).toContain('  -> [fd00:244:1::2]:80 weight 1');
  });
});

describe('D.5.4 dry-run with format ipvs', () => {
  it('writes the whole node plan, as proxy-plan --format ipvs prints it', async () => {
    const files = new Map<string, string>();
    const backend = new DryRunBackend({ file: 'plan.txt', format: 'ipvs', scheduler: 'rr', ipvsInterface: 'sm-ipvs0', writeFile: async (p, t) => void files.set(p, t) });
    await backend.sync({ state, changedServices: null });
    const text = files.get('plan.txt') ?? '';
    expect(text.split('\n').filter((l) => l.startsWith('# '))).toEqual([
      '# IPVS mode: kernel settings',
      '# IPVS mode: dummy interface sm-ipvs0',
      '# IPv4: ipset restore -exist',
      '# IPv4: iptables-restore --noflush',
      '# IPv4: service addresses on sm-ipvs0',
      '# IPv4: ipvsadm-restore',
    ]);
    expect(text).toContain('add SLICEMESH-CLUSTER-IP 10.96.0.10,tcp:80\n');
    expect(text).toContain('-A -t 10.96.0.10:80 -s rr\n');
  });
});
