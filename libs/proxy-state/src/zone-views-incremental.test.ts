import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { sliceEndpoint as ep } from '../testing/builders.ts';
import { deepEqual } from './deep-equal.ts';
import type { ZoneViewsInput } from './zone-views.ts';
import { updateZoneViews, zoneViews } from './zone-views.ts';

const http = [{ name: 'http', port: 8080, protocol: 'TCP' as const }];
const nodes = deepFreeze([makeNode('n-a', { zone: 'zone-a' }), makeNode('n-b', { zone: 'zone-b' })]);
const web = makeService('web');
const s = (name: string, endpoints: Parameters<typeof makeSlice>[1]) => deepFreeze(makeSlice(name, endpoints, { ports: http }));
const za = (ip: string, o: Parameters<typeof ep>[1] = {}) => ep(ip, { node: 'n-a', zone: 'zone-a', forZones: ['zone-a'], ready: true, ...o });
const zb = (ip: string, o: Parameters<typeof ep>[1] = {}) => ep(ip, { node: 'n-b', zone: 'zone-b', forZones: ['zone-b'], ready: true, ...o });

const w1 = s('web-1', [za('10.0.0.1'), zb('10.0.0.2')]);
const w2 = s('web-2', [za('10.0.1.1'), zb('10.0.1.2')]);

interface Case {
  readonly name: string;
  readonly before: ZoneViewsInput;
  readonly after: ZoneViewsInput;
  /** How much the second call selected again. */
  readonly want: { readonly recomputedSlices: number; readonly fullSelections: number; readonly keptEntriesOf: readonly string[] };
}

const base = { services: [web], nodes };
const cases: Case[] = [
  {
    name: 'a slice changing within the same rules is selected again alone; the other keeps its entry objects',
    before: { ...base, slices: [w1, w2] },
    after: { ...base, slices: [w1, s('web-2', [za('10.0.1.1'), zb('10.0.1.3')])] },
    want: { recomputedSlices: 1, fullSelections: 0, keptEntriesOf: ['web-1'] },
  },
  {
    name: 'nothing changed: nothing selected, every entry kept',
    before: { ...base, slices: [w1, w2] },
    after: { ...base, slices: [w1, w2] },
    want: { recomputedSlices: 0, fullSelections: 0, keptEntriesOf: ['web-1', 'web-2'] },
  },
  {
    name: 'a zone losing its last hinted endpoint changes the rules: the whole service is selected again',
    before: { ...base, slices: [s('web-1', [za('10.0.0.1'), za('10.0.0.5')]), s('web-2', [zb('10.0.1.2')])] },
    after: { ...base, slices: [s('web-1', [za('10.0.0.1'), za('10.0.0.5')]), s('web-2', [zb('10.0.1.2', { ready: false })])] },
    want: { recomputedSlices: 2, fullSelections: 1, keptEntriesOf: [] },
  },
  {
    name: 'an endpoint address held by two slices makes de-duplication cross slices: full selection',
    before: { ...base, slices: [w1, w2] },
    after: { ...base, slices: [w1, s('web-2', [za('10.0.0.1'), zb('10.0.1.2')])] },
    want: { recomputedSlices: 2, fullSelections: 1, keptEntriesOf: ['web-1'] },
  },
  {
    name: 'a node changing zone rebuilds the service (entries that come out the same are kept)',
    before: { ...base, slices: [w1, w2] },
    after: { ...base, nodes: deepFreeze([makeNode('n-a', { zone: 'zone-a' }), makeNode('n-b', { zone: 'zone-b' }), makeNode('n-c', { zone: 'zone-c' })]), slices: [w1, w2] },
    want: { recomputedSlices: 2, fullSelections: 1, keptEntriesOf: ['web-1', 'web-2'] },
  },
  {
    name: 'a new Service object rebuilds the service',
    before: { ...base, slices: [w1, w2] },
    after: { ...base, services: [makeService('web', { spec: { internalTrafficPolicy: 'Local' } })], slices: [w1, w2] },
    want: { recomputedSlices: 2, fullSelections: 1, keptEntriesOf: ['web-1', 'web-2'] },
  },
];

describe('updateZoneViews', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const first = updateZoneViews(undefined, tc.before);
      const second = updateZoneViews(first.state, tc.after);
      expect(deepEqual(second.views, zoneViews(tc.after))).toBe(true);
      // Kept: every entry of the slice that existed before is the very object of the first call.
      const kept = (name: string) => {
        const entries = [...second.views.entries].filter(([k, e]) => e.sliceName === name && first.views.entries.has(k));
        return entries.length > 0 && entries.every(([k, e]) => first.views.entries.get(k) === e);
      };
      const names = [...new Set(tc.after.slices.map((x: EndpointSlice) => x.metadata.name))];
      expect({ recomputedSlices: second.recomputedSlices, fullSelections: second.fullSelections, keptEntriesOf: names.filter(kept) }).toEqual(tc.want);
    });
  }

  it('slices of a Service it does not know go whole to every zone, and are updated per slice', () => {
    const unknown: Service[] = [];
    const first = updateZoneViews(undefined, { services: unknown, slices: [w1, w2], nodes });
    const second = updateZoneViews(first.state, { services: unknown, slices: [w1, s('web-2', [za('10.0.9.9')])], nodes: nodes as readonly Node[] });
    expect(deepEqual(second.views, zoneViews({ services: unknown, slices: [w1, s('web-2', [za('10.0.9.9')])], nodes }))).toBe(true);
    expect(second.recomputedSlices).toBe(1);
  });
});

describe('D.2.10 what kube-proxy never sees goes to no view (zoneViews and updateZoneViews alike)', () => {
  const other = deepFreeze({ ...web, metadata: { ...web.metadata, labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' } } });
  const labelled = (slice: EndpointSlice, labels: Record<string, string>) => deepFreeze({ ...slice, metadata: { ...slice.metadata, labels: { ...slice.metadata.labels, ...labels } } });
  const names = (input: ZoneViewsInput) => [...zoneViews(input).entries.values()].map((e) => `${e.zone}/${e.sliceName}`).sort();
  const cases: { name: string; input: ZoneViewsInput; want: readonly string[] }[] = [
    { name: 'a plain Service: every view', input: { ...base, slices: [w1] }, want: ['_/web-1', 'zone-a/web-1', 'zone-b/web-1'] },
    { name: 'a Service labelled for another proxy: none of its slices', input: { services: [other], nodes, slices: [w1, w2] }, want: [] },
    { name: 'a slice labelled for another proxy: not that one', input: { ...base, slices: [labelled(w1, { 'service.kubernetes.io/service-proxy-name': 'x' }), w2] }, want: ['_/web-2', 'zone-a/web-2', 'zone-b/web-2'] },
    { name: 'a slice labelled headless: not that one', input: { ...base, slices: [w1, labelled(w2, { 'service.kubernetes.io/headless': '' })] }, want: ['_/web-1', 'zone-a/web-1', 'zone-b/web-1'] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(names(tc.input)).toEqual(tc.want);
      expect(deepEqual(updateZoneViews(undefined, tc.input).views, zoneViews(tc.input))).toBe(true);
    });
  }

  it('the label appearing and going again, incrementally: entries go, then come back equal to a fresh computation', () => {
    const first = updateZoneViews(undefined, { ...base, slices: [w1] });
    const away = updateZoneViews(first.state, { services: [other], nodes, slices: [w1] });
    expect(away.views.entries.size).toBe(0);
    const back = updateZoneViews(away.state, { ...base, slices: [w1] });
    expect(deepEqual(back.views, zoneViews({ ...base, slices: [w1] }))).toBe(true);
  });
});
