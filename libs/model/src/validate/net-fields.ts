// Readers for IP addresses and CIDRs. The text is kept as given (consumers canonicalise where
// upstream does, e.g. pod IPs in slices, A.2.4); validation only proves that it parses.

import type { IPFamily } from '../kube.ts';
import { parseIP } from '../ip.ts';
import type { Ctx } from './fields.ts';
import { fail, isAbsent, quote, reqString } from './fields.ts';

/** An IP address, optionally of one family. */
export function reqIP(ctx: Ctx, v: unknown, path: string, family?: IPFamily): string {
  const s = reqString(ctx, v, path, 64);
  const ip = parseIP(s);
  if (ip === null) fail(ctx, path, `${quote(s)} must be a valid IP address`);
  if (family !== undefined && ip.family !== family) fail(ctx, path, `${quote(s)} must be an ${family} address`);
  return s;
}

export function optIP(ctx: Ctx, v: unknown, path: string): string | undefined {
  return isAbsent(v) ? undefined : reqIP(ctx, v, path);
}

/** A CIDR such as `10.0.0.0/8`; surrounding whitespace is tolerated, as upstream trims it (D.1.6). */
export function reqCIDR(ctx: Ctx, v: unknown, path: string): string {
  const s = reqString(ctx, v, path, 64);
  const [addr = '', prefix, extra] = s.trim().split('/');
  const ip = parseIP(addr);
  const bits = addr.includes(':') ? 128 : 32;
  const ok = ip !== null && extra === undefined && prefix !== undefined && /^[0-9]{1,3}$/.test(prefix) && Number(prefix) <= bits;
  if (!ok) fail(ctx, path, `${quote(s)} must be a CIDR (address/prefix-length)`);
  return s;
}
