import { describe, expect, it } from 'vitest';
import { TokenDecodeError, TokenEncodeError } from './errors.ts';
import { decodeToken, encodeToken, isEncodedToken, MAX_NAME_BYTES, MAX_TOKEN_LENGTH } from './tokens.ts';
import { prng } from '@slicemesh/testing';

// Everything an encoded token may contain: legal in a subject token and in a KV key.
const TOKEN_ALPHABET = /^[A-Za-z0-9_=-]+$/;

describe('encodeToken / decodeToken', () => {
  const cases: readonly { name: string; input: string; token: string }[] = [
    { name: 'a DNS label stays as it is', input: 'web-1', token: 'web-1' },
    { name: 'underscores and capitals stay (label values, UNZONED_VIEW "_")', input: 'Zone_A', token: 'Zone_A' },
    { name: 'the empty string becomes "=" alone', input: '', token: '=' },
    { name: 'a dot (token separator) is escaped', input: 'a.b', token: 'a=2Eb' },
    { name: 'a lone "." is escaped', input: '.', token: '=2E' },
    { name: 'the wildcard "*" is escaped', input: '*', token: '=2A' },
    { name: 'the wildcard ">" is escaped', input: '>', token: '=3E' },
    { name: 'spaces are escaped', input: 'a b', token: 'a=20b' },
    { name: 'tabs and newlines are escaped', input: '\t\n', token: '=09=0A' },
    { name: '"%" is escaped like any other character', input: '100%', token: '100=25' },
    { name: 'the escape character itself is escaped', input: 'a=b', token: 'a=3Db' },
    { name: 'a lookalike escape is escaped, not passed through', input: '=41', token: '=3D41' },
    { name: 'a slash (zone labels like topology.kubernetes.io/zone) is escaped', input: 'x/y', token: 'x=2Fy' },
    { name: 'unicode becomes its UTF-8 bytes', input: 'é', token: '=C3=A9' },
    { name: 'astral characters become four escaped bytes', input: '😀', token: '=F0=9F=98=80' },
    { name: 'a leading U+FEFF survives (not treated as a BOM)', input: '\uFEFFa', token: '=EF=BB=BFa' },
    { name: 'a 253-character DNS name stays as it is', input: 'a'.repeat(253), token: 'a'.repeat(253) },
    { name: 'a 253-byte name of dots reaches the longest token', input: '.'.repeat(253), token: '=2E'.repeat(253) },
  ];
  for (const tc of cases) {
    it(`${tc.name}`, () => {
      const token = encodeToken(tc.input);
      expect(token).toBe(tc.token);
      expect(token).toMatch(TOKEN_ALPHABET);
      expect(token.length).toBeLessThanOrEqual(MAX_TOKEN_LENGTH);
      expect(decodeToken(token)).toBe(tc.input);
    });
  }
});

describe('encodeToken rejects names that cannot round-trip', () => {
  const cases: readonly { name: string; input: string; reason: RegExp }[] = [
    { name: 'a lone high surrogate', input: 'a\uD800b', reason: /surrogate/ },
    { name: 'a lone low surrogate', input: '\uDC00', reason: /surrogate/ },
    { name: `more than ${MAX_NAME_BYTES} ASCII characters`, input: 'a'.repeat(254), reason: /254 UTF-8 bytes/ },
    { name: `more than ${MAX_NAME_BYTES} UTF-8 bytes in fewer characters`, input: 'é'.repeat(127), reason: /254 UTF-8 bytes/ },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(() => encodeToken(tc.input)).toThrow(TokenEncodeError);
      expect(() => encodeToken(tc.input)).toThrow(tc.reason);
    });
  }
});

describe('decodeToken accepts only canonical encoder output', () => {
  const cases: readonly { name: string; token: string }[] = [
    { name: 'the empty token', token: '' },
    { name: 'a dot', token: 'a.b' },
    { name: 'a wildcard', token: '*' },
    { name: 'a percent escape (not this scheme)', token: '%2E' },
    { name: 'lowercase hex', token: '=2e' },
    { name: 'a truncated escape', token: 'a=2' },
    { name: 'an escape at the very end', token: 'a=' },
    { name: 'non-hex digits', token: '=ZZ' },
    { name: 'an escaped safe character (non-canonical)', token: '=41' },
    { name: 'invalid UTF-8 (lone continuation byte)', token: '=80' },
    { name: 'an encoded surrogate half (invalid UTF-8)', token: '=ED=A0=80' },
    { name: 'a safe name longer than the limit', token: 'a'.repeat(254) },
    { name: 'a token longer than the longest encoding', token: '=2E'.repeat(254) },
  ];
  for (const tc of cases) {
    it(`rejects ${tc.name}`, () => {
      expect(() => decodeToken(tc.token)).toThrow(TokenDecodeError);
      expect(isEncodedToken(tc.token)).toBe(false);
    });
  }
});


/** A random well-formed string mixing safe ASCII, hostile ASCII, BMP and astral code points. */
function randomName(rand: () => number): string {
  const pools = [
    () => 'abcXYZ019_-'.charAt(Math.floor(rand() * 11)),
    () => '.*> %=/\t\n"\\'.charAt(Math.floor(rand() * 12)),
    () => String.fromCharCode(0x80 + Math.floor(rand() * 0xd780)), // below the surrogates
    () => String.fromCodePoint(0x10000 + Math.floor(rand() * 0xfffff)),
  ];
  const len = Math.floor(rand() * 40);
  let s = '';
  for (let i = 0; i < len; i++) s += pools[Math.floor(rand() * pools.length)]!();
  return s;
}

describe('round trip (property, seeded)', () => {
  it('decode(encode(x)) === x and the token stays within its alphabet for 5000 random names', () => {
    const rand = prng(20240611);
    let checked = 0;
    for (let i = 0; i < 5000; i++) {
      const name = randomName(rand);
      if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) continue;
      const token = encodeToken(name);
      expect(token).toMatch(TOKEN_ALPHABET);
      expect(decodeToken(token)).toBe(name);
      checked++;
    }
    expect(checked).toBeGreaterThan(4000);
  });

  it('distinct names never share a token (injective on the sample)', () => {
    const rand = prng(7);
    const seen = new Map<string, string>();
    for (let i = 0; i < 3000; i++) {
      const name = randomName(rand);
      if (new TextEncoder().encode(name).length > MAX_NAME_BYTES) continue;
      const token = encodeToken(name);
      const prev = seen.get(token);
      if (prev !== undefined) expect(prev).toBe(name);
      seen.set(token, name);
    }
    expect(seen.size).toBeGreaterThan(2000);
  });
});
