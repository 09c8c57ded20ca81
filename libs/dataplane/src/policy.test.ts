import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DpServicePort } from './model.ts';
import { isServicePortChanged, joinHostPort, masqueradeMark, splitPortName, upstreamPortName } from './model.ts';
import { cascadeProbability, cidrContains, portPolicy } from './policy.ts';
import { dpEndpoint as ep, dpServicePort as svc } from './testing/builders.ts';

const local = ep('10.1.0.1', { isLocal: true });
const remote = ep('10.2.0.1');

describe('portPolicy (D.4.7, D.4.8)', () => {
  const cases: { name: string; sp: DpServicePort; want: Partial<ReturnType<typeof portPolicy>> }[] = [
    {
      name: 'no endpoints anywhere: REJECT both ways, no chains',
      sp: svc('ns/a:p', { nodePort: 30000 }),
      want: { hasEndpoints: false, internalVerdict: 'REJECT', externalVerdict: 'REJECT', usesClusterChain: false, usesExternalChain: false },
    },
    {
      name: 'Cluster policies with endpoints: no verdicts',
      sp: svc('ns/a:p', { nodePort: 30000, endpoints: [remote] }),
      want: { internalVerdict: null, externalVerdict: null, usesClusterChain: true, usesLocalChain: false, usesExternalChain: true },
    },
    {
      name: 'iTP=Local without local endpoints: internal DROP',
      sp: svc('ns/a:p', { internalPolicyLocal: true, endpoints: [remote] }),
      want: { internalVerdict: 'DROP', externalVerdict: null, usesClusterChain: false, usesLocalChain: false, internalToLocal: true },
    },
    {
      name: 'eTP=Local without local endpoints: external DROP but the external chain stays for the short-circuit',
      sp: svc('ns/a:p', { nodePort: 30000, externalPolicyLocal: true, endpoints: [remote] }),
      want: { internalVerdict: null, externalVerdict: 'DROP', usesExternalChain: true, usesClusterChain: true, usesLocalChain: false },
    },
    {
      name: 'eTP=Local with local endpoints uses both chains',
      sp: svc('ns/a:p', { nodePort: 30000, externalPolicyLocal: true, endpoints: [remote, local] }),
      want: { externalVerdict: null, usesClusterChain: true, usesLocalChain: true, externalToLocal: true },
    },
    {
      name: 'a firewall chain needs LB IPs, source ranges and endpoints',
      sp: svc('ns/a:p', { loadBalancerIPs: ['1.2.3.4'], loadBalancerSourceRanges: ['10.0.0.0/8'], endpoints: [remote] }),
      want: { usesFirewallChain: true, externallyAccessible: true },
    },
    {
      name: 'source ranges without LB IPs add no firewall',
      sp: svc('ns/a:p', { loadBalancerSourceRanges: ['10.0.0.0/8'], endpoints: [remote] }),
      want: { usesFirewallChain: false, externallyAccessible: false },
    },
    {
      name: 'all-terminating (serving) endpoints still count as endpoints',
      sp: svc('ns/a:p', { endpoints: [ep('10.3.0.1', { ready: false, serving: true, terminating: true })] }),
      want: { hasEndpoints: true, internalVerdict: null, usesClusterChain: true },
    },
  ];
  for (const tc of cases) it(tc.name, () => expect(portPolicy(deepFreeze(tc.sp))).toMatchObject(tc.want));

  it('reachable endpoints are the union of both lists without duplicates', () => {
    const p = portPolicy(deepFreeze(svc('ns/a:p', { nodePort: 30000, externalPolicyLocal: true, endpoints: [remote, local] })));
    expect(p.reachable.map((e) => e.ip)).toEqual(['10.2.0.1', '10.1.0.1']);
  });
});

describe('helpers', () => {
  it('D.4.3 cascade probabilities print 10 decimals', () => {
    expect([0, 1, 2].map((i) => cascadeProbability(i, 3))).toEqual(['0.3333333333', '0.5000000000', '1.0000000000']);
  });
  const cidrs = [
    { cidr: '10.0.0.0/8', ip: '10.200.1.1', want: true },
    { cidr: '10.0.0.0/8', ip: '11.0.0.1', want: false },
    { cidr: '203.0.113.0/25', ip: '203.0.113.127', want: true },
    { cidr: '203.0.113.0/25', ip: '203.0.113.128', want: false },
    { cidr: '10.1.2.3', ip: '10.1.2.3', want: true },
    { cidr: '0.0.0.0/0', ip: '1.2.3.4', want: true },
    { cidr: 'fd00:10::/32', ip: 'fd00:10:ffff::1', want: true },
    { cidr: 'fd00:10::/32', ip: 'fd00:11::1', want: false },
    { cidr: '10.0.0.0/8', ip: 'fd00::1', want: false },
  ];
  for (const tc of cidrs) it(`cidrContains(${tc.cidr}, ${tc.ip}) is ${tc.want}`, () => expect(cidrContains(tc.cidr, tc.ip)).toBe(tc.want));

  it('splits and normalises service port names', () => {
    expect(splitPortName('ns/web:http')).toEqual({ namespace: 'ns', name: 'web', port: 'http' });
    expect(splitPortName('ns/web:')).toEqual({ namespace: 'ns', name: 'web', port: '' });
    expect(splitPortName('ns/web')).toEqual({ namespace: 'ns', name: 'web', port: '' });
    expect(upstreamPortName('ns/web:')).toBe('ns/web');
    expect(upstreamPortName('ns/web:http')).toBe('ns/web:http');
  });
  it('formats host:port and the mark', () => {
    expect(joinHostPort('fd00::1', 80)).toBe('[fd00::1]:80');
    expect(joinHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
    expect(masqueradeMark(14)).toBe('0x4000');
    expect(masqueradeMark(0)).toBe('0x1');
  });
  it('a changed set may name the port key, the port name or the whole service', () => {
    const sp = deepFreeze(svc('ns/web:http'));
    for (const key of ['ns/web:http/TCP', 'ns/web:http', 'ns/web']) expect(isServicePortChanged(sp, new Set([key]))).toBe(true);
    for (const key of ['ns/web:http/UDP', 'ns/web2', 'ns/we']) expect(isServicePortChanged(sp, new Set([key]))).toBe(false);
  });
});
