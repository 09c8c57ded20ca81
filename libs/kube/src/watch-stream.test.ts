import { describe, expect, it } from 'vitest';
import { LineSplitter } from './watch-stream.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('LineSplitter', () => {
  it.each([
    ['whole lines in one chunk', ['{"a":1}\n{"b":2}\n'], ['{"a":1}', '{"b":2}'], ''],
    ['a line across chunks', ['{"a":', '1}\n'], ['{"a":1}'], ''],
    ['only \\n ends a line: U+2028 and U+2029 stay inside it', ['{"s":"x\u2028y\u2029z"}\n'], ['{"s":"x\u2028y\u2029z"}'], ''],
    ['\\r is kept (JSON allows it between tokens)', ['{"a":1}\r\n'], ['{"a":1}\r'], ''],
    ['a last line without its \\n is left for end()', ['{"a":1}\n{"b"'], ['{"a":1}'], '{"b"'],
  ])('%s', (_name, chunks, want, rest) => {
    const s = new LineSplitter();
    expect(chunks.flatMap((c) => s.push(bytes(c)))).toEqual(want);
    expect(s.end()).toBe(rest);
  });

  it('a character whose bytes are split between chunks is decoded whole', () => {
    const all = bytes('{"s":"\u2028ü"}\n');
    const s = new LineSplitter();
    const out = [...s.push(all.slice(0, 7)), ...s.push(all.slice(7, 9)), ...s.push(all.slice(9))];
    expect(out).toEqual(['{"s":"\u2028ü"}']);
  });
});
