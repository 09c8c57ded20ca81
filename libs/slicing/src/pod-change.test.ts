import { describe, expect, it } from 'vitest';
import type { Pod, Service } from '@slicemesh/model';
import { deepFreeze, makePod, makeService } from '@slicemesh/testing';
import { podChangeRelevant, podServiceMemberships, servicesToRequeueForPodUpdate } from './pod-change.ts';

function withRV(p: Pod, rv: string): Pod {
  return deepFreeze({ ...p, metadata: { ...p.metadata, resourceVersion: rv } });
}
const base = withRV(makePod('p', { labels: { app: 'web' } }), '1');

describe('podChangeRelevant (A.12.2)', () => {
  const cases: { name: string; next: Pod; want: boolean }[] = [
    { name: 'same resourceVersion (resync) -> ignored', next: withRV(makePod('p', { labels: { app: 'other' } }), '1'), want: false },
    { name: 'new resourceVersion, nothing relevant (phase only) -> ignored', next: withRV(makePod('p', { labels: { app: 'web' }, phase: 'Pending' }), '2'), want: false },
    { name: 'labels changed -> relevant', next: withRV(makePod('p', { labels: { app: 'db' } }), '2'), want: true },
    { name: 'hostname changed -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, hostname: 'h' }), '2'), want: true },
    { name: 'subdomain changed -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, subdomain: 's' }), '2'), want: true },
    { name: 'deletionTimestamp set -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, terminating: true }), '2'), want: true },
    { name: 'readiness changed -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, ready: false }), '2'), want: true },
    { name: 'podIPs changed -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, ips: ['10.9.9.9'] }), '2'), want: true },
    { name: 'a second podIP -> relevant', next: withRV(makePod('p', { labels: { app: 'web' }, ips: ['10.0.0.1', 'fd00::1'] }), '2'), want: true },
    { name: 'nodeName changed only (immutable upstream) -> ignored', next: withRV(makePod('p', { labels: { app: 'web' }, nodeName: 'node-9' }), '2'), want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(podChangeRelevant(base, tc.next)).toBe(tc.want);
    });
  }
});

const services: Service[] = deepFreeze([
  makeService('web', { selector: { app: 'web' } }),
  makeService('all', { selector: { tier: 'x' } }),
  makeService('db', { selector: { app: 'db' } }),
  makeService('none', { selector: null }),
  makeService('elsewhere', { selector: { app: 'web' }, namespace: 'other' }),
]);

describe('servicesToRequeueForPodUpdate (A.12.2)', () => {
  const cases: { name: string; old: Pod; next: Pod; want: string[] }[] = [
    { name: 'irrelevant update -> none', old: base, next: withRV(makePod('p', { labels: { app: 'web' }, phase: 'Pending' }), '2'), want: [] },
    { name: 'pod change only -> the current memberships', old: base, next: withRV(makePod('p', { labels: { app: 'web' }, ready: false }), '2'), want: ['default/web'] },
    {
      name: 'labels only -> symmetric difference of old and new memberships',
      old: withRV(makePod('p', { labels: { app: 'web', tier: 'x' } }), '1'),
      next: withRV(makePod('p', { labels: { app: 'db', tier: 'x' } }), '2'),
      want: ['default/db', 'default/web'],
    },
    {
      name: 'labels only, membership unchanged -> none',
      old: withRV(makePod('p', { labels: { app: 'web', extra: '1' } }), '1'),
      next: withRV(makePod('p', { labels: { app: 'web', extra: '2' } }), '2'),
      want: [],
    },
    {
      name: 'hostname change counts as a label change (symmetric difference; same membership -> none)',
      old: base,
      next: withRV(makePod('p', { labels: { app: 'web' }, hostname: 'h' }), '2'),
      want: [],
    },
    {
      name: 'labels and something else -> union',
      old: withRV(makePod('p', { labels: { app: 'web', tier: 'x' } }), '1'),
      next: withRV(makePod('p', { labels: { app: 'db', tier: 'x' }, ready: false }), '2'),
      want: ['default/all', 'default/db', 'default/web'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(servicesToRequeueForPodUpdate(services, tc.old, tc.next)).toEqual(tc.want);
    });
  }
});

describe('podServiceMemberships', () => {
  it('A.12.2 same namespace, selector matches, nil selectors never match', () => {
    expect(podServiceMemberships(services, deepFreeze(makePod('p', { labels: { app: 'web', tier: 'x' } })))).toEqual(['default/all', 'default/web']);
    expect(podServiceMemberships(services, deepFreeze(makePod('p', { labels: {} })))).toEqual([]);
  });
});
