import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../store/selectors.ts';
import type { KubeObj, StoreEvent } from '../store/types.ts';
import { projectEvent, watchStart } from './watch-events.ts';

const pod = (app: string): KubeObj => deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', labels: { app } } });

describe('projectEvent', () => {
  const filter = { labels: parseLabelSelector('app=web') };
  const cases: readonly { name: string; event: StoreEvent; want: string | null }[] = [
    { name: 'a matching ADDED passes', event: { type: 'ADDED', kind: 'Pod', rv: 1, object: pod('web') }, want: 'ADDED' },
    { name: 'a non-matching ADDED is dropped', event: { type: 'ADDED', kind: 'Pod', rv: 1, object: pod('db') }, want: null },
    { name: 'MODIFIED into the selector arrives as ADDED', event: { type: 'MODIFIED', kind: 'Pod', rv: 2, object: pod('web'), previous: pod('db') }, want: 'ADDED' },
    { name: 'MODIFIED out of the selector arrives as DELETED', event: { type: 'MODIFIED', kind: 'Pod', rv: 2, object: pod('db'), previous: pod('web') }, want: 'DELETED' },
    { name: 'MODIFIED within the selector stays MODIFIED', event: { type: 'MODIFIED', kind: 'Pod', rv: 2, object: pod('web'), previous: pod('web') }, want: 'MODIFIED' },
    { name: 'MODIFIED outside the selector is dropped', event: { type: 'MODIFIED', kind: 'Pod', rv: 2, object: pod('db'), previous: pod('db') }, want: null },
    { name: 'a matching DELETED passes', event: { type: 'DELETED', kind: 'Pod', rv: 3, object: pod('web') }, want: 'DELETED' },
  ];
  for (const tc of cases) it(tc.name, () => expect(projectEvent(tc.event, filter)?.type ?? null).toBe(tc.want));

  it('a namespace filter drops other namespaces', () => {
    expect(projectEvent({ type: 'ADDED', kind: 'Pod', rv: 1, object: pod('web') }, { namespace: 'shop' })).toBeNull();
  });
});

describe('watchStart', () => {
  const cases: readonly [string | null, unknown][] = [
    [null, { kind: 'initialState' }],
    ['', { kind: 'initialState' }],
    ['0', { kind: 'initialState' }],
    ['42', { kind: 'after', rv: 42 }],
    ['abc', undefined],
    ['-1', undefined],
  ];
  for (const [rv, want] of cases) it(`resourceVersion ${JSON.stringify(rv)} -> ${JSON.stringify(want)}`, () => expect(watchStart(rv)).toEqual(want));
});
