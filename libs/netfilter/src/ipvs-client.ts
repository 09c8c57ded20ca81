// IPVS through ipvsadm: observe the virtual servers (with connection counts, which graceful
// termination needs), and apply the operations `diffIpvs` computes as one `ipvsadm -R` batch,
// binding and unbinding service IPs on the dummy interface around it.

import type { IpvsOperation, IpvsRealServer, IpvsVirtualServer } from '@slicemesh/dataplane';
import { ipvsadmArgs } from '@slicemesh/dataplane';
import { canonicalIP } from '@slicemesh/model';
import { ApplyError, applyError } from './apply-error.ts';
import type { Exec } from './exec.ts';
import { IpLink } from './ip-link.ts';

export interface ObservedRealServer extends IpvsRealServer {
  readonly activeConnections: number;
  readonly inactiveConnections: number;
}

export interface ObservedVirtualServer extends Omit<IpvsVirtualServer, 'realServers'> {
  readonly realServers: readonly ObservedRealServer[];
}

const PROTOCOLS: Readonly<Record<string, IpvsVirtualServer['protocol']>> = { TCP: 'TCP', UDP: 'UDP', SCTP: 'SCTP' };

/** `10.0.0.1:80` / `[fd00::1]:80` → canonical address and port; null for anything else. */
function hostPort(text: string): { address: string; port: number } | null {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  const address = m?.[1] !== undefined ? canonicalIP(m[1]) : null;
  return address === null || m?.[2] === undefined ? null : { address, port: Number(m[2]) };
}

/**
 * Parses `ipvsadm -L -n` (numeric listing). Firewall-mark services (`FWM`) and lines it does
 * not understand are skipped. Text without services gives [].
 *
 *     TCP  10.96.0.10:80 rr persistent 300
 *       -> 10.244.1.2:8080              Masq    1      0          0
 */
export function parseIpvsadmList(text: string): ObservedVirtualServer[] {
  const out: { vs: Omit<ObservedVirtualServer, 'realServers'>; rs: ObservedRealServer[] }[] = [];
  let current: (typeof out)[number] | null = null;
  for (const raw of text.split('\n')) {
    const words = raw.trim().split(/\s+/);
    const protocol = PROTOCOLS[words[0] ?? ''];
    if (protocol !== undefined) {
      const hp = hostPort(words[1] ?? '');
      current = null;
      if (hp === null || words[2] === undefined) continue;
      const p = words.indexOf('persistent');
      const timeout = p >= 0 ? Number(words[p + 1]) : NaN;
      current = { vs: { ...hp, protocol, scheduler: words[2], persistenceTimeout: Number.isFinite(timeout) ? timeout : null }, rs: [] };
      out.push(current);
    } else if (words[0] === '->' && current !== null) {
      const hp = hostPort(words[1] ?? '');
      const [weight, active, inactive] = [words[3], words[4], words[5]].map(Number);
      if (hp === null || weight === undefined || !Number.isFinite(weight)) continue;
      current.rs.push({ ...hp, weight, activeConnections: active ?? 0, inactiveConnections: inactive ?? 0 });
    } else if (words[0] !== '->') {
      current = null; // header lines, FWM services
    }
  }
  return out.map((e) => ({ ...e.vs, realServers: e.rs }));
}

export interface IpvsClientOptions {
  readonly exec: Exec;
  /** Dummy interface holding the service IPs. Defaults to `kube-ipvs0`. */
  readonly interface?: string;
}

export class IpvsClient {
  readonly #exec: Exec;
  readonly #link: IpLink;
  /** The dummy interface this client binds service IPs to. */
  readonly interface: string;

  constructor(opts: IpvsClientOptions) {
    this.#exec = opts.exec;
    this.#link = new IpLink({ exec: opts.exec });
    this.interface = opts.interface ?? 'kube-ipvs0';
  }

  /** True when the kernel answers `ipvsadm -L -n` (IPVS compiled in or loadable, ipvsadm installed). */
  async available(): Promise<boolean> {
    const r = await this.#exec({ command: 'ipvsadm', args: ['-L', '-n'] });
    return r.code === 0;
  }

  /** Why IPVS is unusable (ipvsadm's own words), or null when it is usable. */
  async unavailableReason(): Promise<string | null> {
    const r = await this.#exec({ command: 'ipvsadm', args: ['-L', '-n'] });
    return r.code === 0 ? null : (r.stderr.trim() || `ipvsadm -L -n exited ${r.code}`);
  }

  /** Creates the dummy interface if missing (throws ApplyError where the kernel has no dummy links). */
  async ensureInterface(): Promise<void> {
    await this.#link.ensureDummy(this.interface);
  }

  /** Addresses bound to the dummy interface, sorted; [] when the interface does not exist. */
  async boundAddresses(): Promise<string[]> {
    if (!(await this.#link.exists(this.interface))) return [];
    return this.#link.addresses(this.interface);
  }

  /** The node's own addresses of `family` (not loopback, link-local or the dummy interface's), sorted. */
  async nodeAddresses(family: 'IPv4' | 'IPv6'): Promise<string[]> {
    return this.#link.localAddresses(family, [this.interface]);
  }

  /** Every virtual server with its real servers and connection counts. */
  async virtualServers(): Promise<ObservedVirtualServer[]> {
    const r = await this.#exec({ command: 'ipvsadm', args: ['-L', '-n'] });
    if (r.code !== 0) throw new ApplyError('ipvsadm', r.code, r.stderr, null, []);
    return parseIpvsadmList(r.stdout);
  }

  /** Feeds `text` (one ipvsadm command line per line) to `ipvsadm -R`; throws ApplyError on failure. */
  async restore(text: string): Promise<void> {
    if (text.trim() === '') return;
    const r = await this.#exec({ command: 'ipvsadm', args: ['-R'], input: text });
    if (r.code !== 0) throw applyError('ipvsadm', r, text, (stderr) => {
      const m = /line (\d+)/.exec(stderr);
      return m?.[1] !== undefined ? Number(m[1]) : null;
    });
  }

  /**
   * Applies `ops` in their order: address binds, then every ipvsadm operation in one
   * `ipvsadm -R` batch, then address unbinds. Not atomic: after a failure the caller must
   * observe again before the next diff. [] does nothing.
   */
  async apply(ops: readonly IpvsOperation[]): Promise<void> {
    const lines: string[] = [];
    for (const op of ops) {
      if (op.op === 'bindAddress') await this.#link.addAddress(this.interface, op.address);
      const args = ipvsadmArgs(op);
      if (args !== null) lines.push(args);
    }
    await this.restore(lines.length > 0 ? `${lines.join('\n')}\n` : '');
    for (const op of ops) if (op.op === 'unbindAddress') await this.#link.deleteAddress(this.interface, op.address);
  }
}
