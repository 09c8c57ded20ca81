import { ConfigError } from '@slicemesh/runtime';
import { describe, expect, it } from 'vitest';
import { ipFamiliesOf, parseProxyAgentConfig } from './config.ts';

describe('proxy-agent config', () => {
  it('D.8 defaults: iptables, min sync 1s, sync 30s, full sync 1h, unzoned, IPv4; D.4.15 own chain names and mark bit 13', () => {
    const c = parseProxyAgentConfig([], { NODE_NAME: 'n1' });
    expect(c).toMatchObject({
      nodeName: 'n1',
      nodeZone: '',
      backend: 'iptables',
      minSyncPeriod: 1000,
      syncPeriod: 30_000,
      fullSyncPeriod: 3_600_000,
      iptablesChains: 'own',
      masqueradeBit: 13,
      masqueradeAll: false,
      ipFamily: 'IPv4',
      nodeIPs: [],
      ipvsScheduler: 'rr',
      svcBucket: 'svc',
      viewsBucket: 'views',
    });
    expect(c.netns).toBeUndefined();
    expect(c.podCIDR).toBeUndefined();
  });

  it('reads every setting from the environment, canonicalising addresses and masking the CIDR', () => {
    const c = parseProxyAgentConfig([], {
      NODE_NAME: 'n1',
      NODE_ZONE: 'zone-a',
      BACKEND: 'nftables',
      NETNS: 'node-a',
      MIN_SYNC_PERIOD: '200ms',
      NODE_IPS: '192.168.50.11, 192.168.050.12',
      POD_CIDR: '10.244.3.7/16',
      IPVS_SCHEDULER: 'sh',
    });
    expect([c.nodeZone, c.backend, c.netns, c.minSyncPeriod, c.nodeIPs, c.podCIDR, c.ipvsScheduler]).toEqual(['zone-a', 'nftables', 'node-a', 200, ['192.168.50.11', '192.168.50.12'], '10.244.0.0/16', 'sh']);
  });

  const marks = [
    { name: 'D.4.15 own chain names: mark bit 13 (0x2000), clear of kube-proxy\'s 0x4000 and 0x8000', env: {}, want: ['own', 13] },
    { name: 'D.8 kube-proxy chain names: kube-proxy\'s mark bit 14 (0x4000)', env: { IPTABLES_CHAINS: 'kube-proxy' }, want: ['kube-proxy', 14] },
    { name: 'an explicit MASQUERADE_BIT wins in own mode', env: { MASQUERADE_BIT: '20' }, want: ['own', 20] },
    { name: 'an explicit MASQUERADE_BIT wins in kube-proxy mode', env: { IPTABLES_CHAINS: 'kube-proxy', MASQUERADE_BIT: '0' }, want: ['kube-proxy', 0] },
  ];
  for (const tc of marks) {
    it(tc.name, () => {
      const c = parseProxyAgentConfig([], { NODE_NAME: 'n1', ...tc.env });
      expect([c.iptablesChains, c.masqueradeBit]).toEqual(tc.want);
    });
  }
  it('BACKEND=userspace is accepted (issue 13)', () => {
    expect(parseProxyAgentConfig(['--backend', 'userspace'], { NODE_NAME: 'n1' }).backend).toBe('userspace');
  });
  it('DUAL_STACK (issue 13, part 4): off by default (one family, IP_FAMILY); on, both families, IP_FAMILY first, node IPs of both families accepted', () => {
    const single = parseProxyAgentConfig([], { NODE_NAME: 'n1' });
    expect(single.dualStack).toBe(false);
    expect(ipFamiliesOf(single)).toEqual(['IPv4']);
    expect(ipFamiliesOf(parseProxyAgentConfig([], { NODE_NAME: 'n1', IP_FAMILY: 'IPv6' }))).toEqual(['IPv6']);
    const dual = parseProxyAgentConfig(['--dual-stack'], { NODE_NAME: 'n1', IP_FAMILY: 'IPv6', NODE_IPS: '192.168.0.10,fd00::10', POD_CIDR: '10.244.0.0/16', BACKEND: 'nftables' });
    expect(ipFamiliesOf(dual)).toEqual(['IPv6', 'IPv4']);
    expect(dual.nodeIPs).toEqual(['192.168.0.10', 'fd00::10']);
    expect(parseProxyAgentConfig(['--dual-stack'], { NODE_NAME: 'n1', BACKEND: 'ipvs' }).backend).toBe('ipvs');
  });

  it('the flag sets the chain mode too', () => {
    expect(parseProxyAgentConfig(['--iptables-chains', 'kube-proxy'], { NODE_NAME: 'n1' }).iptablesChains).toBe('kube-proxy');
  });

  const bad: { name: string; argv?: string[]; env: Record<string, string>; setting: string }[] = [
    { name: 'NODE_NAME is required', env: {}, setting: '--node-name' },
    { name: 'an unknown backend is refused', env: { NODE_NAME: 'n', BACKEND: 'kernelspace' }, setting: 'env BACKEND' },
    { name: 'chain names other than own|kube-proxy are refused', env: { NODE_NAME: 'n', IPTABLES_CHAINS: 'KUBE' }, setting: 'env IPTABLES_CHAINS' },
    { name: 'a mark bit above 31 is refused', env: { NODE_NAME: 'n', MASQUERADE_BIT: '32' }, setting: 'env MASQUERADE_BIT' },
    { name: 'a scheduler outside rr|lc|dh|sh|sed|nq is refused', env: { NODE_NAME: 'n', IPVS_SCHEDULER: 'wrr' }, setting: 'env IPVS_SCHEDULER' },
    { name: 'node IPs must be addresses', env: { NODE_NAME: 'n', NODE_IPS: '10.0.0.1,nope' }, setting: 'env NODE_IPS' },
    { name: 'node IPs must be of the agent family', env: { NODE_NAME: 'n', NODE_IPS: 'fd00::1' }, setting: '--node-ips' },
    { name: 'the pod CIDR must be of the agent family', env: { NODE_NAME: 'n', IP_FAMILY: 'IPv6', POD_CIDR: '10.0.0.0/8' }, setting: '--pod-cidr' },
    { name: 'DUAL_STACK needs the iptables, nftables or ipvs backend', env: { NODE_NAME: 'n', DUAL_STACK: 'true', BACKEND: 'userspace' }, setting: '--dual-stack' },
    { name: 'the minimum sync period cannot exceed the sync period', argv: ['--min-sync-period', '1m'], env: { NODE_NAME: 'n' }, setting: '--min-sync-period' },
  ];
  for (const tc of bad) {
    it(tc.name, () => {
      const e = (() => {
        try {
          parseProxyAgentConfig(tc.argv ?? [], tc.env);
          return null;
        } catch (err) {
          return err;
        }
      })();
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).setting).toBe(tc.setting);
    });
  }
});
