import { describe, expect, it } from 'vitest';
import type { EndpointConditions, Pod } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import { endpointFromPod, podAddressesByFamily, shouldPodBeInEndpoints, shouldSetHostname } from './endpoint-from-pod.ts';

const svc = deepFreeze(makeService('web'));
const svcPNR = deepFreeze(makeService('web', { publishNotReadyAddresses: true }));
const node = deepFreeze(makeNode('node-1', { zone: 'zone-a' }));

describe('shouldPodBeInEndpoints', () => {
  const cases: { name: string; pod: Pod; want: boolean }[] = [
    { name: 'A.3.1 a running pod with an IP is included', pod: makePod('p'), want: true },
    { name: 'A.3.1 Succeeded pods are excluded', pod: makePod('p', { phase: 'Succeeded' }), want: false },
    { name: 'A.3.1 Failed pods are excluded', pod: makePod('p', { phase: 'Failed' }), want: false },
    { name: 'A.3.1 terminal pods are excluded even with publishNotReadyAddresses (no service input at all)', pod: makePod('p', { phase: 'Failed', ready: true }), want: false },
    { name: 'A.3.2 pods without podIP and podIPs are excluded', pod: makePod('p', { ips: [] }), want: false },
    { name: 'A.3.3 terminating pods stay', pod: makePod('p', { terminating: true }), want: true },
    { name: 'A.3.1 Pending pods with an IP are included', pod: makePod('p', { phase: 'Pending' }), want: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(shouldPodBeInEndpoints(deepFreeze(tc.pod))).toBe(tc.want);
    });
  }
});

describe('A.4.3 conditions truth table', () => {
  const cases: { name: string; pod: Pod; pnr: boolean; want: EndpointConditions }[] = [
    { name: 'ready pod -> ready T, serving T, terminating F', pod: makePod('p'), pnr: false, want: { ready: true, serving: true, terminating: false } },
    { name: 'unready pod -> F, F, F', pod: makePod('p', { ready: false }), pnr: false, want: { ready: false, serving: false, terminating: false } },
    { name: 'ready + terminating -> F, T, T', pod: makePod('p', { terminating: true }), pnr: false, want: { ready: false, serving: true, terminating: true } },
    { name: 'unready + terminating -> F, F, T', pod: makePod('p', { ready: false, terminating: true }), pnr: false, want: { ready: false, serving: false, terminating: true } },
    { name: 'publishNotReadyAddresses: ready pod -> T, T, F', pod: makePod('p'), pnr: true, want: { ready: true, serving: true, terminating: false } },
    { name: 'publishNotReadyAddresses: unready pod -> T, F, F', pod: makePod('p', { ready: false }), pnr: true, want: { ready: true, serving: false, terminating: false } },
    { name: 'publishNotReadyAddresses: ready + terminating -> T, T, T', pod: makePod('p', { terminating: true }), pnr: true, want: { ready: true, serving: true, terminating: true } },
    { name: 'publishNotReadyAddresses: unready + terminating -> T, F, T', pod: makePod('p', { ready: false, terminating: true }), pnr: true, want: { ready: true, serving: false, terminating: true } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(endpointFromPod(deepFreeze(tc.pod), node, tc.pnr ? svcPNR : svc, 'IPv4').conditions).toEqual(tc.want);
    });
  }
  it('A.4.1 a pod without a Ready condition is not serving', () => {
    const pod = deepFreeze({ ...makePod('p'), status: { phase: 'Running' as const, podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }] } });
    expect(endpointFromPod(pod, node, svc, 'IPv4').conditions).toEqual({ ready: false, serving: false, terminating: false });
  });
});

describe('endpoint fields', () => {
  it('A.4.4-A.4.6 targetRef (no resourceVersion), nodeName and zone', () => {
    const pod = deepFreeze(makePod('p', { uid: 'u-1', nodeName: 'node-1' }));
    expect(endpointFromPod(pod, node, svc, 'IPv4')).toEqual({
      addresses: ['10.0.0.1'],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u-1' },
      nodeName: 'node-1',
      zone: 'zone-a',
    });
  });
  const optional: { name: string; pod: Pod; nodeZone: string | undefined; absent: ('nodeName' | 'zone' | 'hostname')[] }[] = [
    { name: 'A.4.5 no nodeName when spec.nodeName is empty', pod: makePod('p', { nodeName: '' }), nodeZone: 'zone-a', absent: ['nodeName', 'hostname'] },
    { name: 'A.4.6 no zone when the node has no zone label', pod: makePod('p'), nodeZone: undefined, absent: ['zone', 'hostname'] },
    { name: 'A.4.6 no zone when the zone label is empty', pod: makePod('p'), nodeZone: '', absent: ['zone', 'hostname'] },
  ];
  for (const tc of optional) {
    it(tc.name, () => {
      const n = deepFreeze(makeNode('node-1', tc.nodeZone === undefined ? {} : { zone: tc.nodeZone }));
      const ep = endpointFromPod(deepFreeze(tc.pod), n, svc, 'IPv4');
      for (const f of tc.absent) expect(ep).not.toHaveProperty(f);
    });
  }
  it('A.3.4 no zone without a node (unknown node, publishNotReadyAddresses)', () => {
    expect(endpointFromPod(deepFreeze(makePod('p')), undefined, svcPNR, 'IPv4')).not.toHaveProperty('zone');
  });
});

describe('A.4.7 hostname', () => {
  const cases: { name: string; pod: Pod; want: boolean }[] = [
    { name: 'published with hostname and subdomain == service name', pod: makePod('p', { hostname: 'h', subdomain: 'web' }), want: true },
    { name: 'not published without subdomain', pod: makePod('p', { hostname: 'h' }), want: false },
    { name: 'not published with another subdomain', pod: makePod('p', { hostname: 'h', subdomain: 'db' }), want: false },
    { name: 'not published without hostname', pod: makePod('p', { subdomain: 'web' }), want: false },
    { name: 'not published from another namespace', pod: makePod('p', { hostname: 'h', subdomain: 'web', namespace: 'x' }), want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const pod = deepFreeze(tc.pod);
      expect(shouldSetHostname(pod, svc)).toBe(tc.want);
      const ep = endpointFromPod(pod, node, svc, 'IPv4');
      if (tc.want) expect(ep.hostname).toBe('h');
      else expect(ep).not.toHaveProperty('hostname');
    });
  }
});

describe('addresses per family (A.2.4, A.2.5)', () => {
  const cases: { name: string; ips: string[]; v4: string[]; v6: string[] }[] = [
    { name: 'A.2.4 IPv6 is re-stringified canonically', ips: ['1234::5678:0000:0000:9abc:def1'], v4: [], v6: ['1234::5678:0:0:9abc:def1'] },
    { name: 'A.2.4 IPv4 with leading zeros is canonicalised', ips: ['010.000.000.001'], v4: ['10.0.0.1'], v6: [] },
    { name: 'A.2.4 IPv4-mapped IPv6 counts as IPv4', ips: ['::ffff:10.1.2.3'], v4: ['10.1.2.3'], v6: [] },
    { name: 'A.2.4 dual-stack pod: one address per family, in podIPs order', ips: ['10.0.0.5', 'FD00::5'], v4: ['10.0.0.5'], v6: ['fd00::5'] },
    { name: 'A.2.4 every podIPs entry of the family is kept', ips: ['10.0.0.5', '10.0.0.6'], v4: ['10.0.0.5', '10.0.0.6'], v6: [] },
    { name: 'unparseable entries are skipped', ips: ['nonsense', '10.0.0.7'], v4: ['10.0.0.7'], v6: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const pod = deepFreeze(makePod('p', { ips: tc.ips }));
      expect(podAddressesByFamily(pod)).toEqual({ IPv4: tc.v4, IPv6: tc.v6 });
      expect(endpointFromPod(pod, node, svc, 'IPv4').addresses).toEqual(tc.v4);
      expect(endpointFromPod(pod, node, svc, 'IPv6').addresses).toEqual(tc.v6);
    });
  }
  it('A.2.4 only status.podIPs is read: podIP alone yields no address', () => {
    const pod = deepFreeze({ ...makePod('p'), status: { phase: 'Running' as const, podIP: '10.0.0.9' } });
    expect(shouldPodBeInEndpoints(pod)).toBe(true);
    expect(endpointFromPod(pod, node, svc, 'IPv4').addresses).toEqual([]);
  });
});
