import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { EndpointSliceTracker, StaleInformerCacheError, assertSlicesFresh } from './tracker.ts';

const svc = deepFreeze(makeService('web'));
const s = (name: string, generation: number, o: { service?: string; managedBy?: string } = {}): EndpointSlice => deepFreeze(makeSlice(name, [], { generation, ...o }));

describe('A.11.2 stale views', () => {
  const cases: { name: string; record: (t: EndpointSliceTracker) => void; listed: EndpointSlice[]; want: boolean }[] = [
    { name: 'an untracked Service is never stale', record: () => {}, listed: [s('a', 1)], want: false },
    { name: 'listed generations equal to what we wrote -> fresh', record: (t) => t.update(s('a', 2)), listed: [s('a', 2)], want: false },
    { name: 'a newer listed generation is fine', record: (t) => t.update(s('a', 2)), listed: [s('a', 3)], want: false },
    { name: 'an older listed generation than we wrote -> stale', record: (t) => t.update(s('a', 2)), listed: [s('a', 1)], want: true },
    { name: 'a slice we deleted is still listed -> stale', record: (t) => t.expectDeletion(s('a', 1)), listed: [s('a', 1)], want: true },
    { name: 'a slice we deleted is gone -> fresh', record: (t) => t.expectDeletion(s('a', 1)), listed: [], want: false },
    { name: 'a slice we wrote is missing -> stale', record: (t) => t.update(s('a', 1)), listed: [], want: true },
    { name: 'untracked extra slices do not matter', record: (t) => t.update(s('a', 1)), listed: [s('a', 1), s('b', 1)], want: false },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const t = new EndpointSliceTracker();
      tc.record(t);
      expect(t.staleSlices(svc, tc.listed)).toBe(tc.want);
      if (tc.want) expect(() => assertSlicesFresh(t, svc, tc.listed)).toThrow(StaleInformerCacheError);
      else expect(() => assertSlicesFresh(t, svc, tc.listed)).not.toThrow();
    });
  }
});

describe('A.11.1 recording', () => {
  it('has/shouldSync follow the recorded generation', () => {
    const t = new EndpointSliceTracker();
    expect(t.has(s('a', 1))).toBe(false);
    expect(t.shouldSync(s('a', 1))).toBe(true);
    t.update(s('a', 2));
    expect(t.has(s('a', 2))).toBe(true);
    expect(t.shouldSync(s('a', 2))).toBe(false);
    expect(t.shouldSync(s('a', 1))).toBe(false);
    expect(t.shouldSync(s('a', 3))).toBe(true);
  });
  it('slices without a service-name label are not tracked', () => {
    const t = new EndpointSliceTracker();
    const bare = deepFreeze({ ...s('a', 1), metadata: { ...s('a', 1).metadata, labels: {} } });
    t.update(bare);
    expect(t.has(bare)).toBe(false);
  });
});

describe('A.11.3 slice add/update events', () => {
  it('add: requeue a managed slice that is new or newer than tracked', () => {
    const t = new EndpointSliceTracker();
    expect(t.servicesForSliceAdd(s('a', 1))).toEqual(['default/web']);
    t.update(s('a', 1));
    expect(t.servicesForSliceAdd(s('a', 1))).toEqual([]);
    expect(t.servicesForSliceAdd(s('a', 2))).toEqual(['default/web']);
    expect(t.servicesForSliceAdd(s('m', 1, { managedBy: MANAGED_BY_MIRRORING }))).toEqual([]);
  });
  const updates: { name: string; prev: EndpointSlice; cur: EndpointSlice; tracked?: EndpointSlice; want: string[] }[] = [
    { name: 'our own write echoed back -> nothing', prev: s('a', 1), cur: s('a', 2), tracked: s('a', 2), want: [] },
    { name: 'someone else changed our slice -> requeue', prev: s('a', 2), cur: s('a', 3), tracked: s('a', 2), want: ['default/web'] },
    { name: 'managed-by changed to another manager -> requeue', prev: s('a', 1), cur: s('a', 1, { managedBy: MANAGED_BY_MIRRORING }), tracked: s('a', 1), want: ['default/web'] },
    { name: 'managed-by changed to us -> requeue', prev: s('a', 1, { managedBy: 'x' }), cur: s('a', 1), tracked: s('a', 1), want: ['default/web'] },
    { name: 'service-name changed -> requeue both Services', prev: s('a', 1), cur: s('a', 1, { service: 'api' }), tracked: s('a', 1), want: ['default/api', 'default/web'] },
    { name: 'a slice of another manager changing -> nothing', prev: s('a', 1, { managedBy: 'x' }), cur: s('a', 2, { managedBy: 'x' }), want: [] },
  ];
  for (const tc of updates) {
    it(`update: ${tc.name}`, () => {
      const t = new EndpointSliceTracker();
      if (tc.tracked) t.update(tc.tracked);
      expect(t.servicesForSliceUpdate(tc.prev, tc.cur)).toEqual(tc.want);
    });
  }
});

describe('A.11.4 slice delete events', () => {
  const cases: { name: string; record: (t: EndpointSliceTracker) => void; slice: EndpointSlice; want: string[]; tracked: boolean }[] = [
    { name: 'an unexpected deletion of a tracked slice requeues', record: (t) => t.update(s('a', 1)), slice: s('a', 1), want: ['default/web'], tracked: false },
    { name: 'an expected deletion does not requeue and is forgotten', record: (t) => t.expectDeletion(s('a', 1)), slice: s('a', 1), want: [], tracked: false },
    { name: 'an untracked slice does not requeue', record: () => {}, slice: s('a', 1), want: [], tracked: false },
    { name: 'a slice of another manager does not requeue and stays as it was', record: (t) => t.update(s('a', 1)), slice: s('a', 1, { managedBy: 'x' }), want: [], tracked: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const t = new EndpointSliceTracker();
      tc.record(t);
      expect(t.servicesForSliceDelete(tc.slice)).toEqual(tc.want);
      expect(t.has(s('a', 1))).toBe(tc.tracked);
    });
  }
  it('handleDeletion: true when expected or unknown, false when we wrote it', () => {
    const t = new EndpointSliceTracker();
    expect(t.handleDeletion(s('x', 1))).toBe(true);
    t.update(s('a', 1));
    expect(t.handleDeletion(s('a', 1))).toBe(false);
    t.expectDeletion(s('b', 1));
    expect(t.handleDeletion(s('b', 1))).toBe(true);
  });
});

describe('A.11.5 deleting a Service', () => {
  it('clears its entry: no longer stale, nothing tracked', () => {
    const t = new EndpointSliceTracker();
    t.update(s('a', 2));
    expect(t.staleSlices(svc, [])).toBe(true);
    t.deleteService('default', 'web');
    expect(t.staleSlices(svc, [])).toBe(false);
    expect(t.has(s('a', 2))).toBe(false);
  });
  it('a custom managed-by value is honoured', () => {
    const t = new EndpointSliceTracker('custom');
    const mine = deepFreeze(makeSlice('a', [], { managedBy: 'custom' }));
    expect(t.managedByUs(mine)).toBe(true);
    expect(mine.metadata.labels?.[LABEL_MANAGED_BY]).toBe('custom');
    expect(mine.metadata.labels?.[LABEL_SERVICE_NAME]).toBe('web');
  });
});
