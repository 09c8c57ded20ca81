// Deterministic randomness: every random choice in the simulator (uids, generated name
// suffixes, churn victims) comes from a seeded stream, so the same seed and inputs replay the
// same cluster history.
import { createHash } from 'node:crypto';

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n); 0 when n <= 0. */
  int(n: number): number;
}

/** sfc32 seeded from the SHA-256 of `seed`: fast, small, and good enough for simulation. */
export function createRandom(seed: string): Random {
  const h = createHash('sha256').update(seed).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const next = (): number => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Discard the first outputs: sfc32 mixes its state over the first few rounds.
  for (let i = 0; i < 12; i++) next();
  return { next, int: (n) => (n > 0 ? Math.floor(next() * n) : 0) };
}

/** A UUID-formatted id derived from the SHA-256 of its parts (version nibble 4, RFC 4122 variant). */
export function deterministicUid(...parts: readonly (string | number)[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

// The alphabet Kubernetes uses for generated name suffixes (no vowels, no confusable digits).
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A random suffix such as `x7kqz` for generateName-style names. */
export function nameSuffix(random: Random, length = 5): string {
  let out = '';
  for (let i = 0; i < length; i++) out += SUFFIX_ALPHABET[random.int(SUFFIX_ALPHABET.length)];
  return out;
}

/** A stable short hash in the same alphabet, e.g. for a pod-template-hash label. */
export function stableSuffix(value: string, length = 10): string {
  const digest = createHash('sha256').update(value).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += SUFFIX_ALPHABET[digest[i]! % SUFFIX_ALPHABET.length];
  return out;
}
