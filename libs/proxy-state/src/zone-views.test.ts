import type { EndpointSlice, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceEndpoint as ep } from '../testing/builders.ts';
import type { ZoneViews } from './zone-views.ts';
import { proxySlice } from './proxy-slice.ts';
import { diffZoneViews, UNZONED_VIEW, viewSlicesForNode, zoneViews } from './zone-views.ts';

const http = [{ name: 'http', port: 8080, protocol: 'TCP' as const }];
const nodes = deepFreeze([
  makeNode('n-a1', { zone: 'zone-a' }),
  makeNode('n-a2', { zone: 'zone-a' }),
  makeNode('n-b1', { zone: 'zone-b' }),
  makeNode('n-x'),
]);
const web = makeService('web');
const webLocal = makeService('web', { spec: { internalTrafficPolicy: 'Local' } });
const s = (name: string, endpoints: Parameters<typeof makeSlice>[1], ports = http) => makeSlice(name, endpoints, { ports });

/** Per view: `<slice>/<ip>` for every endpoint it holds, in entry order. */
function flat(v: ZoneViews): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [zone, entries] of v.byZone) out[zone] = entries.flatMap((e) => e.slice.endpoints.map((x) => `${e.sliceName}/${x.addresses[0] ?? ''}`));
  return out;
}

interface Case {
  readonly name: string;
  readonly services: readonly Service[];
  readonly slices: readonly EndpointSlice[];
  readonly gate?: boolean;
  /** Expected zoned views (zone-a, zone-b); UNZONED_VIEW is checked to hold everything. */
  readonly want: { readonly 'zone-a': readonly string[]; readonly 'zone-b': readonly string[] };
}

const cases: Case[] = [
  {
    name: 'C.5 PreferClose hints: each zone keeps the ready endpoints hinted for it',
    services: [web],
    slices: [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] }), ep('10.0.0.3', { forZones: ['zone-a'] })])],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.3'], 'zone-b': ['web-1/10.0.0.2'] },
  },
  {
    name: 'F.11 one ready endpoint without a hint: every zone gets every ready endpoint',
    services: [web],
    slices: [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2'), ep('10.0.0.3', { ready: false })])],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.2'], 'zone-b': ['web-1/10.0.0.1', 'web-1/10.0.0.2'] },
  },
  {
    name: 'D.3.1 no ready endpoint hinted for a zone: that zone gets every ready endpoint',
    services: [web],
    slices: [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'], ready: false })])],
    want: { 'zone-a': ['web-1/10.0.0.1'], 'zone-b': ['web-1/10.0.0.1'] },
  },
  {
    name: 'D.3.2 no ready endpoint anywhere: every zone gets the serving terminating ones',
    services: [web],
    slices: [
      s('web-1', [
        ep('10.0.0.1', { ready: false, terminating: true, forZones: ['zone-a'] }),
        ep('10.0.0.2', { ready: false, serving: false, terminating: true }),
        ep('10.0.0.3', { ready: false, terminating: true }),
      ]),
    ],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.3'], 'zone-b': ['web-1/10.0.0.1', 'web-1/10.0.0.3'] },
  },
  {
    name: 'D.3.3 Local policy: endpoints located on the zone nodes, whatever their hints',
    services: [webLocal],
    slices: [
      s('web-1', [
        ep('10.0.0.1', { node: 'n-a1', forZones: ['zone-b'] }),
        ep('10.0.0.2', { node: 'n-a2', ready: false }),
        ep('10.0.0.3', { node: 'n-b1' }),
        ep('10.0.0.4', { node: 'n-x' }),
      ]),
    ],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.2'], 'zone-b': ['web-1/10.0.0.3'] },
  },
  {
    name: 'D.3.4 Local-only port: a zone without usable local endpoints keeps one witness for hasAnyEndpoints',
    services: [webLocal],
    slices: [s('web-1', [ep('10.0.0.9', { node: 'n-a1' }), ep('10.0.0.5', { node: 'n-x' }), ep('10.0.0.3', { node: 'n-b1', ready: false, serving: false })])],
    want: { 'zone-a': ['web-1/10.0.0.9'], 'zone-b': ['web-1/10.0.0.5', 'web-1/10.0.0.3'] },
  },
  {
    name: 'zone views: Local endpoints on unknown nodes go into every view',
    services: [webLocal],
    slices: [s('web-1', [ep('10.0.0.1', { node: 'n-a1' }), ep('10.0.0.2', { node: 'ghost' }), ep('10.0.0.3')])],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.2'], 'zone-b': ['web-1/10.0.0.2'] },
  },
  {
    name: 'D.2.6 duplicates: a kept copy keeps every copy, so de-duplication picks the same winner',
    services: [web],
    slices: [
      s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })]),
      s('web-2', [ep('10.0.0.1', { ready: false, terminating: true }), ep('10.0.0.3', { forZones: ['zone-b'] })]),
    ],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-2/10.0.0.1'], 'zone-b': ['web-1/10.0.0.2', 'web-2/10.0.0.3'] },
  },
  {
    name: 'D.3.1 node hints: a zone whose every node is node-hinted keeps only node-hinted endpoints',
    services: [web],
    slices: [
      s('web-1', [
        ep('10.0.0.1', { forZones: ['zone-a'], forNodes: ['n-a1'] }),
        ep('10.0.0.2', { forZones: ['zone-a'], forNodes: ['n-a2'] }),
        ep('10.0.0.3', { forZones: ['zone-b'], forNodes: ['n-b1'] }),
        ep('10.0.0.4', { forZones: ['zone-a'], forNodes: ['n-x'] }),
      ]),
    ],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.2', 'web-1/10.0.0.4'], 'zone-b': ['web-1/10.0.0.3'] },
  },
  {
    name: 'D.3.1 node hints incomplete: a ready endpoint without node hint is kept so no node of the zone uses node mode',
    services: [web],
    slices: [
      s('web-1', [
        ep('10.0.0.1', { forZones: ['zone-a'], forNodes: ['n-a1'] }),
        ep('10.0.0.2', { forZones: ['zone-b'], forNodes: ['n-b1'] }),
        ep('10.0.0.3', { forZones: ['zone-b'] }),
      ]),
    ],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.3'], 'zone-b': ['web-1/10.0.0.2', 'web-1/10.0.0.3'] },
  },
  {
    name: 'C.6 gate off: node hints are ignored, zone hints decide',
    services: [web],
    gate: false,
    slices: [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'], forNodes: ['n-a1'] }), ep('10.0.0.2', { forZones: ['zone-b'], forNodes: ['n-a2'] })])],
    want: { 'zone-a': ['web-1/10.0.0.1'], 'zone-b': ['web-1/10.0.0.2'] },
  },
  {
    name: 'zone views: slices of an unknown service go unfiltered to every view',
    services: [],
    slices: [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })])],
    want: { 'zone-a': ['web-1/10.0.0.1', 'web-1/10.0.0.2'], 'zone-b': ['web-1/10.0.0.1', 'web-1/10.0.0.2'] },
  },
  {
    name: 'D.1 headless services are never programmed: no zone entries',
    services: [makeService('web', { clusterIP: 'None' })],
    slices: [s('web-1', [ep('10.0.0.1')])],
    want: { 'zone-a': [], 'zone-b': [] },
  },
  {
    name: 'zone views: endpoints only under ports the service does not have are left out; empty entries omitted',
    services: [web],
    slices: [s('web-1', [ep('10.0.0.1')]), s('web-2', [ep('10.0.0.2')], [{ name: 'metrics', port: 9090, protocol: 'TCP' }]), s('web-3', [])],
    want: { 'zone-a': ['web-1/10.0.0.1'], 'zone-b': ['web-1/10.0.0.1'] },
  },
];

describe('zoneViews', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const input = deepFreeze({ services: tc.services, slices: tc.slices, nodes, ...(tc.gate === undefined ? {} : { preferSameNodeGate: tc.gate }) });
      const views = zoneViews(input);
      expect(views.zones).toEqual([UNZONED_VIEW, 'zone-a', 'zone-b']);
      const got = flat(views);
      expect({ 'zone-a': got['zone-a'], 'zone-b': got['zone-b'] }).toEqual(tc.want);
      const everything = tc.slices.flatMap((x) => x.endpoints.map((e) => `${x.metadata.name}/${e.addresses[0] ?? ''}`));
      expect(got[UNZONED_VIEW]).toEqual(everything);
    });
  }

  it('zone views: an entry holds the slice as proxies read it (proxySlice), one object per slice across views', () => {
    const slice = s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })]);
    const views = zoneViews(deepFreeze({ services: [web], slices: [slice], nodes }));
    const a = views.byZone.get('zone-a')?.[0];
    expect(a).toMatchObject({ zone: 'zone-a', namespace: 'default', service: 'web', sliceName: 'web-1' });
    const whole = proxySlice(slice);
    expect(a?.slice.metadata).toBe(whole.metadata);
    expect(a?.slice.ports).toBe(slice.ports);
    expect(a?.slice.endpoints).toEqual([whole.endpoints[0]]);
    expect(views.byZone.get(UNZONED_VIEW)?.[0]?.slice).toBe(whole);
    // What proxies never read is left out (the full slice stays in the hinted bucket).
    expect(Object.keys(whole.metadata).sort()).toEqual(['labels', 'name', 'namespace']);
  });

  it('zone views: no slices give every view, but no entries', () => {
    const views = zoneViews(deepFreeze({ services: [web], slices: [], nodes }));
    expect(views.entries.size).toBe(0);
    expect([...views.byZone.values()].every((e) => e.length === 0)).toBe(true);
  });

  it('UNZONED_VIEW can never be a zone label value (must start with an alphanumeric)', () => {
    expect(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(UNZONED_VIEW)).toBe(false);
  });
});

describe('viewSlicesForNode', () => {
  const slices = [s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })])];
  const views = zoneViews(deepFreeze({ services: [web], slices, nodes }));
  const cases = [
    { name: 'a zoned node reads its zone view', node: makeNode('n-a1', { zone: 'zone-a' }), ips: ['10.0.0.1'] },
    { name: 'a node without zone label reads the unfiltered view', node: makeNode('n-x'), ips: ['10.0.0.1', '10.0.0.2'] },
    { name: 'a node with an empty zone label reads the unfiltered view', node: makeNode('n-e', { zone: '' }), ips: ['10.0.0.1', '10.0.0.2'] },
    { name: 'a node of a zone without a view yet reads the unfiltered view', node: makeNode('n-new', { zone: 'zone-new' }), ips: ['10.0.0.1', '10.0.0.2'] },
    { name: 'an unknown node reads the unfiltered view', node: undefined, ips: ['10.0.0.1', '10.0.0.2'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(viewSlicesForNode(views, tc.node).flatMap((x) => x.endpoints.map((e) => e.addresses[0]))).toEqual(tc.ips);
    });
  }
});

describe('diffZoneViews', () => {
  const base = [
    s('web-1', [ep('10.0.0.1', { forZones: ['zone-a'] }), ep('10.0.0.2', { forZones: ['zone-b'] })]),
    s('web-2', [ep('10.0.0.3', { forZones: ['zone-a'] }), ep('10.0.0.4', { forZones: ['zone-b'] })]),
  ];
  const viewsOf = (slices: readonly EndpointSlice[]) => zoneViews(deepFreeze({ services: [web], slices, nodes }));
  const summary = (prev: readonly EndpointSlice[], next: readonly EndpointSlice[]) =>
    diffZoneViews(viewsOf(prev), viewsOf(next)).map((o) => `${o.op} ${o.op === 'put' ? `${o.entry.zone}/${o.entry.sliceName}` : `${o.zone}/${o.sliceName}`}`);
  const cases = [
    { name: 'equal views give no operation', next: base, ops: [] },
    {
      name: 'one endpoint change touches one entry per affected zone',
      next: [base[0] as EndpointSlice, s('web-2', [ep('10.0.0.3', { forZones: ['zone-a'] }), ep('10.0.0.4', { forZones: ['zone-b'], ready: false })])],
      // zone-b loses its only ready endpoint of web-2; the unzoned view changes too (ops in key order).
      ops: [`put ${UNZONED_VIEW}/web-2`, 'delete zone-b/web-2'],
    },
    {
      name: 'a new endpoint hinted for one zone puts that zone entry and the unfiltered one',
      next: [base[0] as EndpointSlice, s('web-2', [ep('10.0.0.3', { forZones: ['zone-a'] }), ep('10.0.0.4', { forZones: ['zone-b'] }), ep('10.0.0.5', { forZones: ['zone-a'] })])],
      ops: [`put ${UNZONED_VIEW}/web-2`, 'put zone-a/web-2'],
    },
    { name: 'a deleted slice deletes its entries in every view', next: [base[0] as EndpointSlice], ops: [`delete ${UNZONED_VIEW}/web-2`, 'delete zone-a/web-2', 'delete zone-b/web-2'] },
  ];
  for (const tc of cases) it(tc.name, () => expect(summary(base, tc.next)).toEqual(tc.ops));
});
