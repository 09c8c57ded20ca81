import type { EndpointSlice, IPFamily } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceEndpoint as ep } from '../testing/builders.ts';
import { mergeEndpoints } from './merge-endpoints.ts';

const http = [{ name: 'http', port: 80, protocol: 'TCP' as const }];

interface Case {
  readonly name: string;
  readonly slices: readonly EndpointSlice[];
  readonly family?: IPFamily;
  readonly nodeName?: string;
  /** Per port key: `endpoint` + flags r/s/t/l (ready, serving, terminating, local) that are true. */
  readonly want: Record<string, readonly string[]>;
}

const cases: Case[] = [
  {
    name: 'D.2.3 endpoints are keyed ip:port per port name/protocol, sorted by key',
    nodeName: 'host1',
    slices: [
      makeSlice('web-1', [ep('10.0.1.3', { node: 'host2' }), ep('10.0.1.10', { node: 'host1' }), ep('10.0.1.1')], {
        ports: [
          { name: 'port-0', port: 80, protocol: 'TCP' },
          { name: 'port-1', port: 443, protocol: 'TCP' },
        ],
      }),
    ],
    want: {
      'port-0/TCP': ['10.0.1.10:80 rsl', '10.0.1.1:80 rs', '10.0.1.3:80 rs'],
      'port-1/TCP': ['10.0.1.10:443 rsl', '10.0.1.1:443 rs', '10.0.1.3:443 rs'],
    },
  },
  {
    name: 'D.2.4 nil ready/serving default to true, nil terminating to false',
    slices: [makeSlice('web-1', [ep('10.0.0.1'), ep('10.0.0.2', { ready: false }), ep('10.0.0.3', { ready: false, serving: false, terminating: true })], { ports: http })],
    want: { 'http/TCP': ['10.0.0.1:80 rs', '10.0.0.2:80 s', '10.0.0.3:80 t'] },
  },
  {
    name: 'D.2.3 two slices with the same port are unioned',
    slices: [makeSlice('web-1', [ep('10.0.1.1')], { ports: http }), makeSlice('web-2', [ep('10.0.2.1')], { ports: http })],
    want: { 'http/TCP': ['10.0.1.1:80 rs', '10.0.2.1:80 rs'] },
  },
  {
    name: 'D.2.6 a duplicate that is not terminating replaces an earlier terminating copy',
    slices: [
      makeSlice('web-1', [ep('10.0.0.1', { ready: false, terminating: true, node: 'old' })], { ports: http }),
      makeSlice('web-2', [ep('10.0.0.1', { node: 'host1' })], { ports: http }),
    ],
    nodeName: 'host1',
    want: { 'http/TCP': ['10.0.0.1:80 rsl'] },
  },
  {
    name: 'D.2.6 a later terminating copy never replaces the first one',
    slices: [
      makeSlice('web-1', [ep('10.0.0.1', { node: 'new' })], { ports: http }),
      makeSlice('web-2', [ep('10.0.0.1', { ready: false, terminating: true, node: 'host1' })], { ports: http }),
    ],
    nodeName: 'host1',
    want: { 'http/TCP': ['10.0.0.1:80 rs'] },
  },
  {
    name: 'D.2.6 among non-terminating copies the last in merge order (slice name) wins',
    slices: [
      makeSlice('web-b', [ep('10.0.0.1', { ready: false, node: 'host1' })], { ports: http }),
      makeSlice('web-a', [ep('10.0.0.1', { node: 'other' })], { ports: http }),
    ],
    nodeName: 'host1',
    want: { 'http/TCP': ['10.0.0.1:80 sl'] },
  },
  {
    name: 'D.2.6 all copies terminating: the first copy is kept',
    slices: [
      makeSlice('web-1', [ep('10.0.0.1', { ready: false, serving: true, terminating: true }), ep('10.0.0.1', { ready: false, serving: false, terminating: true })], {
        ports: http,
      }),
    ],
    want: { 'http/TCP': ['10.0.0.1:80 st'] },
  },
  {
    name: 'D.2.7 the same IP with different ports under one port name are distinct endpoints',
    slices: [
      makeSlice('web-1', [ep('10.0.1.1'), ep('10.0.1.2')], { ports: [{ name: 'p', port: 80, protocol: 'TCP' }] }),
      makeSlice('web-2', [ep('10.0.1.1'), ep('10.0.1.2')], { ports: [{ name: 'p', port: 8080, protocol: 'TCP' }] }),
    ],
    want: { 'p/TCP': ['10.0.1.1:80 rs', '10.0.1.1:8080 rs', '10.0.1.2:80 rs', '10.0.1.2:8080 rs'] },
  },
  {
    name: 'D.2.3 ports without a name or with a nil/zero port number are ignored; "" is a name',
    slices: [
      makeSlice('web-1', [ep('10.0.0.1')], {
        ports: [{ port: 80 }, { name: 'zero', port: 0 }, { name: 'nil' }, { name: '', port: 81, protocol: 'UDP' }],
      }),
    ],
    want: { '/UDP': ['10.0.0.1:81 rs'] },
  },
  {
    name: 'D.2.3 only addresses[0] counts; endpoints without addresses are ignored',
    slices: [makeSlice('web-1', [{ addresses: ['10.0.0.1', '10.0.0.2'], conditions: {} }, { addresses: [], conditions: {} }], { ports: http })],
    want: { 'http/TCP': ['10.0.0.1:80 rs'] },
  },
  {
    name: 'D.2.1 slices of another address type are ignored',
    slices: [makeSlice('web-1', [ep('10.0.0.1')], { ports: http }), makeSlice('web-2', [ep('fd00::1')], { ports: http, addressType: 'IPv6' })],
    want: { 'http/TCP': ['10.0.0.1:80 rs'] },
  },
  {
    name: 'D.2.3 IPv6 endpoints are keyed [ip]:port with canonical IPs',
    family: 'IPv6',
    slices: [makeSlice('web-1', [ep('FD00:0:0::1'), ep('10.0.0.1')], { ports: http, addressType: 'IPv6' })],
    want: { 'http/TCP': ['[fd00::1]:80 rs'] },
  },
  {
    name: 'D.2.1 slices without the service-name label are ignored',
    slices: [{ ...makeSlice('web-1', [ep('10.0.0.1')], { ports: http }), metadata: { name: 'web-1', namespace: 'default' } }],
    want: {},
  },
  {
    name: 'D.2.5 nothing is local when the proxy node name is empty',
    nodeName: '',
    slices: [makeSlice('web-1', [ep('10.0.0.1')], { ports: http })],
    want: { 'http/TCP': ['10.0.0.1:80 rs'] },
  },
  { name: 'D.2 no slices give an empty map', slices: [], want: {} },
  { name: 'D.2 a port whose slices hold no endpoints is left out', slices: [makeSlice('web-1', [], { ports: http })], want: {} },
];

describe('mergeEndpoints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const got = mergeEndpoints(deepFreeze(tc.slices), { nodeName: tc.nodeName ?? 'node-x', family: tc.family ?? 'IPv4' });
      const flat: Record<string, string[]> = {};
      for (const [k, eps] of got) {
        flat[k] = eps.map((e) => `${e.endpoint} ${e.ready ? 'r' : ''}${e.serving ? 's' : ''}${e.terminating ? 't' : ''}${e.isLocal ? 'l' : ''}`);
      }
      expect(flat).toEqual(tc.want);
    });
  }

  it('D.2 merge order does not depend on input order', () => {
    const a = makeSlice('web-a', [ep('10.0.0.1', { node: 'n1' })], { ports: http });
    const b = makeSlice('web-b', [ep('10.0.0.1', { node: 'n2' })], { ports: http });
    const opts = { nodeName: 'n2', family: 'IPv4' as const };
    const ab = mergeEndpoints(deepFreeze([a, b]), opts);
    expect(ab.get('http/TCP')?.[0]?.nodeName).toBe('n2');
    expect(mergeEndpoints([b, a], opts)).toEqual(ab);
  });

  it('D.2 hints are read into sorted unique zone and node lists', () => {
    const s = makeSlice('web-1', [ep('10.0.0.1', { forZones: ['b', 'a', 'b'], forNodes: ['n2', 'n1'], zone: 'a', node: 'n1' })], { ports: http });
    const [info] = mergeEndpoints(deepFreeze([s]), { nodeName: 'n1', family: 'IPv4' }).get('http/TCP') ?? [];
    expect(info).toMatchObject({ zoneHints: ['a', 'b'], nodeHints: ['n1', 'n2'], zone: 'a', nodeName: 'n1', ip: '10.0.0.1', port: 80 });
  });
});
