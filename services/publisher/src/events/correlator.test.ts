import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import type { ObservedEvent, RecorderOptions } from './correlator.ts';
import { EventCorrelator, RECORDER_DEFAULTS } from './correlator.ts';
import { Lru } from './lru.ts';

const T0 = Date.parse('2026-11-26T22:00:00Z');
const MIN = 60_000;

const web = { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', uid: 'u-web' };
const api = { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'api', uid: 'u-api' };
const hints = (message: string, o = web): ObservedEvent => ({ component: 'endpoint-slice-controller', object: o, type: 'Warning', reason: 'TopologyAwareHintsDisabled', message });
const enabled: ObservedEvent = { component: 'endpoint-slice-controller', object: web, type: 'Normal', reason: 'TopologyAwareHintsEnabled', message: 'Topology Aware Hints has been enabled, addressType: IPv4' };
const insufficient = hints('Insufficient number of endpoints, addressType: IPv4');

/** `n` copies of `e`, `everyMs` apart from `at`. */
const times = (n: number, e: ObservedEvent, at = T0, everyMs = 0): [number, ObservedEvent][] => Array.from({ length: n }, (_, i) => [at + i * everyMs, e]);

/** What each event became, as `create <name> <count>`, `patch <name> <count>` or `drop`. */
function run(events: readonly [number, ObservedEvent][], opts: Partial<RecorderOptions> = {}): string[] {
  const c = new EventCorrelator(opts);
  return events.map(([t, e]) => {
    const r = c.correlate(e, t);
    return r.action === 'drop' ? 'drop' : `${r.action} ${r.event.name} ${r.event.count}${r.combined ? ' combined' : ''}`;
  });
}

const hex = (ms: number, plus = 0): string => (BigInt(ms) * 1_000_000n + BigInt(plus)).toString(16);
const tally = (out: readonly string[]): Record<string, number> => out.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s.split(' ')[0] as string]: (acc[s.split(' ')[0] as string] ?? 0) + 1 }), {});

interface Case {
  readonly name: string;
  readonly events: readonly [number, ObservedEvent][];
  readonly opts?: Partial<RecorderOptions>;
  /** The whole outcome list, or only selected entries by index. */
  readonly want?: readonly string[];
  readonly at?: Readonly<Record<number, string>>;
  readonly counts?: Readonly<Record<string, number>>;
}

const cases: readonly Case[] = deepFreeze<readonly Case[]>([
  {
    name: 'A.13.3 the first event creates an Event named <object name>.<hex nanoseconds> with count 1',
    events: [[T0, insufficient]],
    want: [`create web.${hex(T0)} 1`],
  },
  {
    name: 'A.13.3 an identical event patches that Event: same name, one more in count',
    events: [[T0, insufficient], [T0 + 1000, insufficient], [T0 + 2000, insufficient]],
    want: [`create web.${hex(T0)} 1`, `patch web.${hex(T0)} 2`, `patch web.${hex(T0)} 3`],
  },
  {
    name: 'A.13.3 events in the same millisecond still get distinct names',
    events: [[T0, insufficient], [T0, enabled]],
    want: [`create web.${hex(T0)} 1`, `create web.${hex(T0, 1)} 1`],
  },
  {
    name: 'A.13.1 a source may send 25 events about an object at once; the rest are dropped',
    events: times(30, insufficient),
    counts: { create: 1, patch: 24, drop: 5 },
    at: { 24: `patch web.${hex(T0)} 25`, 25: 'drop' },
  },
  {
    name: 'A.13.1 after the burst one event passes per 5 minutes, and its patch carries every dropped occurrence',
    events: [...times(30, insufficient), [T0 + 5 * MIN - 1000, insufficient], [T0 + 5 * MIN, insufficient], [T0 + 5 * MIN + 1000, insufficient]],
    at: { 30: 'drop', 31: `patch web.${hex(T0)} 32`, 32: 'drop' },
  },
  {
    name: 'A.13.1 the bucket is per source and object, whatever the reason: a flapping decision shares one budget',
    events: [...times(25, insufficient), [T0, enabled]],
    at: { 24: `patch web.${hex(T0)} 25`, 25: 'drop' },
  },
  {
    name: 'A.13.1 another object has its own bucket',
    events: [...times(25, insufficient), [T0, hints('Insufficient number of endpoints, addressType: IPv4', api)]],
    at: { 25: `create api.${hex(T0, 1)} 1` },
  },
  {
    name: 'A.13.1 a flapping decision recorded 100 times costs 25 writes, on two Events (enabled and disabled)',
    events: Array.from({ length: 100 }, (_, i): [number, ObservedEvent] => [T0 + i * 1000, i % 2 === 0 ? insufficient : enabled]),
    counts: { create: 2, patch: 23, drop: 75 },
  },
  {
    name: 'A.13.2 similar events with 10 distinct messages within 10 minutes: the 10th and later are one combined Event',
    events: Array.from({ length: 12 }, (_, i): [number, ObservedEvent] => [T0 + i * 1000, hints(`message ${i + 1}`)]),
    at: { 8: `create web.${hex(T0 + 8000)} 1`, 9: `create web.${hex(T0 + 9000)} 1 combined`, 10: `patch web.${hex(T0 + 9000)} 2 combined`, 11: `patch web.${hex(T0 + 9000)} 3 combined` },
  },
  {
    name: 'A.13.2 after combining, a message still remembered is recorded as itself again',
    events: [...Array.from({ length: 10 }, (_, i): [number, ObservedEvent] => [T0 + i * 1000, hints(`message ${i + 1}`)]), [T0 + 10_000, hints('message 5')]],
    at: { 10: `patch web.${hex(T0 + 4000)} 2` },
  },
  {
    name: 'A.13.2 similar events more than 10 minutes apart are never combined',
    events: Array.from({ length: 12 }, (_, i): [number, ObservedEvent] => [T0 + i * (10 * MIN + 1000), hints(`message ${i + 1}`)]),
    counts: { create: 12 },
  },
  {
    name: 'A.13 the caches forget the least recently used entry (here 2 entries): a forgotten event is created again',
    events: [[T0, hints('a')], [T0, hints('b')], [T0, hints('c')], [T0, hints('a')], [T0, hints('c')]],
    opts: { cacheSize: 2 },
    want: [`create web.${hex(T0)} 1`, `create web.${hex(T0, 1)} 1`, `create web.${hex(T0, 2)} 1`, `create web.${hex(T0, 3)} 1`, `patch web.${hex(T0, 2)} 2`],
  },
]);

describe('EventCorrelator (client-go recorder semantics, fake clock)', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const out = run(tc.events, tc.opts);
      if (tc.want !== undefined) expect(out).toEqual(tc.want);
      for (const [i, s] of Object.entries(tc.at ?? {})) expect(out[Number(i)], `event ${i}`).toBe(s);
      if (tc.counts !== undefined) expect(tally(out)).toEqual(tc.counts);
    });
  }

  it('A.13 defaults are client-go\'s: LRU 4096, burst 25 refilled 1 per 300 s, 10 messages in 600 s', () => {
    expect(RECORDER_DEFAULTS).toEqual({ cacheSize: 4096, spamBurst: 25, spamQps: 1 / 300, aggregateMaxEvents: 10, aggregateIntervalMs: 600_000 });
  });

  it('A.13.2 the combined Event carries the prefixed message and first/last times', () => {
    const c = new EventCorrelator();
    for (let i = 1; i <= 9; i++) c.correlate(hints(`m${i}`), T0 + i);
    const r = c.correlate(hints('m10'), T0 + 10);
    const r2 = c.correlate(hints('m11'), T0 + 20);
    expect(r).toMatchObject({ action: 'create', combined: true, event: { message: '(combined from similar events): m10', count: 1, firstMs: T0 + 10, lastMs: T0 + 10 } });
    expect(r2).toMatchObject({ action: 'patch', event: { message: '(combined from similar events): m11', count: 2, firstMs: T0 + 10, lastMs: T0 + 20 } });
  });

  it('A.13.3 an Event about a cluster-scoped object lives in namespace default', () => {
    const r = new EventCorrelator().correlate({ ...insufficient, object: { kind: 'Node', apiVersion: 'v1', namespace: '', name: 'n1' } }, T0);
    expect(r).toMatchObject({ action: 'create', event: { namespace: 'default', name: `n1.${hex(T0)}` } });
  });
});

describe('Lru', () => {
  it('evicts the least recently used key; get refreshes a key', () => {
    const l = new Lru<string, number>(2);
    l.set('a', 1);
    l.set('b', 2);
    expect(l.get('a')).toBe(1);
    l.set('c', 3);
    expect([l.get('a'), l.get('b'), l.get('c'), l.size]).toEqual([1, undefined, 3, 2]);
  });
});
