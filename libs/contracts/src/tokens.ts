// Reversible encoding of arbitrary names into exactly one NATS subject token / KV key token.
//
// Scheme: [A-Za-z0-9_-] stay as they are; every other character becomes its UTF-8 bytes, each
// written `=XX` (uppercase hex). The empty string becomes `=` alone (never produced otherwise,
// since an escape is always three characters).
//
// Why `=` and not `%`: KV keys must match /^[-/=.\w]+$/ (@nats-io/kv validateKey), so `%` would
// be rejected in the `svc` and `views` buckets, while `=` is legal in both subjects and keys and
// cannot occur in Kubernetes names or label values, so real names almost never grow.
//
// An encoded token therefore only ever contains [A-Za-z0-9_=-]: no '.', '*', '>', whitespace.
// Decoding is strict: it accepts only canonical encoder output, so encode(decode(t)) === t too.

import { TokenDecodeError, TokenEncodeError } from './errors.ts';

/** Longest name accepted, in UTF-8 bytes (a Kubernetes DNS subdomain name is at most 253). */
export const MAX_NAME_BYTES = 253;
/** Longest token `encodeToken` can return: every byte escaped. */
export const MAX_TOKEN_LENGTH = MAX_NAME_BYTES * 3;
/** The escape character of the scheme. */
export const TOKEN_ESCAPE = '=';

const SAFE = /^[A-Za-z0-9_-]+$/;
const SAFE_CHAR = /[A-Za-z0-9_-]/;
// With the `u` flag a well-formed surrogate pair is one code point, so this only matches lone halves.
const LONE_SURROGATE = /\p{Surrogate}/u;
const HEX = '0123456789ABCDEF';
const utf8 = new TextEncoder();
// ignoreBOM: a leading U+FEFF is part of the name, not a byte-order mark to strip.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Encodes `name` into one token. Returns `=` for the empty string and `name` itself when it
 * only holds [A-Za-z0-9_-].
 *
 * Throws TokenEncodeError for strings that cannot round-trip: a lone UTF-16 surrogate (it has
 * no UTF-8 form) or more than MAX_NAME_BYTES UTF-8 bytes.
 *
 * ### Examples
 * ```ts
 * encodeToken('web');          // 'web'
 * encodeToken('my.svc');       // 'my=2Esvc'
 * encodeToken('');             // '='
 * encodeToken('é');            // '=C3=A9'
 * ```
 */
export function encodeToken(name: string): string {
  if (name === '') return TOKEN_ESCAPE;
  if (name.length <= MAX_NAME_BYTES && SAFE.test(name)) return name;
  if (LONE_SURROGATE.test(name)) throw new TokenEncodeError(name, 'contains a lone UTF-16 surrogate');
  const bytes = utf8.encode(name);
  if (bytes.length > MAX_NAME_BYTES) {
    throw new TokenEncodeError(name, `is ${bytes.length} UTF-8 bytes, more than ${MAX_NAME_BYTES}`);
  }
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && SAFE_CHAR.test(c) ? c : TOKEN_ESCAPE + HEX[b >> 4] + HEX[b & 15];
  }
  return out;
}

/**
 * Decodes a token made by `encodeToken`. Returns '' for `=`.
 *
 * Throws TokenDecodeError for anything the encoder would not have produced: empty input,
 * characters outside [A-Za-z0-9_=-], a malformed or lowercase escape, an escaped safe
 * character, bytes that are not valid UTF-8, or a name longer than MAX_NAME_BYTES.
 */
export function decodeToken(token: string): string {
  if (token === TOKEN_ESCAPE) return '';
  if (token === '') throw new TokenDecodeError(token, 'empty token (the empty name encodes as "=")');
  if (token.length <= MAX_NAME_BYTES && SAFE.test(token)) return token;
  if (token.length > MAX_TOKEN_LENGTH) throw new TokenDecodeError(token, `longer than ${MAX_TOKEN_LENGTH} characters`);
  const bytes: number[] = [];
  for (let i = 0; i < token.length; ) {
    const c = token.charAt(i);
    if (c === TOKEN_ESCAPE) {
      const hi = HEX.indexOf(token.charAt(i + 1));
      const lo = HEX.indexOf(token.charAt(i + 2));
      if (i + 2 >= token.length || hi < 0 || lo < 0) {
        throw new TokenDecodeError(token, `bad escape at ${i} (want "=" and two uppercase hex digits)`);
      }
      bytes.push(hi * 16 + lo);
      i += 3;
    } else if (SAFE_CHAR.test(c)) {
      bytes.push(c.charCodeAt(0));
      i += 1;
    } else {
      throw new TokenDecodeError(token, `character ${JSON.stringify(c)} at ${i} is never produced by the encoder`);
    }
  }
  let name: string;
  try {
    name = strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    throw new TokenDecodeError(token, 'escapes are not valid UTF-8');
  }
  if (bytes.length > MAX_NAME_BYTES) throw new TokenDecodeError(token, `decodes to more than ${MAX_NAME_BYTES} bytes`);
  // Rejects non-canonical forms such as '=41' for 'A', keeping the mapping one-to-one.
  if (encodeToken(name) !== token) throw new TokenDecodeError(token, 'not in canonical form');
  return name;
}

/** True when `token` is the canonical encoding of some name. Never throws. */
export function isEncodedToken(token: string): boolean {
  try {
    decodeToken(token);
    return true;
  } catch {
    return false;
  }
}
