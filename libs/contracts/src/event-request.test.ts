import { describe, expect, it } from 'vitest';
import { deepFreeze } from '@slicemesh/testing';
import {
  EVENT_REQUEST, HINTS_EVENT_COMPONENT, MIRRORING_EVENT_COMPONENT, eventRequest, eventsFilter, eventsStreamSubject, eventsSubject, parseEventRequest, parseEventsSubject,
} from './event-request.ts';
import { TokenDecodeError } from './errors.ts';

const svcRef = { kind: 'Service', apiVersion: 'v1', namespace: 'shop', name: 'web', uid: 'u-1' };
const disabled = { type: 'Warning', reason: 'TopologyAwareHintsDisabled', message: 'Insufficient number of endpoints, addressType: IPv4' } as const;
const T = Date.parse('2026-11-26T22:00:00.123Z');
const good = eventRequest('c1', HINTS_EVENT_COMPONENT, svcRef, disabled, T);
const subject = eventsSubject({ cluster: 'c1', component: HINTS_EVENT_COMPONENT }, { prefix: 't1.' });
const ctx = { cluster: 'c1', prefix: 't1.' };

describe('EventRequest.v1 subjects', () => {
  it('builds events.<cluster>.<component> under the prefix, one token per name', () => {
    expect(subject).toBe('t1.events.c1.endpoint-slice-controller');
    expect(eventsSubject({ cluster: 'eu.west', component: MIRRORING_EVENT_COMPONENT })).toBe('events.eu=2Ewest.endpoint-slice-mirroring-controller');
    expect(eventsFilter('c1', { prefix: 't1.' })).toBe('t1.events.c1.>');
    expect(eventsStreamSubject({ prefix: 't1.' })).toBe('t1.events.>');
  });

  it('parses what it builds and rejects other subjects', () => {
    expect(parseEventsSubject(subject, ctx)).toEqual({ cluster: 'c1', component: HINTS_EVENT_COMPONENT });
    expect(() => parseEventsSubject('t1.slices.c1.a.b', ctx)).toThrow(TokenDecodeError);
    expect(() => parseEventsSubject('events.c1.x', ctx)).toThrow(TokenDecodeError);
  });
});

interface Case {
  readonly name: string;
  readonly data: unknown;
  readonly subject?: string;
  /** Field of the expected rejection; undefined = accepted. */
  readonly field?: string;
}

const withBody = (patch: Record<string, unknown>): unknown => ({ ...good, ...patch });
const cases: readonly Case[] = deepFreeze<readonly Case[]>([
  { name: 'accepts a request as eventRequest builds it', data: good },
  { name: 'accepts an object without uid (not known to the producer)', data: withBody({ involvedObject: { kind: 'Endpoints', apiVersion: 'v1', namespace: 'shop', name: 'web' } }) },
  { name: 'rejects a body that is not an object', data: 'x', field: '<body>' },
  { name: 'rejects an unknown version', data: withBody({ type: 'EventRequest.v2' }), field: 'type' },
  { name: 'rejects another cluster', data: withBody({ cluster: 'c2' }), field: 'cluster' },
  { name: 'rejects a component the subject does not name', data: withBody({ component: MIRRORING_EVENT_COMPONENT }), field: 'subject' },
  { name: 'rejects a subject of another stream', data: good, subject: 't1.slices.c1.shop.web', field: 'subject' },
  { name: 'rejects an event type other than Normal or Warning', data: withBody({ event: { ...disabled, type: 'Error' } }), field: 'event.type' },
  { name: 'rejects an empty reason', data: withBody({ event: { ...disabled, reason: '' } }), field: 'event.reason' },
  { name: 'rejects a reason over 128 characters', data: withBody({ event: { ...disabled, reason: 'R'.repeat(129) } }), field: 'event.reason' },
  { name: 'accepts an empty message', data: withBody({ event: { ...disabled, message: '' } }) },
  { name: 'rejects an object without a name', data: withBody({ involvedObject: { ...svcRef, name: '' } }), field: 'involvedObject.name' },
  { name: 'rejects a uid that is not a string', data: withBody({ involvedObject: { ...svcRef, uid: 7 } }), field: 'involvedObject.uid' },
  { name: 'rejects a time that is not RFC 3339', data: withBody({ time: 'yesterday' }), field: 'time' },
  { name: 'rejects a missing time', data: withBody({ time: undefined }), field: 'time' },
]);

describe('parseEventRequest', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const parsed = parseEventRequest(tc.data, tc.subject ?? subject, ctx);
      if (tc.field === undefined) {
        expect(parsed.ok).toBe(true);
      } else {
        expect(parsed.ok).toBe(false);
        if (!parsed.ok) expect(parsed.rejection.field).toBe(tc.field);
      }
    });
  }

  it('returns only the known fields, the time as built', () => {
    const parsed = parseEventRequest({ ...good, extra: 1, event: { ...disabled, note: 'x' } }, subject, ctx);
    expect(parsed).toEqual({ ok: true, value: { type: EVENT_REQUEST, cluster: 'c1', component: HINTS_EVENT_COMPONENT, involvedObject: svcRef, event: disabled, time: '2026-11-26T22:00:00.123Z' } });
  });

  it('never throws, even on a subject token that does not decode', () => {
    expect(parseEventRequest(good, 't1.events.c1.=zz', ctx).ok).toBe(false);
  });
});
