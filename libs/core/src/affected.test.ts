import { describe, expect, it } from 'vitest';
import type { Node, Pod, Service } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import { endpointsConcernService, nodeChangeRelevant, parseServiceKeyString, servicesForPodChange, servicesSelectingPods, serviceKeyString } from './affected.ts';

const atVersion = <T extends Pod | Node>(obj: T, rv: number): T => ({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } });

const web = makeService('web', { selector: { app: 'web' } });
const api = makeService('api', { selector: { app: 'api' } });
const all = makeService('all', { selector: { tier: 'fe' } });
const bare = makeService('bare', { selector: null });
const other = makeService('web2', { namespace: 'other', selector: { app: 'web' } });
const services = deepFreeze([all, api, bare, web, other]);

const pod = (labels: Record<string, string>, rv: number, o: { ready?: boolean } = {}): Pod =>
  atVersion(makePod('p1', { labels, ...(o.ready !== undefined ? { ready: o.ready } : {}) }), rv);

interface PodCase {
  readonly name: string;
  readonly before?: Pod;
  readonly after?: Pod;
  readonly want: readonly string[];
}

const podCases: readonly PodCase[] = [
  { name: 'A.12.2 add: the Services whose selector matches, same namespace only', after: pod({ app: 'web', tier: 'fe' }, 1), want: ['default/all', 'default/web'] },
  { name: 'A.12.2 delete: the Services that matched the old labels', before: pod({ app: 'api' }, 1), want: ['default/api'] },
  { name: 'A.12.2 update with nothing endpoint-relevant changed: none', before: pod({ app: 'web' }, 1), after: pod({ app: 'web' }, 2), want: [] },
  { name: 'A.12.2 update with the same resourceVersion (resync): none', before: pod({ app: 'web' }, 1, { ready: false }), after: pod({ app: 'web' }, 1), want: [] },
  { name: 'A.12.2 readiness change: the current memberships', before: pod({ app: 'web' }, 1, { ready: false }), after: pod({ app: 'web' }, 2), want: ['default/web'] },
  { name: 'A.12.2 only labels changed: the symmetric difference', before: pod({ app: 'web', tier: 'fe' }, 1), after: pod({ app: 'api', tier: 'fe' }, 2), want: ['default/api', 'default/web'] },
  {
    name: 'A.12.2 labels and readiness changed: the union',
    before: pod({ app: 'web', tier: 'fe' }, 1, { ready: false }),
    after: pod({ app: 'api', tier: 'fe' }, 2),
    want: ['default/all', 'default/api', 'default/web'],
  },
  { name: 'selectorless Services never match', after: pod({}, 1), want: [] },
  { name: 'neither side: none', want: [] },
];

describe('servicesForPodChange', () => {
  for (const tc of podCases) {
    it(tc.name, () => {
      expect(servicesForPodChange(services, tc.before && deepFreeze(tc.before), tc.after && deepFreeze(tc.after))).toEqual(tc.want);
    });
  }
});

const zoned = (zone: string | undefined, cpu = '4'): Node => deepFreeze(makeNode('n1', { ...(zone !== undefined ? { zone } : {}), cpu }));

const nodeCases: readonly { name: string; before?: Node; after?: Node; want: boolean }[] = [
  { name: 'a node appearing can resolve pods skipped as on an unknown node (A.3.4)', after: zoned('a'), want: true },
  { name: 'a node disappearing skips its pods', before: zoned('a'), want: true },
  { name: 'a zone label change changes endpoint zones (A.4)', before: zoned('a'), after: zoned('b'), want: true },
  { name: 'a zone label added', before: zoned(undefined), after: zoned('a'), want: true },
  { name: 'a capacity change only matters to hints', before: zoned('a', '4'), after: zoned('a', '8'), want: false },
  { name: 'nothing before or after', want: false },
];

describe('nodeChangeRelevant', () => {
  for (const tc of nodeCases) it(tc.name, () => expect(nodeChangeRelevant(tc.before, tc.after)).toBe(tc.want));
});

describe('servicesSelectingPods', () => {
  it('unions the memberships of every pod, sorted and without duplicates', () => {
    const pods = deepFreeze([makePod('a', { labels: { app: 'web' } }), makePod('b', { labels: { app: 'api', tier: 'fe' } }), makePod('c', { labels: { app: 'web' } })]);
    expect(servicesSelectingPods(services, pods)).toEqual(['default/all', 'default/api', 'default/web']);
  });
  it('returns [] for no pods', () => expect(servicesSelectingPods(services, [])).toEqual([]));
});

describe('endpointsConcernService', () => {
  const cases: readonly { name: string; service?: Service; want: boolean }[] = [
    { name: 'B.5 a selectorless Service is mirrored: mark it', service: bare, want: true },
    { name: 'B.5 a Service with a selector is never mirrored: skip', service: web, want: false },
    { name: 'B.5 no Service: nothing to mirror until it appears', want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(endpointsConcernService(tc.service)).toBe(tc.want));
});

describe('service key strings', () => {
  const cases = [
    { namespace: 'default', name: 'web' },
    { namespace: 'a-b', name: 'x-1' },
  ];
  for (const tc of cases) {
    it(`round-trips ${tc.namespace}/${tc.name}`, () => expect(parseServiceKeyString(serviceKeyString(tc.namespace, tc.name))).toEqual(tc));
  }
});
