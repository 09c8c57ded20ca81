// Events in the store: upstream's validation for core/v1 and events.k8s.io/v1 writes, the
// conversion between the two forms, field selectors, and the TTL that deletes them.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../time/manual-clock.ts';
import { ApiError } from './api-error.ts';
import { coreEventToEventsV1, eventsV1ToCoreEvent } from './event-codec.ts';
import { qualifiedNameProblems } from './event-strategy.ts';
import { kindInfo, VIEWS } from './kinds.ts';
import { DEFAULT_EVENT_TTL_MS, ObjectStore } from './object-store.ts';
import { matchesFields, parseFieldSelector } from './selectors.ts';
import type { KubeObj, StoreEvent } from './types.ts';

const T0 = Date.UTC(2026, 0, 1);
const EVENTS_V1 = VIEWS.find((v) => v.group === 'events.k8s.io')!;

function newStore(extra: Partial<ConstructorParameters<typeof ObjectStore>[0]> = {}): { store: ObjectStore; clock: ManualClock } {
  const clock = new ManualClock(T0);
  const store = new ObjectStore({ now: () => clock.now(), seed: 'test', timers: clock, ...extra });
  store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  return { store, clock };
}

/** An old-style event (what client-go's core recorder writes). */
const coreEvent = (name: string, extra: Record<string, unknown> = {}): KubeObj => ({
  apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'shop' },
  involvedObject: { kind: 'Service', namespace: 'shop', name: 'web', uid: 'u-1', apiVersion: 'v1' },
  reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled', type: 'Normal',
  source: { component: 'endpoint-slice-controller' }, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:00:00Z', count: 1,
  ...extra,
});

/** A new-style event as events.k8s.io/v1 clients send it. */
const v1Event = (name: string, extra: Record<string, unknown> = {}): KubeObj => ({
  apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name, namespace: 'shop' },
  regarding: { kind: 'Service', namespace: 'shop', name: 'web', uid: 'u-1', apiVersion: 'v1' },
  reason: 'TopologyAwareHintsDisabled', note: 'Insufficient number of endpoints', type: 'Warning',
  eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'slicemesh.io/hints', reportingInstance: 'hints-0', action: 'Reconcile',
  ...extra,
});

function apiError(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const createV1 = (store: ObjectStore, obj: KubeObj) => store.create('Event', eventsV1ToCoreEvent(obj), { as: EVENTS_V1 });

describe('Event validation', () => {
  const rejected: readonly { name: string; create: (s: ObjectStore) => unknown; message: string }[] = [
    {
      name: 'core: an old-style event whose object is in another namespace',
      create: (s) => s.create('Event', coreEvent('e', { involvedObject: { kind: 'Service', namespace: 'other', name: 'web' } })),
      message: 'Event "e" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    },
    {
      name: 'core: an old-style event about a cluster-scoped object outside "default"',
      create: (s) => s.create('Event', coreEvent('e', { involvedObject: { kind: 'Node', name: 'n1' } })),
      message: 'Event "e" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace',
    },
    {
      name: 'core: a new-style event (eventTime set) without reporter, instance, action or reason',
      create: (s) => s.create('Event', coreEvent('e', { eventTime: '2026-01-01T00:00:00.000000Z', reason: '' })),
      message: 'Event "e" is invalid: [reportingController: Required value, reportingController: Invalid value: "": name part must be non-empty, reportingInstance: Required value, action: Required value, reason: Required value]',
    },
    {
      name: 'core: a new-style event with a reason over 128 characters and a message over 1024',
      create: (s) => s.create('Event', coreEvent('e', { eventTime: '2026-01-01T00:00:00.000000Z', reportingComponent: 'x.io/y', reportingInstance: 'i', action: 'A', reason: 'R'.repeat(129), message: 'm'.repeat(1025) })),
      message: 'Event "e" is invalid: [reason: Invalid value: "": can have at most 128 characters, message: Invalid value: "": can have at most 1024 characters]',
    },
    {
      name: 'core: a name with a slash',
      create: (s) => s.create('Event', coreEvent('a/b')),
      message: 'Event "a/b" is invalid: metadata.name: Invalid value: "a/b": may not contain \'/\'',
    },
    {
      name: 'events.k8s.io: no eventTime, a bad type, deprecated fields set',
      create: (s) => createV1(s, v1Event('e', { eventTime: null, type: 'Info', deprecatedCount: 2, deprecatedSource: { component: 'x' } })),
      message: 'Event "e" is invalid: [eventTime: Required value, type: Invalid value: "": has invalid value: Info, count: Invalid value: "": needs to be unset, source: Invalid value: "": needs to be unset]',
    },
    {
      name: 'events.k8s.io: a series counted once, without lastObservedTime',
      create: (s) => createV1(s, v1Event('e', { series: { count: 1 } })),
      message: 'Event "e" is invalid: [series.count: Invalid value: "": should be at least 2, series.lastObservedTime: Required value]',
    },
    {
      name: 'events.k8s.io: a name that is not a DNS subdomain',
      create: (s) => createV1(s, v1Event('Web.1')),
      message: 'Event "Web.1" is invalid: metadata.name: Invalid value: "Web.1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character',
    },
  ];
  for (const tc of rejected) {
    it(`rejects ${tc.name} with a 422 in upstream's words`, () => {
      const { store } = newStore();
      const err = apiError(() => tc.create(store));
      expect([err.code, err.reason, err.message]).toEqual([422, 'Invalid', tc.message]);
    });
  }

  const accepted: readonly { name: string; create: (s: ObjectStore) => KubeObj }[] = [
    { name: 'core: an old-style event about an object in its namespace', create: (s) => s.create('Event', coreEvent('e')) },
    { name: 'core: an event about a Node in "default"', create: (s) => s.create('Event', { ...coreEvent('e', { involvedObject: { kind: 'Node', name: 'n1' } }), metadata: { name: 'e', namespace: 'default' } }) },
    { name: 'core: an event without involvedObject in "default" (upstream does not require one)', create: (s) => s.create('Event', { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e', namespace: 'default' }, reason: 'R' }) },
    { name: 'events.k8s.io: a new-style event with a series', create: (s) => createV1(s, v1Event('e', { series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } })) },
  ];
  for (const tc of accepted) {
    it(`accepts ${tc.name}`, () => {
      const { store } = newStore();
      expect(tc.create(store).metadata.resourceVersion).toBeDefined();
    });
  }

  it('events.k8s.io updates may not change what the event says; core updates may (a recorder bumps count)', () => {
    const { store } = newStore();
    const created = createV1(store, v1Event('e'));
    const changed = { ...created, message: 'something else', metadata: { ...created.metadata, labels: { seen: 'yes' } } };
    expect(apiError(() => store.update('Event', changed, { as: EVENTS_V1 })).message).toBe('Event "e" is invalid: message: Invalid value: "something else": field is immutable');
    expect(store.update('Event', { ...created, series: { count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' } }, { as: EVENTS_V1 })['series']).toEqual({ count: 2, lastObservedTime: '2026-01-01T00:01:00.000000Z' });
    const old = store.create('Event', coreEvent('old'));
    expect(store.update('Event', { ...old, count: 2, lastTimestamp: '2026-01-01T00:05:00Z' })['count']).toBe(2);
  });

  it('errors through events.k8s.io name the qualified resource', () => {
    const { store } = newStore();
    expect(apiError(() => store.delete('Event', 'shop', 'nope', { as: EVENTS_V1 })).message).toBe('events.events.k8s.io "nope" not found');
    expect(apiError(() => store.delete('Event', 'shop', 'nope')).message).toBe('events "nope" not found');
  });

  it('events carry no generation, and writes do not add one', () => {
    const { store } = newStore();
    const created = store.create('Event', coreEvent('e'));
    expect(created.metadata.generation).toBeUndefined();
    expect(store.update('Event', { ...created, count: 5 }).metadata.generation).toBeUndefined();
  });

  const qualified: readonly [string, number][] = [['slicemesh.io/hints', 0], ['kubelet', 0], ['', 1], ['a/b/c', 1], ['-bad', 1], ['Bad_Prefix/x', 1], ['x'.repeat(64), 1]];
  for (const [value, problems] of qualified) {
    it(`reportingController ${JSON.stringify(value.length > 20 ? `${value.slice(0, 8)}…` : value)} has ${problems} qualified-name problem(s)`, () => {
      expect(qualifiedNameProblems(value)).toHaveLength(problems);
    });
  }
});

describe('events.k8s.io/v1 conversion', () => {
  it('renames the fields that differ and emits Go zero values', () => {
    const { store } = newStore();
    const stored = createV1(store, v1Event('e'));
    expect(stored).toMatchObject({ apiVersion: 'v1', involvedObject: { name: 'web' }, message: 'Insufficient number of endpoints', reportingComponent: 'slicemesh.io/hints', source: {}, firstTimestamp: null, lastTimestamp: null });
    const wire = coreEventToEventsV1(stored);
    expect(wire).toMatchObject({ apiVersion: 'events.k8s.io/v1', regarding: { name: 'web' }, note: 'Insufficient number of endpoints', reportingController: 'slicemesh.io/hints', deprecatedSource: {}, deprecatedFirstTimestamp: null });
    for (const core of ['involvedObject', 'message', 'reportingComponent', 'source', 'firstTimestamp', 'count']) expect(wire).not.toHaveProperty(core);
    expect(wire).not.toHaveProperty('deprecatedCount');
  });

  it('an old-style event reads back through events.k8s.io with its deprecated fields', () => {
    const { store } = newStore();
    const wire = coreEventToEventsV1(store.create('Event', coreEvent('e', { count: 3 })));
    expect(wire).toMatchObject({ eventTime: null, deprecatedCount: 3, deprecatedSource: { component: 'endpoint-slice-controller' }, deprecatedFirstTimestamp: '2026-01-01T00:00:00Z' });
    expect(wire).not.toHaveProperty('reportingController');
  });

  it('a round trip through events.k8s.io changes nothing (an unchanged PUT is a no-op)', () => {
    const { store } = newStore();
    const stored = createV1(store, v1Event('e'));
    expect(store.update('Event', eventsV1ToCoreEvent(coreEventToEventsV1(stored)), { as: EVENTS_V1 })).toBe(stored);
  });

  it('core field names in an events.k8s.io body are dropped, as decoding would', () => {
    expect(eventsV1ToCoreEvent({ ...v1Event('e'), message: 'core name', note: 'wire name' })['message']).toBe('wire name');
  });
});

describe('Event field selectors', () => {
  const { store } = newStore();
  store.create('Event', coreEvent('old'));
  createV1(store, v1Event('new'));
  const select = (text: string, info = kindInfo('Event')) => store.list('Event').filter((e) => matchesFields(parseFieldSelector(text, info), e)).map((e) => e.metadata.name);
  const cases: readonly [string, string, string[], boolean?][] = [
    ['what kubectl describe sends', 'involvedObject.name=web,involvedObject.namespace=shop,involvedObject.kind=Service,involvedObject.uid=u-1', ['new', 'old']],
    ['type', 'type=Warning', ['new']],
    ['reason', 'reason!=TopologyAwareHintsDisabled', ['old']],
    ['source: the old source component', 'source=endpoint-slice-controller', ['old']],
    ['source: else the reporting controller', 'source=slicemesh.io/hints', ['new']],
    ['reportingComponent', 'reportingComponent=slicemesh.io/hints', ['new']],
    ['events.k8s.io: regarding.* for involvedObject.*', 'regarding.name=web,regarding.kind=Service', ['new', 'old'], true],
    ['events.k8s.io: reportingController', 'reportingController=slicemesh.io/hints', ['new'], true],
  ];
  for (const [name, text, want, v1] of cases) {
    it(`${name}: ${text}`, () => expect(select(text, v1 ? EVENTS_V1 : kindInfo('Event'))).toEqual(want));
  }

  it('events.k8s.io does not accept the core names, nor core the events.k8s.io ones', () => {
    expect(() => select('involvedObject.name=web', EVENTS_V1)).toThrow('field label not supported: involvedObject.name');
    expect(() => select('regarding.name=web')).toThrow('field label not supported: regarding.name');
  });
});

describe('Event TTL', () => {
  it('defaults to one hour, as upstream --event-ttl', () => {
    expect(DEFAULT_EVENT_TTL_MS).toBe(3_600_000);
    const { store, clock } = newStore();
    store.create('Event', coreEvent('e'));
    clock.advance(DEFAULT_EVENT_TTL_MS - 1);
    expect(store.get('Event', 'shop', 'e')).toBeDefined();
    clock.advance(1);
    expect(store.get('Event', 'shop', 'e')).toBeUndefined();
  });

  it('counts from the last write, and expiry is a DELETED event with a new resourceVersion', () => {
    const { store, clock } = newStore({ ttlMs: { Event: 60_000 } });
    const created = store.create('Event', coreEvent('e'));
    const seen: StoreEvent[] = [];
    store.watch('Event', { onEvent: (e) => seen.push(e) });
    clock.advance(50_000);
    store.update('Event', { ...created, count: 2 });
    clock.advance(50_000);
    expect(store.get('Event', 'shop', 'e')?.['count']).toBe(2);
    clock.advance(10_000);
    expect(seen.map((e) => [e.type, e.object.metadata.resourceVersion])).toEqual([['MODIFIED', '7'], ['DELETED', '8']]);
    expect(store.resourceVersion).toBe(8);
  });

  it('a deleted and re-created event gets a fresh TTL', () => {
    const { store, clock } = newStore({ ttlMs: { Event: 60_000 } });
    store.create('Event', coreEvent('e'));
    clock.advance(30_000);
    store.delete('Event', 'shop', 'e');
    store.create('Event', coreEvent('e'));
    clock.advance(30_000);
    expect(store.get('Event', 'shop', 'e')).toBeDefined();
    clock.advance(30_000);
    expect(store.get('Event', 'shop', 'e')).toBeUndefined();
  });

  it('0 keeps events forever; other kinds never expire', () => {
    const { store, clock } = newStore({ ttlMs: { Event: 0 } });
    store.create('Event', coreEvent('e'));
    store.create('Lease', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'shop' } });
    clock.advance(10 * DEFAULT_EVENT_TTL_MS);
    expect([store.count('Event'), store.count('Lease'), clock.pending()]).toEqual([1, 1, 0]);
  });

  it('without timers, expireDue() applies the TTL on demand', () => {
    let now = T0;
    const store = new ObjectStore({ now: () => now, ttlMs: { Event: 1000 } });
    store.create('Event', { ...coreEvent('e'), metadata: { name: 'e', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'n1' } });
    now += 999;
    expect(store.expireDue()).toBe(0);
    now += 1;
    expect([store.expireDue(), store.count('Event')]).toEqual([1, 0]);
  });

  it('stop() cancels the pending expiry timer', () => {
    const { store, clock } = newStore();
    store.create('Event', coreEvent('e'));
    expect(clock.pending()).toBe(1);
    store.stop();
    expect(clock.pending()).toBe(0);
  });
});
