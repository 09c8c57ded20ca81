import { describe, expect, it } from 'vitest';
import { parseJsonBody } from './json-body.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('parseJsonBody', () => {
  it.each([
    ['an object', '{"type":"Upserted.v1"}', { type: 'Upserted.v1' }],
    ['a bare value', '42', 42],
    ['a body behind a byte-order mark', '\ufeff{"a":1}', { a: 1 }],
  ])('parses %s', (_what, text, value) => {
    expect(parseJsonBody(bytes(text))).toEqual({ ok: true, value });
  });

  it.each([
    ['control characters', '\u0000\u0001\u0002', /^invalid JSON at line 1 column 1: unexpected "\\u0000" where a value was expected$/],
    ['a truncated body', '{"type": "Upserted.v1", ', /^invalid JSON at line 1 column 25: unexpected end of input$/],
    ['a newline and quotes in the text', '{"a":\n"x" "y"}', /^invalid JSON at line 2 column 5: expected ',' or '}'/],
    ['an empty body', '', /^invalid JSON at line 1 column 1: unexpected end of input$/],
    ['HTML', '<html>\r\n502</html>', /^invalid JSON at line 1 column 1: unexpected "<"/],
  ])('names the position and never echoes the input, for %s', (_what, text, reason) => {
    const p = parseJsonBody(bytes(text));
    expect(p.ok).toBe(false);
    const why = p.ok ? '' : p.reason;
    expect(why).toMatch(reason);
    expect(why).toMatch(/^[\x20-\x7e]+$/);
  });

  it('reports bytes that are not UTF-8', () => {
    expect(parseJsonBody(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual({ ok: false, reason: 'invalid UTF-8' });
  });
});
