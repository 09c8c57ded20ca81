import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HINTS_EVENT_COMPONENT, eventRequest, eventsSubject, parseEventRequest } from '@slicemesh/contracts';
import { withJetStream } from '../testing/jetstream.ts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import type { EventEmitResult } from './event-requests.ts';
import { eventRequestPublisher } from './event-requests.ts';
import { ensureStreams } from './streams.ts';

let f: JetStreamFixture;
beforeAll(async () => {
  f = await withJetStream();
  await ensureStreams(f.jsm, f.names);
});
afterAll(async () => {
  await f.cleanup();
});

const ref = { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web' };
const ev = (message: string) => ({ type: 'Warning', reason: 'TopologyAwareHintsDisabled', message }) as const;

describe('eventRequestPublisher', () => {
  it('ensureStreams declares EVENTS when named; requests land on events.<cluster>.<component> and parse back', async () => {
    const results: EventEmitResult[] = [];
    const pub = eventRequestPublisher(f.js, { prefix: f.names.prefix, onResult: (r) => results.push(r) });
    const req = eventRequest('c1', HINTS_EVENT_COMPONENT, ref, ev('one'), Date.parse('2026-11-26T22:00:00Z'));
    pub.emit(req);
    pub.emit(eventRequest('c1', HINTS_EVENT_COMPONENT, ref, ev('two'), Date.parse('2026-11-26T22:00:01Z')));
    await pub.flush();
    expect(results.map((r) => r.outcome)).toEqual(['published', 'published']);
    const subject = eventsSubject({ cluster: 'c1', component: HINTS_EVENT_COMPONENT }, f.names);
    const m = await f.jsm.streams.getMessage(f.names.events as string, { seq: 1 });
    expect(m?.subject).toBe(subject);
    expect(parseEventRequest(m?.json(), subject, { cluster: 'c1', prefix: f.names.prefix })).toEqual({ ok: true, value: req });
  });

  it('the same request emitted twice is stored once (its content is its msgID)', async () => {
    const results: EventEmitResult[] = [];
    const pub = eventRequestPublisher(f.js, { prefix: f.names.prefix, onResult: (r) => results.push(r) });
    const req = eventRequest('c2', HINTS_EVENT_COMPONENT, ref, ev('same'), Date.parse('2026-11-26T22:00:00Z'));
    pub.emit(req);
    await pub.flush();
    pub.emit(req);
    await pub.flush();
    expect(results.map((r) => (r.outcome === 'published' ? r.duplicate : r.outcome))).toEqual([false, true]);
  });

  it('without a stream the request fails, is reported, and nothing throws', async () => {
    const results: EventEmitResult[] = [];
    const pub = eventRequestPublisher(f.js, { prefix: `nostream${f.id}.`, timeoutMs: 500, onResult: (r) => results.push(r) });
    pub.emit(eventRequest('c1', HINTS_EVENT_COMPONENT, ref, ev('lost'), 0));
    await pub.flush();
    expect(results.map((r) => r.outcome)).toEqual(['failed']);
  });

  it('drops what exceeds maxInFlight without trying', async () => {
    const results: EventEmitResult[] = [];
    const pub = eventRequestPublisher(f.js, { prefix: f.names.prefix, maxInFlight: 1, onResult: (r) => results.push(r) });
    pub.emit(eventRequest('c3', HINTS_EVENT_COMPONENT, ref, ev('a'), 1));
    pub.emit(eventRequest('c3', HINTS_EVENT_COMPONENT, ref, ev('b'), 2));
    await pub.flush();
    expect(results.map((r) => r.outcome).sort()).toEqual(['dropped', 'published']);
  });
});
