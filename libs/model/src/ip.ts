// IP parsing and canonical text, with Go's net.IP semantics (what upstream stores):
// IPv4 accepts leading zeros ("sloppy" parsing, as netutils.ParseIPSloppy), IPv6 is printed
// per RFC 5952 (lowercase, longest zero run of two or more groups compressed, first on a tie),
// and an IPv4-mapped IPv6 address is treated as the IPv4 address it carries.

import type { IPFamily } from './kube.ts';

export interface ParsedIP {
  readonly family: IPFamily;
  /** Canonical text form. */
  readonly text: string;
  /** 4 bytes for IPv4, 16 for IPv6. */
  readonly bytes: readonly number[];
}

// A character loop: every endpoint of every slice message is validated through here, and the
// split-and-regex version was the hints service's largest validation cost (1.8 s of a backbone
// bench run). Four dot-separated parts of one to three digits, each at most 255.
function parseV4(s: string): number[] | null {
  const out: number[] = [];
  let n = 0;
  let digits = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46; // the end closes the last part like a dot
    if (c === 46) {
      if (digits === 0 || n > 255 || out.length === 4) return null;
      out.push(n);
      n = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      n = n * 10 + (c - 48);
      digits++;
    } else {
      return null;
    }
  }
  return out.length === 4 ? out : null;
}

/** The dotted text of four bytes; `s` itself when it is already that text (no leading zeros). */
function v4Text(s: string, b: readonly number[]): string {
  const text = `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  return text === s ? s : text;
}

function parseV6(s: string): number[] | null {
  if (s.includes('%')) return null; // zones are not valid pod or service IPs
  let tail4: number[] | null = null;
  let body = s;
  const lastColon = s.lastIndexOf(':');
  if (lastColon >= 0 && s.slice(lastColon + 1).includes('.')) {
    tail4 = parseV4(s.slice(lastColon + 1));
    if (!tail4) return null;
    body = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const toGroups = (h: string): number[] | null => {
    if (h === '') return [];
    const gs = h.split(':');
    const out: number[] = [];
    for (const g of gs) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = toGroups(halves[0] ?? '');
  const rest = halves.length === 2 ? toGroups(halves[1] ?? '') : [];
  if (!head || !rest) return null;
  let groups: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  } else {
    if (head.length !== 8) return null;
    groups = head;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  if (tail4) bytes.splice(12, 4, ...tail4);
  return bytes;
}

function formatV6(bytes: readonly number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 1; // only runs of two or more groups are compressed
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses an IPv4 or IPv6 address; returns null when `s` is not an IP address. */
export function parseIP(s: string): ParsedIP | null {
  if (typeof s !== 'string' || s.length === 0 || s.length > 45) return null;
  if (s.includes(':')) {
    const b = parseV6(s);
    if (!b) return null;
    const mapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
    if (mapped) {
      const v4 = b.slice(12);
      return { family: 'IPv4', text: v4.join('.'), bytes: v4 };
    }
    return { family: 'IPv6', text: formatV6(b), bytes: b };
  }
  const v4 = parseV4(s);
  return v4 ? { family: 'IPv4', text: v4Text(s, v4), bytes: v4 } : null;
}

/** Canonical text of an IP address, or null if it is not one. */
export function canonicalIP(s: string): string | null {
  return parseIP(s)?.text ?? null;
}

/** The family of an IP address string, or null if it is not one. */
export function ipFamilyOf(s: string): IPFamily | null {
  return parseIP(s)?.family ?? null;
}
