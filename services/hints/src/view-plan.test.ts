import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { parseViewKey } from '@slicemesh/nats';
import { UNZONED_VIEW, viewSlicesForNode, zoneViews } from '@slicemesh/proxy-state';
import { deepFreeze, makeNode, makeService, makeSlice, prng } from '@slicemesh/testing';
import { desiredValue, desiredViews, digestOf, planKeyWrites, viewValue } from './view-plan.ts';
import type { RecordedKey } from './view-plan.ts';
import { autoService, ep, threeZoneNodes } from './test-fixtures.ts';

describe('digestOf / desiredValue', () => {
  it('is the digest of the text desiredValue puts, and differs for different values', () => {
    const v = desiredValue({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } });
    expect(v.text).toBe('{"b":1,"a":{"d":[2,{"y":1,"x":0}],"c":null}}');
    expect(digestOf(v.body)).toBe(v.digest);
    expect(digestOf({ a: 1 })).not.toBe(digestOf({ a: 2 }));
  });
});

describe('viewValue', () => {
  const at = (time: string | undefined, ips: readonly string[]): EndpointSlice => {
    const s = makeSlice('web-abc', ips.map((ip) => ep(ip, 'zone-a', 'n-a')));
    return time === undefined ? s : { ...s, metadata: { ...s.metadata, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': time, team: 'x' } } };
  };
  it.each([
    ['a new trigger time alone keeps the digest (no rewrite of an unchanged zone view)', at('2026-01-01T00:00:00Z', ['10.0.0.1']), at('2026-01-01T00:00:09Z', ['10.0.0.1']), true],
    ['a new generation alone keeps it', { ...at('t', ['10.0.0.1']), metadata: { ...at('t', ['10.0.0.1']).metadata, generation: 4 } }, { ...at('t', ['10.0.0.1']), metadata: { ...at('t', ['10.0.0.1']).metadata, generation: 5 } }, true],
    ['other annotations still count', at('2026-01-01T00:00:00Z', ['10.0.0.1']), { ...at('2026-01-01T00:00:00Z', ['10.0.0.1']), metadata: { ...at(undefined, []).metadata, name: 'web-abc', annotations: { team: 'y' } } }, false],
    ['a changed endpoint changes it', at('2026-01-01T00:00:00Z', ['10.0.0.1']), at('2026-01-01T00:00:09Z', ['10.0.0.2']), false],
    ['with and without the annotation, the same endpoints are the same view', at(undefined, ['10.0.0.1']), { ...at(undefined, ['10.0.0.1']), metadata: { ...at(undefined, ['10.0.0.1']).metadata, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': 't' } } }, true],
  ])('%s', (_name, a, b, same) => {
    expect(viewValue(a).digest === viewValue(b).digest).toBe(same);
  });
  it('puts the whole body, trigger time included', () => {
    const v = viewValue(at('2026-01-01T00:00:09Z', ['10.0.0.1']));
    expect(JSON.parse(v.text)).toEqual(at('2026-01-01T00:00:09Z', ['10.0.0.1']));
    expect(v.body).toEqual(at('2026-01-01T00:00:09Z', ['10.0.0.1']));
  });
  it('only the zone whose endpoints changed is rewritten when one endpoint of a hinted slice changes', () => {
    const slice = (time: string, cIp: string) => ({ ...makeSlice('web-abc', [ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] }), ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] }), ep(cIp, 'zone-c', 'n-c', { forZones: ['zone-c'] })]), metadata: { name: 'web-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': time } } }) as EndpointSlice;
    const views = (s: EndpointSlice) => desiredViews({ cluster: 'c1', service: autoService(), slices: [s], nodes: threeZoneNodes(), preferSameNodeGate: true });
    const before = views(slice('2026-01-01T00:00:00Z', '10.0.0.3'));
    const recorded = new Map([...before].map(([k, v]) => [k, { revision: 1, digest: v.digest }]));
    const writes = planKeyWrites(recorded, views(slice('2026-01-01T00:00:05Z', '10.0.0.4')));
    expect(writes.puts.map((p) => parseViewKey(p.key).zone).sort()).toEqual([UNZONED_VIEW, 'zone-c'].sort());
  });
});

describe('planKeyWrites', () => {
  const v1 = desiredValue({ v: 1 });
  const v2 = desiredValue({ v: 2 });
  const confirmed = (d: string | null): RecordedKey => ({ revision: 5, digest: d });
  const unconfirmed: RecordedKey = { revision: 0, digest: null };
  const cases: { name: string; recorded: [string, RecordedKey][]; desired: [string, typeof v1][]; puts: string[]; deletes: string[] }[] = [
    { name: 'nothing recorded and nothing wanted: no writes', recorded: [], desired: [], puts: [], deletes: [] },
    { name: 'a wanted key never recorded is put', recorded: [], desired: [['k1', v1]], puts: ['k1'], deletes: [] },
    { name: 'a confirmed key with the same digest is left alone (no-op dropped)', recorded: [['k1', confirmed(v1.digest)]], desired: [['k1', v1]], puts: [], deletes: [] },
    { name: 'a confirmed key with another digest is put', recorded: [['k1', confirmed(v1.digest)]], desired: [['k1', v2]], puts: ['k1'], deletes: [] },
    { name: 'an unconfirmed key (content unknown) is put', recorded: [['k1', unconfirmed]], desired: [['k1', v1]], puts: ['k1'], deletes: [] },
    { name: 'an unconfirmed key is put even when the body it was meant to hold matches', recorded: [['k1', { revision: 0, digest: v1.digest }]], desired: [['k1', v1]], puts: ['k1'], deletes: [] },
    { name: 'a recorded key no longer wanted is deleted', recorded: [['k1', confirmed(v1.digest)]], desired: [], puts: [], deletes: ['k1'] },
    { name: 'an unconfirmed key no longer wanted is deleted (it may be in KV)', recorded: [['k1', unconfirmed]], desired: [], puts: [], deletes: ['k1'] },
    {
      name: 'puts and deletes come out in key order',
      recorded: [['z', unconfirmed], ['m', confirmed('x')], ['a', unconfirmed]],
      desired: [['y', v1], ['b', v1], ['m', v1]],
      puts: ['b', 'm', 'y'],
      deletes: ['a', 'z'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = planKeyWrites(new Map(deepFreeze(tc.recorded)), new Map(tc.desired));
      expect(out.puts.map((p) => p.key)).toEqual(tc.puts);
      expect(out.deletes).toEqual(tc.deletes);
    });
  }
  it('a put carries the JSON text and digest of the wanted body', () => {
    const [put] = planKeyWrites(new Map(), new Map([['k', v1]])).puts;
    expect([put?.text, put?.digest]).toEqual(['{"v":1}', v1.digest]);
  });
});

describe('desiredViews', () => {
  const cluster = 'c1';
  // Auto-style hints: each endpoint hinted for its own zone.
  const hintedSlice = makeSlice('web-abc', [
    ep('10.0.0.1', 'zone-a', 'n-a', { forZones: ['zone-a'] }),
    ep('10.0.0.2', 'zone-b', 'n-b', { forZones: ['zone-b'] }),
    ep('10.0.0.3', 'zone-c', 'n-c', { forZones: ['zone-c'] }),
  ]);
  interface Case {
    readonly name: string;
    readonly service: Service;
    readonly slices: readonly EndpointSlice[];
    readonly nodes: readonly Node[];
    /** zone -> endpoint IPs of that zone's entry for the first slice; absent zone = no entry. */
    readonly want: Readonly<Record<string, readonly string[]>>;
  }
  const cases: Case[] = [
    {
      name: 'hinted endpoints: each zone entry holds the endpoints hinted for it; the unzoned entry holds all',
      service: autoService(),
      slices: [hintedSlice],
      nodes: threeZoneNodes(),
      want: { 'zone-a': ['10.0.0.1'], 'zone-b': ['10.0.0.2'], 'zone-c': ['10.0.0.3'], [UNZONED_VIEW]: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] },
    },
    {
      name: 'without hints every zone gets every endpoint',
      service: makeService('web'),
      slices: [makeSlice('web-abc', hintedSlice.endpoints.map((e) => ({ ...e, hints: undefined })))],
      nodes: threeZoneNodes().slice(0, 2),
      want: { 'zone-a': ['10.0.0.1', '10.0.0.2', '10.0.0.3'], 'zone-b': ['10.0.0.1', '10.0.0.2', '10.0.0.3'], [UNZONED_VIEW]: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] },
    },
    {
      name: 'no nodes: only the unzoned view',
      service: autoService(),
      slices: [hintedSlice],
      nodes: [],
      want: { [UNZONED_VIEW]: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] },
    },
    { name: 'a slice without endpoints gives no entry at all', service: autoService(), slices: [makeSlice('web-empty', [])], nodes: threeZoneNodes(), want: {} },
    {
      name: 'a headless service is never programmed, so only the unzoned view carries it',
      service: makeService('web', { clusterIP: 'None' }),
      slices: [hintedSlice],
      nodes: threeZoneNodes(),
      want: { [UNZONED_VIEW]: ['10.0.0.1', '10.0.0.2', '10.0.0.3'] },
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = desiredViews({ cluster, service: deepFreeze(tc.service), slices: deepFreeze(tc.slices), nodes: deepFreeze(tc.nodes), preferSameNodeGate: true });
      const got: Record<string, string[]> = {};
      for (const [key, value] of out) {
        const addr = parseViewKey(key);
        expect([addr.cluster, addr.namespace, addr.service, addr.slice]).toEqual([cluster, 'default', 'web', tc.slices[0]?.metadata.name]);
        got[addr.zone] = (value.body as EndpointSlice).endpoints.map((e) => e.addresses[0] ?? '');
      }
      expect(got).toEqual(tc.want);
    });
  }

  it('for every node, the slices of its zone view select what all slices select (the zoneViews guarantee, through our keys)', () => {
    const nodes = [...threeZoneNodes(), makeNode('n-none')];
    const service = autoService();
    const slices = [hintedSlice];
    const out = desiredViews({ cluster, service, slices, nodes, preferSameNodeGate: true });
    const reference = zoneViews({ services: [service], slices, nodes });
    for (const node of nodes) {
      const zone = node.metadata.labels?.['topology.kubernetes.io/zone'] ?? UNZONED_VIEW;
      const ours = [...out].filter(([k]) => parseViewKey(k).zone === zone).map(([, v]) => v.body);
      expect(ours).toEqual(viewSlicesForNode(reference, node));
    }
  });
});

describe('digestOf on random JSON values', () => {
  const gen = (rnd: () => number, depth: number): unknown => {
    const r = rnd();
    if (depth > 3 || r < 0.3) return [null, true, false, 0, -1.5, 1e21, 'a"\\\u2028', '', 'zone-a', undefined][Math.floor(rnd() * 10)];
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(rnd, depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rnd() * 5); i > 0; i--) o[['b', 'a', 'é', '10', '2', 'addresses', 'k"'][Math.floor(rnd() * 7)] as string] = gen(rnd, depth + 1);
    return o;
  };
  for (const seed of [1, 2, 3, 4, 5]) {
    // What a restart relies on: the value read back from a bucket (its text parsed) has the
    // digest recorded when the value was put.
    it(`a value read back from the text put has the digest of what was put (seed ${seed})`, () => {
      const rnd = prng(seed);
      for (let i = 0; i < 200; i++) {
        const put = desiredValue({ root: gen(rnd, 0) });
        expect(digestOf(JSON.parse(put.text))).toBe(put.digest);
      }
    });
  }
});
