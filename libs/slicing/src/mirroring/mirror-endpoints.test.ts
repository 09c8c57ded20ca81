import type { Endpoints, KubeEvent } from '@slicemesh/model';
import { deepFreeze, ipv4Range, makeEndpoints, makeSubset } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { DesiredMirror } from './mirror-endpoints.ts';
import { mirrorEndpoints } from './mirror-endpoints.ts';

const HTTP = { name: 'http', port: 80, protocol: 'TCP' as const };
const HTTPS = { name: 'https', port: 443, protocol: 'UDP' as const };

const invalidEvent = (n: number): KubeEvent => ({ type: 'Warning', reason: 'InvalidIPAddress', message: `Skipped ${n} invalid IP addresses when mirroring to EndpointSlices` });
const tooManyEvent = (max: number, n: number): KubeEvent => ({
  type: 'Warning',
  reason: 'TooManyAddressesToMirror',
  message: `A max of ${max} addresses can be mirrored to EndpointSlices per Endpoints subset. ${n} addresses were skipped`,
});

const addressesOf = (d: DesiredMirror): string[][] => d.groups.map((g) => g.endpoints.map((e) => e.addresses.join()));

interface Case {
  name: string;
  endpoints: Endpoints;
  max?: number;
  check: (d: DesiredMirror) => void;
}

const thousandAndOne = ipv4Range(1001);
const byText = [...thousandAndOne].sort();

const cases: Case[] = [
  {
    name: 'no subsets: no groups and no events',
    endpoints: makeEndpoints('ext'),
    check: (d) => expect(d).toEqual({ groups: [], invalidAddresses: 0, skippedAddresses: 0, events: [] }),
  },
  {
    name: 'B.2.2 a dual-stack subset yields an IPv4 and an IPv6 group with the same ports, IPv4 first',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['2001:db8::1', '10.0.0.1'])] }),
    check: (d) => {
      expect(d.groups.map((g) => g.addressType)).toEqual(['IPv4', 'IPv6']);
      expect(d.groups[0]?.ports).toEqual(d.groups[1]?.ports);
      expect(addressesOf(d)).toEqual([['10.0.0.1'], ['2001:db8::1']]);
    },
  },
  {
    name: 'B.2.2 an IPv6-only subset yields only an IPv6 group',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['2001:db8::1', '2001:db8::2'])] }),
    check: (d) => expect(d.groups.map((g) => [g.addressType, g.endpoints.length])).toEqual([['IPv6', 2]]),
  },
  {
    name: 'B.2.2 subsets with different port sets are separate groups',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTPS], ['10.0.0.2'])] }),
    check: (d) => expect(d.groups.map((g) => g.ports)).toEqual([[{ name: 'http', port: 80, protocol: 'TCP' }], [{ name: 'https', port: 443, protocol: 'UDP' }]]),
  },
  {
    name: 'B.2.3 addresses are written in canonical form; an IPv4-mapped IPv6 address counts as IPv4',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['2001:DB8:0:0:1::0001', '010.000.000.007', '::ffff:10.0.0.8'])] }),
    check: (d) => expect(addressesOf(d)).toEqual([['10.0.0.7', '10.0.0.8'], ['2001:db8::1:0:0:1']]),
  },
  {
    name: 'B.2.3 endpoint fields: ready from the list, hostname, nodeName, targetRef as is; no serving, terminating or zone',
    endpoints: makeEndpoints('ext', {
      subsets: [
        makeSubset(
          [HTTP],
          [{ ip: '10.0.0.1', hostname: 'db-0', nodeName: 'node-a', targetRef: { kind: 'Pod', namespace: 'default', name: 'db-0', uid: 'p0', resourceVersion: '7' } }],
          [{ ip: '10.0.0.2', hostname: '' }],
        ),
      ],
    }),
    check: (d) =>
      expect(d.groups[0]?.endpoints).toEqual([
        {
          addresses: ['10.0.0.1'],
          conditions: { ready: true },
          hostname: 'db-0',
          nodeName: 'node-a',
          targetRef: { kind: 'Pod', namespace: 'default', name: 'db-0', uid: 'p0', resourceVersion: '7' },
        },
        { addresses: ['10.0.0.2'], conditions: { ready: false } },
      ]),
  },
  {
    name: 'B.2.4 ports keep name, port, protocol and appProtocol',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([{ name: 'grpc', port: 9000, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }], ['10.0.0.1'])] }),
    check: (d) => expect(d.groups[0]?.ports).toEqual([{ name: 'grpc', port: 9000, protocol: 'TCP', appProtocol: 'kubernetes.io/h2c' }]),
  },
  {
    name: 'B.2.5 FQDN and other non-IP addresses are skipped and counted in one InvalidIPAddress warning',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['db.example.com', '10.0.0.1'], ['not-an-ip'])] }),
    check: (d) => {
      expect(addressesOf(d)).toEqual([['10.0.0.1']]);
      expect([d.invalidAddresses, d.skippedAddresses]).toEqual([2, 2]);
      expect(d.events).toEqual([invalidEvent(2)]);
    },
  },
  {
    name: 'B.2.5 only invalid addresses: no group at all, never an FQDN group',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['a.example.com', 'b.example.com'])] }),
    check: (d) => {
      expect(d.groups).toEqual([]);
      expect(d.events).toEqual([invalidEvent(2)]);
    },
  },
  {
    name: 'B.2.6 1001 addresses: one group of 1000 (the last by IP text dropped) and a TooManyAddressesToMirror warning',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], thousandAndOne)] }),
    check: (d) => {
      expect(d.groups).toHaveLength(1);
      expect(d.groups[0]?.endpoints.map((e) => e.addresses[0])).toEqual(byText.slice(0, 1000));
      expect(d.events).toEqual([tooManyEvent(1000, 1)]);
    },
  },
  {
    name: 'B.2.6 the cap takes ready addresses before not-ready ones',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.9'], ['10.0.0.1', '10.0.0.2'])] }),
    max: 2,
    check: (d) => {
      expect(d.groups[0]?.endpoints.map((e) => [e.addresses[0], e.conditions.ready])).toEqual([
        ['10.0.0.9', true],
        ['10.0.0.1', false],
      ]);
      expect(d.events).toEqual([tooManyEvent(2, 1)]);
    },
  },
  {
    name: 'B.2.6 the cap counts per canonical subset (3 + 2 addresses, cap 2: 4 kept, 1 skipped)',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.1', '10.0.0.2']), makeSubset([HTTPS], ['10.0.1.1', '10.0.1.2', '10.0.1.3'])] }),
    max: 2,
    check: (d) => {
      expect(d.groups.map((g) => g.endpoints.length)).toEqual([2, 2]);
      expect(d.skippedAddresses).toBe(1);
    },
  },
  {
    name: 'B.2.6 the cap is shared by both families of a dual-stack subset',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.1', '10.0.0.2', '2001:db8::1'])] }),
    max: 2,
    check: (d) => expect(addressesOf(d)).toEqual([['10.0.0.1', '10.0.0.2']]),
  },
  {
    name: 'B.2.5/B.2.6 invalid addresses do not use up the cap; the overflow warning counts them as skipped too',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.1', '10.0.0.2', '10.0.0.3', '1.2.3'])] }),
    max: 2,
    check: (d) => {
      expect(addressesOf(d)).toEqual([['10.0.0.1', '10.0.0.2']]);
      expect(d.events).toEqual([invalidEvent(1), tooManyEvent(2, 2)]);
    },
  },
  {
    name: 'B.2.6 an invalid address after the cap is only counted as skipped',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.1', '10.0.0.2', 'zz-not-an-ip'])] }),
    max: 1,
    check: (d) => {
      expect([d.invalidAddresses, d.skippedAddresses]).toEqual([0, 2]);
      expect(d.events).toEqual([tooManyEvent(1, 2)]);
    },
  },
  {
    name: 'two spellings of one IP become one endpoint',
    endpoints: makeEndpoints('ext', { subsets: [makeSubset([HTTP], ['10.0.0.01', '10.0.0.1'])] }),
    check: (d) => expect(addressesOf(d)).toEqual([['10.0.0.1']]),
  },
];

describe('mirrorEndpoints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      tc.check(mirrorEndpoints(deepFreeze(tc.endpoints), tc.max ?? 1000));
    });
  }
});
