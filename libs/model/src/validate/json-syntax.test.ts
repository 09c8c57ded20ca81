import { describe, expect, it } from 'vitest';
import { locateJsonError } from './json-syntax.ts';

describe('locateJsonError', () => {
  const cases: { name: string; text: string; want: { line: number; column: number; reason: RegExp } | null }[] = [
    { name: 'valid JSON has no error', text: '{"a": [1, -2.5e3, true, null, "x\\u00e9"]}', want: null },
    { name: 'a missing value points at the closing brace', text: '{"a":}', want: { line: 1, column: 6, reason: /where a value was expected/ } },
    { name: 'a trailing comma in an array', text: '[1,2,]', want: { line: 1, column: 6, reason: /where a value was expected/ } },
    { name: 'a trailing comma in an object', text: '{"a":1,}', want: { line: 1, column: 8, reason: /property name in double quotes/ } },
    { name: 'lines and columns are 1-based across newlines', text: '{\n  "a": 1,\n  "b": tru\n}', want: { line: 3, column: 8, reason: /where a value was expected/ } },
    { name: 'truncated input', text: '{"items": [', want: { line: 1, column: 12, reason: /end of input/ } },
    { name: 'a missing colon', text: '{"a" 1}', want: { line: 1, column: 6, reason: /expected ':'/ } },
    { name: 'a missing comma', text: '[1 2]', want: { line: 1, column: 4, reason: /expected ',' or '\]'/ } },
    { name: 'garbage after the value', text: '{} {}', want: { line: 1, column: 4, reason: /after the end/ } },
    { name: 'a raw newline inside a string', text: '"a\nb"', want: { line: 1, column: 3, reason: /control character/ } },
    { name: 'an unterminated string', text: '["abc', want: { line: 1, column: 6, reason: /unterminated/ } },
    { name: 'a bad escape', text: '"\\x"', want: { line: 1, column: 2, reason: /invalid escape/ } },
    { name: 'single quotes are not JSON', text: "{'a': 1}", want: { line: 1, column: 2, reason: /property name in double quotes/ } },
    { name: 'a lone minus is not a number', text: '[-]', want: { line: 1, column: 2, reason: /invalid number/ } },
    { name: 'a leading zero ends the number early', text: '[01]', want: { line: 1, column: 3, reason: /expected ','/ } },
    { name: 'the offending character is escaped so the message stays on one line', text: '[\u2028]', want: { line: 1, column: 2, reason: /"\\u2028"/ } },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = locateJsonError(tc.text);
      if (tc.want === null) {
        expect(got).toBeNull();
        expect(() => JSON.parse(tc.text)).not.toThrow();
        return;
      }
      expect(() => JSON.parse(tc.text)).toThrow();
      expect(got).toMatchObject({ line: tc.want.line, column: tc.want.column });
      expect(got?.reason).toMatch(tc.want.reason);
    });
  }
});
