import { describe, expect, it } from 'vitest';
import type { CoreEventApi, KubeJson } from '@slicemesh/kube';
import { KubeWriteError } from '@slicemesh/kube';
import { FakeClock } from '@slicemesh/runtime';
import type { Correlation, RecordedEvent } from './correlator.ts';
import { eventObject, eventPatch, kubeTime } from './event-body.ts';
import type { RecordOutcome } from './record-event.ts';
import { recordEvent } from './record-event.ts';

const T0 = Date.parse('2026-11-26T22:00:00.750Z');
const ev: RecordedEvent = {
  namespace: 'shop', name: 'web.1872', type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints, addressType: IPv4',
  involvedObject: { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', uid: 'u1' }, component: 'endpoint-slice-controller', count: 3, firstMs: T0, lastMs: T0 + 61_000,
};
type Answer = 'ok' | 'gone' | number;

/** A fake API answering each call from a script (then 'ok'); records the calls. */
function scripted(answers: Answer[]): CoreEventApi & { calls: string[] } {
  const calls: string[] = [];
  const next = (verb: 'create' | 'patch'): Answer => {
    const a = answers.shift() ?? 'ok';
    calls.push(`${verb} ${typeof a === 'number' ? a : a}`);
    if (typeof a === 'number') throw new KubeWriteError(verb, '/api/v1/namespaces/shop/events', a, a === 409 ? 'AlreadyExists' : '', 'scripted', a === 429 ? 2000 : undefined);
    return a;
  };
  return {
    calls,
    create: async (_ns: string, e: KubeJson) => (next('create'), e),
    patch: async (_ns: string, _name: string, p: KubeJson) => (next('patch') === 'gone' ? undefined : p),
  };
}

interface Case {
  readonly name: string;
  readonly action: 'create' | 'patch';
  readonly answers: Answer[];
  readonly outcome: RecordOutcome;
  readonly calls: readonly string[];
  /** Time the retries waited in all, ms (0 when none). */
  readonly waited?: number;
}

const cases: readonly Case[] = [
  { name: 'a new Event is created', action: 'create', answers: ['ok'], outcome: 'created', calls: ['create ok'] },
  { name: 'a repeat is a patch', action: 'patch', answers: ['ok'], outcome: 'patched', calls: ['patch ok'] },
  { name: 'A.13.4 a patch of an Event that expired creates it again', action: 'patch', answers: ['gone', 'ok'], outcome: 'recreated', calls: ['patch gone', 'create ok'] },
  { name: 'A.13.4 503 and no answer are retried with backoff', action: 'create', answers: [503, 0, 'ok'], outcome: 'created', calls: ['create 503', 'create 0', 'create ok'], waited: 20 },
  { name: 'A.13.4 429 waits for Retry-After', action: 'patch', answers: [429, 'ok'], outcome: 'patched', calls: ['patch 429', 'patch ok'], waited: 2000 },
  { name: 'A.13.4 a name taken is refused at once, not retried', action: 'create', answers: [409], outcome: 'refused', calls: ['create 409'] },
  { name: 'A.13.4 422 is refused at once', action: 'create', answers: [422], outcome: 'refused', calls: ['create 422'] },
  { name: 'A.13.4 after 12 tries without success the event is dropped', action: 'create', answers: Array<Answer>(12).fill(500), outcome: 'gave-up', calls: Array<string>(12).fill('create 500'), waited: 110 },
];

describe('recordEvent', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const api = scripted([...tc.answers]);
      const c: Exclude<Correlation, { action: 'drop' }> = { action: tc.action, event: ev, combined: false };
      const waits: number[] = [];
      const p = recordEvent({ api, clock, retryDelayMs: () => 10, onRetry: (e) => waits.push(e.waitMs) }, c);
      for (let i = 0; i < 40; i++) await clock.advanceAsync(100);
      const r = await p;
      expect(r.outcome).toBe(tc.outcome);
      expect(api.calls).toEqual(tc.calls);
      expect(waits.reduce((a, b) => a + b, 0)).toBe(tc.waited ?? 0);
    });
  }
});

describe('event bodies', () => {
  it('A.13.3 a new Event carries count, first and last timestamps in whole seconds, source and reporting component', () => {
    expect(eventObject(ev)).toEqual({
      apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1872', namespace: 'shop' },
      involvedObject: { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', uid: 'u1' },
      type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints, addressType: IPv4',
      source: { component: 'endpoint-slice-controller' }, reportingComponent: 'endpoint-slice-controller', reportingInstance: '',
      count: 3, firstTimestamp: '2026-11-26T22:00:00Z', lastTimestamp: '2026-11-26T22:01:01Z',
    });
  });

  it('A.13.3 a repeat patches count, lastTimestamp and message only', () => {
    expect(eventPatch(ev)).toEqual({ count: 3, lastTimestamp: '2026-11-26T22:01:01Z', message: ev.message });
    expect(kubeTime(Date.parse('2026-11-26T22:00:59.999Z'))).toBe('2026-11-26T22:00:59Z');
  });
});
