// Locates the first syntax error in a JSON text, with line and column. JSON.parse's messages
// differ between engines, sometimes lack a position and may quote raw input (newlines
// included); this scanner only runs after JSON.parse has failed and yields one stable line.

import { quote } from './fields.ts';

export interface JsonSyntaxProblem {
  /** 0-based offset into the text. */
  readonly offset: number;
  /** 1-based line and column (column counts UTF-16 code units, like most editors). */
  readonly line: number;
  readonly column: number;
  readonly reason: string;
}

type Expect = 'value' | 'valueOrClose' | 'key' | 'keyOrClose' | 'colon' | 'commaOrClose' | 'end';

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

class Problem {
  readonly offset: number;
  readonly reason: string;

  constructor(
    offset: number,
    reason: string,
  ) {
    this.offset = offset;
    this.reason = reason;
  }
}

/** Returns the offset just past the string starting at `i` (a `"`), or a Problem. */
function scanString(text: string, i: number): number | Problem {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (c < 0x20) return new Problem(j, 'control character inside a string (escape it)');
    if (c === 0x5c) {
      const e = text[j + 1] ?? '';
      if (e === 'u') {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6))) return new Problem(j, 'invalid \\u escape (expected 4 hex digits)');
        j += 5;
      } else if (ESCAPES.has(e)) j += 1;
      else return new Problem(j, `invalid escape \\${e === '' ? '' : quote(e).slice(1, -1)}`);
    }
  }
  return new Problem(text.length, 'unterminated string');
}

function scan(text: string): Problem | null {
  const stack: ('{' | '[')[] = [];
  let expect: Expect = 'value';
  let i = 0;
  const afterValue = (): Expect => (stack.length > 0 ? 'commaOrClose' : 'end');
  for (;;) {
    while (i < text.length && WS.has(text[i] ?? '')) i++;
    if (i >= text.length) return expect === 'end' ? null : new Problem(i, 'unexpected end of input');
    const ch = text[i] ?? '';
    const top = stack[stack.length - 1];
    if (expect === 'end') return new Problem(i, `unexpected ${quote(ch)} after the end of the JSON value`);
    if (expect === 'colon') {
      if (ch !== ':') return new Problem(i, `expected ':' after a property name, found ${quote(ch)}`);
      i++;
      expect = 'value';
    } else if (expect === 'commaOrClose') {
      const close = top === '{' ? '}' : ']';
      if (ch === ',') {
        i++;
        expect = top === '{' ? 'key' : 'value';
      } else if (ch === close) {
        i++;
        stack.pop();
        expect = afterValue();
      } else return new Problem(i, `expected ',' or '${close}', found ${quote(ch)}`);
    } else if (expect === 'key' || expect === 'keyOrClose') {
      if (expect === 'keyOrClose' && ch === '}') {
        i++;
        stack.pop();
        expect = afterValue();
      } else if (ch === '"') {
        const end = scanString(text, i);
        if (end instanceof Problem) return end;
        i = end;
        expect = 'colon';
      } else return new Problem(i, `expected a property name in double quotes, found ${quote(ch)}`);
    } else if (expect === 'valueOrClose' && ch === ']') {
      i++;
      stack.pop();
      expect = afterValue();
    } else if (ch === '{' || ch === '[') {
      stack.push(ch);
      i++;
      expect = ch === '{' ? 'keyOrClose' : 'valueOrClose';
    } else if (ch === '"') {
      const end = scanString(text, i);
      if (end instanceof Problem) return end;
      i = end;
      expect = afterValue();
    } else {
      NUMBER.lastIndex = i;
      const num = /[-0-9]/.test(ch) ? NUMBER.exec(text) : null;
      const lit = ['true', 'false', 'null'].find((l) => text.startsWith(l, i));
      if (num !== null && num[0].length > 0) i += num[0].length;
      else if (lit !== undefined) i += lit.length;
      else return new Problem(i, ch === '-' ? 'invalid number' : `unexpected ${quote(ch)} where a value was expected`);
      expect = afterValue();
    }
  }
}

/**
 * Describes why `text` is not JSON. Returns null if no syntax error was found (JSON.parse then
 * failed for another reason, such as nesting too deep for the engine).
 */
export function locateJsonError(text: string): JsonSyntaxProblem | null {
  const p = scan(text);
  if (p === null) return null;
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < p.offset && k < text.length; k++) {
    if (text.charCodeAt(k) === 0x0a) {
      line++;
      lineStart = k + 1;
    }
  }
  return { offset: p.offset, line, column: p.offset - lineStart + 1, reason: p.reason };
}
