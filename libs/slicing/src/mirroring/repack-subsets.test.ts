import type { EndpointSubset } from '@slicemesh/model';
import { deepFreeze, makeSubset } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { RepackedSubset } from './repack-subsets.ts';
import { repackSubsets } from './repack-subsets.ts';

const HTTP = { name: 'http', port: 80, protocol: 'TCP' as const };
const HTTPS = { name: 'https', port: 443, protocol: 'TCP' as const };
const http = { name: 'http', port: 80, protocol: 'TCP' as const };
const https = { name: 'https', port: 443, protocol: 'TCP' as const };

const cases: { name: string; subsets: EndpointSubset[] | undefined; want: RepackedSubset[] }[] = [
  { name: 'no subsets repack to nothing', subsets: undefined, want: [] },
  { name: 'ports without addresses vanish', subsets: [makeSubset([HTTP])], want: [] },
  {
    name: 'B.2.1 two subsets with different ports and the same address collapse into one carrying both ports',
    subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTPS], ['10.0.0.1'])],
    want: [{ ports: [http, https], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] }],
  },
  {
    name: 'B.2.1 two subsets with the same ports merge their addresses (sorted by IP text)',
    subsets: [makeSubset([HTTP], ['10.0.0.2']), makeSubset([HTTP], ['10.0.0.1'], ['10.0.0.3'])],
    want: [{ ports: [http], addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.3' }] }],
  },
  {
    name: 'different ports with different addresses stay apart',
    subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTPS], ['10.0.0.2'])],
    want: [
      { ports: [http], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] },
      { ports: [https], addresses: [{ ip: '10.0.0.2' }], notReadyAddresses: [] },
    ],
  },
  {
    name: 'ports are grouped by the address set they share, not addresses by their port set',
    subsets: [makeSubset([HTTP, HTTPS], ['10.0.0.1']), makeSubset([HTTP], ['10.0.0.2'])],
    want: [
      { ports: [http], addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReadyAddresses: [] },
      { ports: [https], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] },
    ],
  },
  {
    name: 'an address listed ready and not ready for the same port is not ready',
    subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTP], [], ['10.0.0.1'])],
    want: [{ ports: [http], addresses: [], notReadyAddresses: [{ ip: '10.0.0.1' }] }],
  },
  {
    name: 'an address ready on one port and not ready on another splits the ports',
    subsets: [makeSubset([HTTP], ['10.0.0.1']), makeSubset([HTTPS], [], ['10.0.0.1'])],
    want: [
      { ports: [http], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] },
      { ports: [https], addresses: [], notReadyAddresses: [{ ip: '10.0.0.1' }] },
    ],
  },
  {
    name: 'duplicates by (IP, targetRef uid) keep the first entry; the same IP with another uid is kept',
    subsets: [
      makeSubset([HTTP], [{ ip: '10.0.0.1', hostname: 'first', targetRef: { kind: 'Pod', name: 'a', uid: 'u1' } }]),
      makeSubset([HTTP], [
        { ip: '10.0.0.1', hostname: 'second', targetRef: { kind: 'Pod', name: 'a', uid: 'u1' } },
        { ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'b', uid: 'u0' } },
      ]),
    ],
    want: [
      {
        ports: [http],
        addresses: [
          { ip: '10.0.0.1', targetRef: { kind: 'Pod', name: 'b', uid: 'u0' } },
          { ip: '10.0.0.1', hostname: 'first', targetRef: { kind: 'Pod', name: 'a', uid: 'u1' } },
        ],
        notReadyAddresses: [],
      },
    ],
  },
  {
    name: 'addresses of a subset without ports are kept in a port-less subset',
    subsets: [makeSubset([], ['10.0.0.9']), makeSubset([HTTP], ['10.0.0.1'])],
    want: [
      { ports: [http], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] },
      { ports: [], addresses: [{ ip: '10.0.0.9' }], notReadyAddresses: [] },
    ],
  },
  {
    name: 'a port-less subset with the same addresses as a port joins that port',
    subsets: [makeSubset([], ['10.0.0.1']), makeSubset([HTTP], ['10.0.0.1'])],
    want: [{ ports: [http], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] }],
  },
  {
    name: 'a port without protocol is the same port as its TCP spelling; repeated ports collapse',
    subsets: [makeSubset([{ name: 'http', port: 80 }, HTTP], ['10.0.0.1']), makeSubset([HTTP], ['10.0.0.2'])],
    want: [{ ports: [http], addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReadyAddresses: [] }],
  },
  {
    name: 'appProtocol is part of port identity and is carried over',
    subsets: [makeSubset([{ ...HTTP, appProtocol: 'http' }], ['10.0.0.1']), makeSubset([HTTP], ['10.0.0.2'])],
    want: [
      { ports: [{ ...http, appProtocol: 'http' }], addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [] },
      { ports: [http], addresses: [{ ip: '10.0.0.2' }], notReadyAddresses: [] },
    ],
  },
];

describe('repackSubsets', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(repackSubsets(deepFreeze(tc.subsets))).toEqual(tc.want);
    });
  }
});
