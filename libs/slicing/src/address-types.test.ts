import { describe, expect, it } from 'vitest';
import type { Service } from '@slicemesh/model';
import { deepFreeze, makeService } from '@slicemesh/testing';
import type { SliceAddressType } from './address-types.ts';
import { isServiceIPSet, serviceAddressTypes } from './address-types.ts';

const cases: { name: string; service: Service; want: SliceAddressType[] }[] = [
  { name: 'A.2.1 ipFamilies [IPv4] -> IPv4', service: makeService('s', { ipFamilies: ['IPv4'] }), want: ['IPv4'] },
  { name: 'A.2.1 ipFamilies [IPv6] -> IPv6', service: makeService('s', { ipFamilies: ['IPv6'], clusterIP: 'fd00::10' }), want: ['IPv6'] },
  { name: 'A.2.1 ipFamilies is a set: [IPv6, IPv4] -> IPv4, IPv6', service: makeService('s', { ipFamilies: ['IPv6', 'IPv4'] }), want: ['IPv4', 'IPv6'] },
  { name: 'A.2.1 duplicate families count once', service: makeService('s', { ipFamilies: ['IPv4', 'IPv4'] }), want: ['IPv4'] },
  { name: 'A.2.2 no ipFamilies, IPv4 ClusterIP -> IPv4', service: makeService('s', { ipFamilies: [], clusterIP: '10.96.0.1' }), want: ['IPv4'] },
  { name: 'A.2.2 no ipFamilies, IPv6 ClusterIP -> IPv6', service: makeService('s', { ipFamilies: [], clusterIP: 'fd00::1' }), want: ['IPv6'] },
  { name: 'A.2.2 no ipFamilies, unparseable ClusterIP -> IPv4', service: makeService('s', { ipFamilies: [], clusterIP: 'bogus' }), want: ['IPv4'] },
  { name: 'A.2.2 no ipFamilies, headless -> both', service: makeService('s', { ipFamilies: [], clusterIP: 'None' }), want: ['IPv4', 'IPv6'] },
  { name: 'A.2.2 no ipFamilies, empty ClusterIP -> both', service: makeService('s', { ipFamilies: [], clusterIP: '' }), want: ['IPv4', 'IPv6'] },
];

describe('serviceAddressTypes', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(serviceAddressTypes(deepFreeze(tc.service))).toEqual(tc.want);
    });
  }
});

describe('isServiceIPSet', () => {
  const ips = [
    { name: 'A.9.3 a real ClusterIP is set', ip: '10.0.0.1', want: true },
    { name: 'A.9.3 None is headless', ip: 'None', want: false },
    { name: 'A.9.3 empty is headless', ip: '', want: false },
  ];
  for (const tc of ips) {
    it(tc.name, () => {
      expect(isServiceIPSet(deepFreeze(makeService('s', { clusterIP: tc.ip })))).toBe(tc.want);
    });
  }
});
