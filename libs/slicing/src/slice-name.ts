// Deterministic EndpointSlice names. Upstream lets the API server pick a random suffix
// (generateName); slicemesh must reproduce the same names when the log is replayed, so a
// name is a hash of the owner and the slice's origin, bumped past names already taken.

import { createHash } from 'node:crypto';

const MAX_NAME = 253;
const SUFFIX_LEN = 10;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567'; // RFC 4648 base32, lowercased (DNS-safe)

function base32(bytes: Uint8Array, len: number): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const b of bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5 && out.length < len) {
      out += ALPHABET[(acc >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= len) break;
  }
  return out;
}

/** The `generateName` upstream would use: `<owner>-`, trimmed so a suffix still fits 253 chars. */
export function generateNamePrefix(ownerName: string): string {
  const base = ownerName.slice(0, MAX_NAME - SUFFIX_LEN - 1).replace(/[-.]+$/, '');
  return `${base}-`;
}

/**
 * Returns `<owner>-<10 base32 chars>`, where the suffix hashes `ownerUid` and `origin`
 * (for example `IPv4/<port map key>`) together with the smallest counter that makes the
 * name unused in `taken`. Same inputs, same name; the result is a valid DNS subdomain
 * whenever `ownerName` is one.
 *
 * ### Example
 * sliceName('web', 'uid-1', 'IPv4/abc', new Set()) // 'web-' + 10 chars
 */
export function sliceName(ownerName: string, ownerUid: string, origin: string, taken: ReadonlySet<string>): string {
  const prefix = generateNamePrefix(ownerName);
  for (let n = 0; ; n++) {
    const digest = createHash('sha256').update(`${ownerUid}\u0000${origin}\u0000${n}`).digest();
    const name = prefix + base32(digest, SUFFIX_LEN);
    if (!taken.has(name)) return name;
  }
}
