// Hashed name fragments shared by the iptables and nftables chain names: base32 (RFC 4648,
// upper case) of sha256, as Go's base32.StdEncoding prints it. Memoised because a 10k-service
// render asks for ~60k of them and the same names come back on every sync.

import { createHash } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const CACHE_LIMIT = 200_000;
const cache = new Map<string, string>();

function base32Prefix(bytes: Uint8Array, chars: number): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < bytes.length && out.length < chars; i++) {
    buffer = ((buffer << 8) | (bytes[i] ?? 0)) & 0xffff;
    bits += 8;
    while (bits >= 5 && out.length < chars) {
      out += ALPHABET[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/** The first 16 base32 characters of sha256(input): enough for both naming schemes. */
export function hash16(input: string): string {
  const hit = cache.get(input);
  if (hit !== undefined) return hit;
  const digest = createHash('sha256').update(input).digest();
  const value = base32Prefix(digest, 16);
  // A bounded memo: dropping everything at the limit keeps memory flat on churny clusters.
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(input, value);
  return value;
}
