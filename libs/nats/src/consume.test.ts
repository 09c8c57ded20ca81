import { describe, expect, it } from 'vitest';
import type { JsMsg } from '@nats-io/jetstream';
import { errorNakDelayMs, toConsumed } from './consume.ts';

describe('errorNakDelayMs (redelivery backoff after a thrown handler error)', () => {
  const cases = [
    { name: 'first delivery waits 500 ms', n: 1, want: 500 },
    { name: 'doubles per delivery', n: 2, want: 1000 },
    { name: 'fifth delivery waits 8 s', n: 5, want: 8000 },
    { name: 'is capped at 30 s', n: 7, want: 30_000 },
    { name: 'stays capped for huge counts', n: 10_000, want: 30_000 },
    { name: 'treats 0 and negative counts as the first delivery', n: 0, want: 500 },
    { name: 'treats NaN as the first delivery', n: Number.NaN, want: 500 },
  ];
  for (const tc of cases) it(tc.name, () => expect(errorNakDelayMs(tc.n)).toBe(tc.want));
});

describe('toConsumed', () => {
  const jsMsg = (text: string): JsMsg => ({ subject: 's.1', seq: 9, data: new TextEncoder().encode(text), redelivered: false, info: { deliveryCount: 1 }, headers: undefined }) as unknown as JsMsg;
  const cases = [
    { name: 'a JSON body reads as its value, no parse error', text: '{"a":[1,2]}', data: { a: [1, 2] }, parseError: undefined },
    { name: 'a body that is not JSON reads as undefined with the reason', text: '{"a":', data: undefined, parseError: 'invalid JSON at line 1 column 6: unexpected end of input' },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const m = toConsumed(jsMsg(tc.text));
      expect([m.subject, m.seq, m.deliveryCount]).toEqual(['s.1', 9, 1]);
      expect(m.data).toEqual(tc.data);
      expect(m.parseError).toBe(tc.parseError);
    });
  }
  it('parses the body once, on first read (every read gives the same object)', () => {
    const m = toConsumed(jsMsg('{"a":1}'));
    expect(m.data).toBe(m.data);
  });
});
