// conntrack-tools' `conntrack -D`: deletes the connection-tracking entries one filter matches,
// in the namespace the Exec runs in. The filter names fields of the original direction (where
// the client sent to) and of the reply direction (who answers after NAT); see
// @slicemesh/proxy-state's staleConntrackFlows for which filters a sync needs.

import { ApplyError } from './apply-error.ts';
import type { Exec } from './exec.ts';
import { formatCommand } from './exec.ts';

/** Entries to delete: every field given must match; absent fields match anything. */
export interface ConntrackFilter {
  readonly family: 'IPv4' | 'IPv6';
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  /** Original destination address. */
  readonly origDst?: string;
  /** Original destination port. */
  readonly origDstPort?: number;
  /** Reply source address (the endpoint after DNAT). */
  readonly replySrc?: string;
}

/**
 * The arguments of `conntrack` that delete what `f` matches.
 *
 *     conntrackDeleteArgs({ family: 'IPv4', protocol: 'UDP', origDst: '10.96.0.10', origDstPort: 53, replySrc: '10.244.1.2' })
 *     // ['-D', '-p', 'udp', '--orig-dst', '10.96.0.10', '--orig-port-dst', '53', '--reply-src', '10.244.1.2', '-f', 'ipv4']
 */
export function conntrackDeleteArgs(f: ConntrackFilter): string[] {
  const args = ['-D', '-p', f.protocol.toLowerCase()];
  if (f.origDst !== undefined) args.push('--orig-dst', f.origDst);
  if (f.origDstPort !== undefined) args.push('--orig-port-dst', String(f.origDstPort));
  if (f.replySrc !== undefined) args.push('--reply-src', f.replySrc);
  args.push('-f', f.family === 'IPv6' ? 'ipv6' : 'ipv4');
  return args;
}

/** The command line that deletes what `f` matches, for logs and the dry-run record. */
export function conntrackDeleteCommand(f: ConntrackFilter): string {
  return formatCommand({ command: 'conntrack', args: conntrackDeleteArgs(f) });
}

/** conntrack's summary line: `conntrack v1.4.7 (conntrack-tools): 3 flow entries have been deleted.` */
const DELETED = /(\d+) flow entries have been deleted/;

export interface ConntrackOptions {
  readonly exec: Exec;
}

export class Conntrack {
  readonly #exec: Exec;

  constructor(opts: ConntrackOptions) {
    this.#exec = opts.exec;
  }

  /** Why `conntrack` cannot be used here (the tool's own words), or null when it runs. */
  async unavailableReason(): Promise<string | null> {
    const r = await this.#exec({ command: 'conntrack', args: ['--version'] });
    return r.code === 0 ? null : r.stderr.trim().split('\n')[0] || `conntrack --version exited ${r.code}`;
  }

  /**
   * Deletes the entries `f` matches and returns how many went. Nothing to delete is not an
   * error (the tool then exits 1 and says "0 flow entries"); any other failure throws an
   * ApplyError with the tool's message.
   */
  async delete(f: ConntrackFilter): Promise<number> {
    const r = await this.#exec({ command: 'conntrack', args: conntrackDeleteArgs(f) });
    const n = DELETED.exec(r.stderr);
    if (n?.[1] !== undefined && (r.code === 0 || n[1] === '0')) return Number(n[1]);
    throw new ApplyError('conntrack', r.code, r.stderr || `${conntrackDeleteCommand(f)} exited ${r.code}`, null, []);
  }
}
