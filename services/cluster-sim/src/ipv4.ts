// Just enough IPv4 arithmetic for CIDR-based allocation (service and pod ranges).

export interface Cidr4 {
  /** Network address as an unsigned 32-bit integer. */
  readonly base: number;
  readonly prefix: number;
  /** Number of addresses in the block. */
  readonly size: number;
}

export function ipv4ToInt(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

export function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** Parses `a.b.c.d/p`; the address is masked down to the network. Undefined when malformed. */
export function parseCidr4(text: string): Cidr4 | undefined {
  const [ip, bits, extra] = text.split('/');
  if (ip === undefined || bits === undefined || extra !== undefined || !/^\d{1,2}$/.test(bits)) return undefined;
  const prefix = Number(bits);
  const addr = ipv4ToInt(ip);
  if (addr === undefined || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  return { base: addr - (addr % size), prefix, size };
}

export function cidrText(c: Cidr4): string {
  return `${intToIpv4(c.base)}/${c.prefix}`;
}

/** The `index`-th subnet of length `prefix` inside `parent`, or undefined past its end. */
export function subnet(parent: Cidr4, prefix: number, index: number): Cidr4 | undefined {
  if (prefix < parent.prefix || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  if (index < 0 || (index + 1) * size > parent.size) return undefined;
  return { base: parent.base + index * size, prefix, size };
}
