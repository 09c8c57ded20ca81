import { describe, expect, it } from 'vitest';
import type { Pod, Service } from '@slicemesh/model';
import { deepFreeze, makePod, makeService } from '@slicemesh/testing';
import { isSelectorless, selectPods, serviceKey } from './selector.ts';

const pods = deepFreeze([
  makePod('a', { labels: { app: 'web', tier: 'fe' } }),
  makePod('b', { labels: { app: 'web' } }),
  makePod('c', { labels: { app: 'db' } }),
  makePod('d', { labels: { app: 'web' }, namespace: 'other' }),
  makePod('e', { labels: {} }),
]);

const cases: { name: string; service: Service; pods: readonly Pod[]; want: string[] }[] = [
  { name: 'A.1.1 matches every selector pair, in the service namespace only', service: makeService('web', { selector: { app: 'web' } }), pods, want: ['a', 'b'] },
  { name: 'A.1.1 all pairs must match', service: makeService('web', { selector: { app: 'web', tier: 'fe' } }), pods, want: ['a'] },
  { name: 'A.1.1 other namespace', service: makeService('web', { selector: { app: 'web' }, namespace: 'other' }), pods, want: ['d'] },
  { name: 'A.1.2 nil selector selects nothing', service: makeService('web', { selector: null }), pods, want: [] },
  { name: 'A.1.2 empty selector selects nothing (stored as nil upstream)', service: makeService('web', { selector: {} }), pods, want: [] },
  { name: 'A.1.1 no pods -> none', service: makeService('web'), pods: [], want: [] },
];

describe('selectPods', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(selectPods(deepFreeze(tc.service), tc.pods).map((p) => p.metadata.name)).toEqual(tc.want);
    });
  }
});

describe('isSelectorless / serviceKey', () => {
  it('A.1.2 nil and empty selectors are selectorless, a non-empty one is not', () => {
    expect(isSelectorless(makeService('s', { selector: null }))).toBe(true);
    expect(isSelectorless(makeService('s', { selector: {} }))).toBe(true);
    expect(isSelectorless(makeService('s', { selector: { a: 'b' } }))).toBe(false);
  });
  it('keys a service as namespace/name', () => {
    expect(serviceKey(makeService('web', { namespace: 'prod' }))).toBe('prod/web');
  });
});
