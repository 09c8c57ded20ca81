// The port a sync deletes stale UDP conntrack entries through (D.7), after its rules are in:
// the kernel cleaner runs `conntrack -D` per filter in the node's namespace (best effort, as
// kube-proxy: a failure is reported, the sync still counts as done); the recording cleaner,
// for the dry-run backend, touches no kernel and appends the commands it would have run to
// `<dry-run file>.conntrack`.

import type { Conntrack } from '@slicemesh/netfilter';
import { conntrackDeleteCommand } from '@slicemesh/netfilter';
import type { StaleFlows } from '@slicemesh/proxy-state';
import type { Clock } from '@slicemesh/runtime';

/** What one cleanup did. */
export interface ConntrackCleanupReport {
  /** `executed`: conntrack ran; `recorded`: only written down (dry-run). */
  readonly mode: 'executed' | 'recorded';
  /** The command per filter, in order. */
  readonly commands: readonly string[];
  /** Entries the kernel deleted (0 when recorded). */
  readonly deleted: number;
  /** The filters whose command failed, with the tool's message. */
  readonly failures: readonly { readonly command: string; readonly error: string }[];
}

export interface ConntrackCleaner {
  /** Deletes (or records) what `flows` name; never throws for a failing command. */
  clean(flows: readonly StaleFlows[]): Promise<ConntrackCleanupReport>;
}

export class KernelConntrackCleaner implements ConntrackCleaner {
  readonly #ct: Pick<Conntrack, 'delete'>;

  constructor(opts: { readonly conntrack: Pick<Conntrack, 'delete'> }) {
    this.#ct = opts.conntrack;
  }

  async clean(flows: readonly StaleFlows[]): Promise<ConntrackCleanupReport> {
    const commands: string[] = [];
    const failures: { command: string; error: string }[] = [];
    let deleted = 0;
    for (const f of flows) {
      const command = conntrackDeleteCommand(f.filter);
      commands.push(command);
      try {
        deleted += await this.#ct.delete(f.filter);
      } catch (err) {
        failures.push({ command, error: err instanceof Error ? err.message : String(err) });
      }
    }
    return { mode: 'executed', commands, deleted, failures };
  }
}

export interface RecordingConntrackCleanerOptions {
  /** The file the records are appended to. */
  readonly file: string;
  readonly appendFile: (path: string, text: string) => Promise<void>;
  readonly clock: Clock;
}

/**
 * Appends, per cleanup, a comment line with the time and then one `# <service port> <reason>`
 * comment and the command per filter:
 *
 *     # 2026-01-01T00:00:05.000Z
 *     # ns/dns:dns/UDP endpoint-removed
 *     conntrack -D -p udp --orig-dst 10.96.0.10 --orig-port-dst 53 --reply-src 10.244.1.2 -f ipv4
 */
export class RecordingConntrackCleaner implements ConntrackCleaner {
  readonly #o: RecordingConntrackCleanerOptions;

  constructor(opts: RecordingConntrackCleanerOptions) {
    this.#o = opts;
  }

  async clean(flows: readonly StaleFlows[]): Promise<ConntrackCleanupReport> {
    const commands = flows.map((f) => conntrackDeleteCommand(f.filter));
    const lines = [`# ${new Date(this.#o.clock.now()).toISOString()}`];
    flows.forEach((f, i) => lines.push(`# ${f.servicePort} ${f.reason}`, commands[i] ?? ''));
    try {
      await this.#o.appendFile(this.#o.file, `${lines.join('\n')}\n`);
      return { mode: 'recorded', commands, deleted: 0, failures: [] };
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      return { mode: 'recorded', commands, deleted: 0, failures: commands.map((command) => ({ command, error })) };
    }
  }
}
