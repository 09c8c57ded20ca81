// Applies rendered iptables scripts: one `iptables-restore --noflush` per sync (atomic per
// table, touching only the chains the script declares), the jumps from the built-in chains
// ensured one by one (restore format cannot say "insert unless present"), and a listing of
// the chains that exist, so a full sync can delete stale ones it no longer remembers.

import type { IptablesJump } from '@slicemesh/dataplane';
import { applyError, restoreErrorLine } from './apply-error.ts';
import type { Exec } from './exec.ts';

export interface IptablesRestorerOptions {
  readonly exec: Exec;
  /** IPv4 runs iptables-*, IPv6 ip6tables-*. Defaults to IPv4. */
  readonly family?: 'IPv4' | 'IPv6';
  /** Wait for the xtables lock (`-w`) instead of failing while another writer holds it. Defaults to true. */
  readonly wait?: boolean;
}

/** Splits rule arguments on blanks; double quotes group words (as in `--comment "a b"`). */
export function splitRuleArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) out.push(m[1] ?? m[2] ?? '');
  return out;
}

export class IptablesRestorer {
  readonly #exec: Exec;
  readonly #prefix: 'iptables' | 'ip6tables';
  readonly #wait: readonly string[];

  constructor(opts: IptablesRestorerOptions) {
    this.#exec = opts.exec;
    this.#prefix = opts.family === 'IPv6' ? 'ip6tables' : 'iptables';
    this.#wait = (opts.wait ?? true) ? ['-w'] : [];
  }

  /**
   * Applies `script` with `iptables-restore --noflush`: every table block commits or none of
   * its changes do. Throws ApplyError quoting the failing line ±3 when the tool names one.
   */
  async restore(script: string): Promise<void> {
    const tool = `${this.#prefix}-restore`;
    const r = await this.#exec({ command: tool, args: ['--noflush', ...this.#wait], input: script });
    if (r.code !== 0) throw applyError(tool, r, script, restoreErrorLine);
  }

  /**
   * User-defined chains of `table` as `iptables-save` lists them (built-in chains excluded),
   * in listing order. A table the kernel has never seen gives [].
   */
  async userChains(table: 'filter' | 'nat'): Promise<string[]> {
    const tool = `${this.#prefix}-save`;
    const r = await this.#exec({ command: tool, args: ['-t', table] });
    if (r.code !== 0) throw applyError(tool, r, '', () => null);
    const out: string[] = [];
    for (const line of r.stdout.split('\n')) {
      // `:NAME POLICY [packets:bytes]`; user chains have policy '-'.
      const m = /^:(\S+) (\S+)/.exec(line);
      if (m?.[1] !== undefined && m[2] === '-') out.push(m[1]);
    }
    return out;
  }

  /**
   * Deletes `chains` of `table` (user chains; ones that do not exist are skipped): first every
   * rule elsewhere that jumps to one of them (as `iptables-save` prints it, removed with `-D`),
   * then the chains themselves, flushed and deleted in one restore. For chains an earlier run
   * of ours left under another naming (D.4.15). Returns how many chains it deleted.
   */
  async deleteChains(table: 'filter' | 'nat', chains: readonly string[]): Promise<number> {
    const tool = `${this.#prefix}-save`;
    const saved = await this.#exec({ command: tool, args: ['-t', table] });
    if (saved.code !== 0) throw applyError(tool, saved, '', () => null);
    const gone = new Set(chains);
    const present: string[] = [];
    const references: string[][] = [];
    for (const line of saved.stdout.split('\n')) {
      const declared = /^:(\S+) - /.exec(line)?.[1];
      if (declared !== undefined && gone.has(declared)) present.push(declared);
      const rule = /^-A (\S+) (.*)$/.exec(line);
      if (rule?.[1] === undefined || gone.has(rule[1])) continue;
      const args = splitRuleArgs(rule[2] ?? '');
      const target = args[args.indexOf('-j') + 1];
      if (args.includes('-j') && target !== undefined && gone.has(target)) references.push([rule[1], ...args]);
    }
    for (const [chain = '', ...args] of references) {
      const r = await this.#exec({ command: this.#prefix, args: [...this.#wait, '-t', table, '-D', chain, ...args] });
      if (r.code !== 0) throw applyError(this.#prefix, r, '', () => null);
    }
    if (present.length === 0) return 0;
    await this.restore([`*${table}`, ...present.map((c) => `:${c} - [0:0]`), ...present.map((c) => `-X ${c}`), 'COMMIT', ''].join('\n'));
    return present.length;
  }

  /**
   * Makes sure every jump exists, checking each with `-C` and inserting the missing ones at the
   * top of their built-in chain (in reverse, so a fresh chain ends up in the given order).
   * The target chains must already exist (apply the restore script first). Returns the jumps
   * it inserted ([] when all were present); throws ApplyError if an insert fails.
   */
  async ensureJumps(jumps: readonly IptablesJump[]): Promise<IptablesJump[]> {
    const missing: IptablesJump[] = [];
    for (const j of jumps) {
      const r = await this.#exec({ command: this.#prefix, args: [...this.#wait, '-t', j.table, '-C', j.chain, ...splitRuleArgs(j.args)] });
      if (r.code !== 0) missing.push(j);
    }
    for (const j of [...missing].reverse()) {
      const args = [...this.#wait, '-t', j.table, '-I', j.chain, '1', ...splitRuleArgs(j.args)];
      const r = await this.#exec({ command: this.#prefix, args });
      if (r.code !== 0) throw applyError(this.#prefix, r, '', () => null);
    }
    return missing;
  }
}
