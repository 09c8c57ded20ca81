// `ip` helpers for the IPVS backend: the dummy interface that holds the service IPs (so the
// kernel accepts traffic for them) and the addresses bound to it.

import { canonicalIP } from '@slicemesh/model';
import { ApplyError } from './apply-error.ts';
import type { Exec, ExecResult } from './exec.ts';

export interface IpLinkOptions {
  readonly exec: Exec;
}

function failed(r: ExecResult): ApplyError {
  return new ApplyError('ip', r.code, r.stderr, null, []);
}

/** Host prefix length of an address: /32 for IPv4, /128 for IPv6. */
export function hostCIDR(ip: string): string {
  return `${ip}/${ip.includes(':') ? 128 : 32}`;
}

export class IpLink {
  readonly #exec: Exec;

  constructor(opts: IpLinkOptions) {
    this.#exec = opts.exec;
  }

  /** Whether interface `dev` exists. */
  async exists(dev: string): Promise<boolean> {
    const r = await this.#exec({ command: 'ip', args: ['link', 'show', 'dev', dev] });
    return r.code === 0;
  }

  /**
   * Creates dummy interface `dev` unless it exists; returns true when it created it. The
   * interface stays down: addresses on it are local either way, and down it answers no ARP.
   * Throws ApplyError when the kernel lacks the dummy link type.
   */
  async ensureDummy(dev: string): Promise<boolean> {
    if (await this.exists(dev)) return false;
    const r = await this.#exec({ command: 'ip', args: ['link', 'add', dev, 'type', 'dummy'] });
    if (r.code !== 0) throw failed(r);
    return true;
  }

  /** Canonical addresses (no prefix length) on `dev`, IPv4 and IPv6, sorted; [] when none. */
  async addresses(dev: string): Promise<string[]> {
    const r = await this.#exec({ command: 'ip', args: ['-o', 'addr', 'show', 'dev', dev] });
    if (r.code !== 0) throw failed(r);
    const out = new Set<string>();
    for (const m of r.stdout.matchAll(/\binet6? ([0-9A-Fa-f.:]+)\/\d+/g)) {
      const ip = canonicalIP(m[1] ?? '');
      if (ip !== null) out.add(ip);
    }
    return [...out].sort();
  }

  /**
   * The node's own addresses of `family` on every interface but loopback and `exclude` (the
   * IPVS dummy interface, whose addresses are service IPs): what NodePorts listen on when no
   * node IPs are configured. Host-scoped and IPv6 link-local addresses are left out. Sorted.
   */
  async localAddresses(family: 'IPv4' | 'IPv6', exclude: readonly string[] = []): Promise<string[]> {
    const r = await this.#exec({ command: 'ip', args: ['-o', 'addr', 'show'] });
    if (r.code !== 0) throw failed(r);
    const out = new Set<string>();
    for (const line of r.stdout.split('\n')) {
      const m = /^\d+:\s+(\S+?)(?:@\S+)?\s+(inet6?) ([0-9A-Fa-f.:]+)\/\d+.*?\bscope (\S+)/.exec(line);
      if (!m) continue;
      const [, dev = '', kind, address = '', scope] = m;
      if (dev === 'lo' || exclude.includes(dev) || scope === 'host' || scope === 'link') continue;
      if ((kind === 'inet6') !== (family === 'IPv6')) continue;
      const ip = canonicalIP(address);
      if (ip !== null) out.add(ip);
    }
    return [...out].sort();
  }

  /** Binds `ip` as a host address on `dev`; an address already there is not an error. */
  async addAddress(dev: string, ip: string): Promise<void> {
    const r = await this.#exec({ command: 'ip', args: ['addr', 'add', hostCIDR(ip), 'dev', dev] });
    if (r.code !== 0 && !/File exists/.test(r.stderr)) throw failed(r);
  }

  /** Unbinds `ip` from `dev`; an address already gone is not an error. */
  async deleteAddress(dev: string, ip: string): Promise<void> {
    const r = await this.#exec({ command: 'ip', args: ['addr', 'del', hostCIDR(ip), 'dev', dev] });
    if (r.code !== 0 && !/Cannot assign requested address/.test(r.stderr)) throw failed(r);
  }
}
