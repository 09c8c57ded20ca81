// Applies rendered iptables scripts: one `iptables-restore --noflush` per sync (atomic per
// table, touching only the chains the script declares), the jumps from the built-in chains
// ensured from a listing of those chains (restore format cannot say "insert unless present"),
// and a listing of the chains that exist, so a full sync can delete stale ones it no longer
// remembers.
//
// Why a large restore starts each table with `-S`: with --noflush, iptables-nft (1.8.7–1.8.9
// at least) records every chain a command names in a sorted linked list, to fetch only those
// chains from the kernel. Inserting into that list costs a string compare per entry already
// there, so a restore naming 60k chains (10k services) spends minutes in strcmp: 123.6 s where
// the same rules without --noflush take 3.4 s. A command that names no chain switches the
// list off for the rest of the table ("cache every chain"); `-S` is the only one that changes
// nothing (it lists the table to stdout, which we drop). It makes the tool read the table's
// rules once, which a small restore into a big table would not need, hence the threshold on
// declared chains.

import type { IptablesJump } from '@slicemesh/dataplane';
import { applyError, restoreErrorLine } from './apply-error.ts';
import type { Exec } from './exec.ts';

export interface IptablesRestorerOptions {
  readonly exec: Exec;
  /** IPv4 runs iptables-*, IPv6 ip6tables-*. Defaults to IPv4. */
  readonly family?: 'IPv4' | 'IPv6';
  /** Wait for the xtables lock (`-w`) instead of failing while another writer holds it. Defaults to true. */
  readonly wait?: boolean;
  /**
   * A table block declaring at least this many chains gets `-S` as its first line (see the
   * top of this file). Defaults to 1000; a 10k-service full sync declares about 60k.
   */
  readonly listTableAbove?: number;
}

/** Built-in chains of the tables we write, for `ensureJumps`' listings. */
type BuiltinChain = IptablesJump['chain'];

/**
 * `script` with `-S` after each `*table` line whose block declares at least `threshold` chains,
 * and how many lines it inserted. Only declarations count: after `-S` the tool reads every
 * rule of the table, which a partial sync rewriting the 10k-rule dispatch chain (one chain
 * declared, 10k jump targets) pays for: 2.64 s with `-S` against 1.56 s without, measured at
 * 10k services. Scans with indexOf rather than splitting: a 10k-service script is 13 MiB.
 */
export function withTableListing(script: string, threshold: number): { script: string; inserted: number } {
  const parts: string[] = [];
  let inserted = 0;
  let copied = 0;
  for (let at = script.startsWith('*') ? 0 : script.indexOf('\n*'); at >= 0; at = script.indexOf('\n*', at + 1)) {
    const lineStart = script[at] === '\n' ? at + 1 : at;
    const headEnd = script.indexOf('\n', lineStart);
    if (headEnd < 0) break;
    const names = new Set<string>();
    for (let from = headEnd + 1; from < script.length && names.size < threshold; ) {
      const to = script.indexOf('\n', from);
      const line = script.slice(from, to < 0 ? script.length : to);
      if (line === 'COMMIT') break;
      if (line.startsWith(':')) names.add(line.slice(1, line.indexOf(' ') < 0 ? line.length : line.indexOf(' ')));
      if (to < 0) break;
      from = to + 1;
    }
    if (names.size < threshold) continue;
    parts.push(script.slice(copied, headEnd + 1), '-S\n');
    copied = headEnd + 1;
    inserted++;
  }
  parts.push(script.slice(copied));
  return { script: parts.join(''), inserted };
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
  readonly #listTableAbove: number;

  constructor(opts: IptablesRestorerOptions) {
    this.#exec = opts.exec;
    this.#prefix = opts.family === 'IPv6' ? 'ip6tables' : 'iptables';
    this.#wait = (opts.wait ?? true) ? ['-w'] : [];
    this.#listTableAbove = opts.listTableAbove ?? 1000;
  }

  /**
   * Applies `script` with `iptables-restore --noflush`: every table block commits or none of
   * its changes do. Throws ApplyError quoting the failing line ±3 (of the text sent, which
   * has the `-S` lines a large script gets) when the tool names one.
   */
  async restore(script: string): Promise<void> {
    await this.#restore(script, this.#listTableAbove);
  }

  async #restore(script: string, listTableAbove: number): Promise<void> {
    const tool = `${this.#prefix}-restore`;
    const sent = withTableListing(script, listTableAbove).script;
    const r = await this.#exec({ command: tool, args: ['--noflush', ...this.#wait], input: sent });
    if (r.code !== 0) throw applyError(tool, r, sent, restoreErrorLine);
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
   * One `iptables-save` of every table: the user chains per table and the rules of the
   * built-in chains, for a full sync (stale chains, and which jumps are missing) at the cost
   * of one dump. (`iptables-save -t filter` costs as much as the whole dump with iptables-nft.)
   */
  async observe(): Promise<IptablesObserved> {
    const tool = `${this.#prefix}-save`;
    const r = await this.#exec({ command: tool, args: [] });
    if (r.code !== 0) throw applyError(tool, r, '', () => null);
    return parseIptablesSave(r.stdout);
  }

  /**
   * Makes sure every jump exists and inserts the missing ones at the top of their built-in
   * chain, all in one restore (in reverse, so a fresh chain ends up in the given order). A jump
   * is present when its words appear in the listing of its built-in chain: `observed` (taken
   * before the restore that created the target chains), or else one `-S CHAIN` per built-in
   * chain. One not listed word for word is checked with `-C`, which knows iptables' own
   * spelling, unless its target chain did not exist when observed (then no jump to it can).
   * (`-C` alone reads the target chain's rules too: 12 of them would read a 10k-rule dispatch
   * chain 12 times.) The target chains must exist by now. Returns the jumps it inserted ([]
   * when all were present); throws ApplyError if the insert fails.
   */
  async ensureJumps(jumps: readonly IptablesJump[], observed?: IptablesObserved): Promise<IptablesJump[]> {
    const listed = new Map<string, readonly (readonly string[])[]>();
    for (const j of jumps) {
      const key = `${j.table} ${j.chain}`;
      if (listed.has(key)) continue;
      if (observed !== undefined) {
        listed.set(key, observed.tables.get(j.table)?.builtinRules.get(j.chain) ?? []);
        continue;
      }
      const r = await this.#exec({ command: this.#prefix, args: [...this.#wait, '-t', j.table, '-S', j.chain] });
      listed.set(key, r.code === 0 ? rulesOf(r.stdout, j.chain) : []);
    }
    const missing: IptablesJump[] = [];
    for (const j of jumps) {
      const want = splitRuleArgs(j.args);
      const rules = listed.get(`${j.table} ${j.chain}`) ?? [];
      if (rules.some((words) => sameWords(words, want))) continue;
      if (observed !== undefined && !(observed.tables.get(j.table)?.userChains.includes(j.target) ?? false)) {
        missing.push(j);
        continue;
      }
      const r = await this.#exec({ command: this.#prefix, args: [...this.#wait, '-t', j.table, '-C', j.chain, ...want] });
      if (r.code !== 0) missing.push(j);
    }
    if (missing.length === 0) return [];
    const lines: string[] = [];
    for (const table of new Set(missing.map((j) => j.table))) {
      lines.push(`*${table}`);
      for (const j of [...missing].reverse()) if (j.table === table) lines.push(`-I ${j.chain} 1 ${j.args}`);
      lines.push('COMMIT');
    }
    // Never with -S: after it, iptables-nft fails to insert into a built-in chain that the
    // kernel does not have yet (a fresh namespace's nat POSTROUTING, say).
    await this.#restore(`${lines.join('\n')}\n`, Infinity);
    return missing;
  }
}

/** What `iptables-save` showed of one table. */
export interface IptablesObservedTable {
  /** User-defined chains, in listing order. */
  readonly userChains: readonly string[];
  /** Rules of the built-in chains, each as its words after `-A CHAIN`. */
  readonly builtinRules: ReadonlyMap<string, readonly (readonly string[])[]>;
  /** Rules of the user chains, each as its text after `-A CHAIN` (what a full sync compares). */
  readonly userRules: ReadonlyMap<string, readonly string[]>;
}

export interface IptablesObserved {
  readonly tables: ReadonlyMap<string, IptablesObservedTable>;
}

/** Parses `iptables-save` output (user chains have policy `-`). */
export function parseIptablesSave(text: string): IptablesObserved {
  interface Table {
    userChains: string[];
    builtinRules: Map<string, string[][]>;
    userRules: Map<string, string[]>;
    builtins: Set<string>;
  }
  const tables = new Map<string, Table>();
  let current: Table | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      current = { userChains: [], builtinRules: new Map(), userRules: new Map(), builtins: new Set() };
      tables.set(line.slice(1).trim(), current);
    } else if (current !== undefined && line.startsWith(':')) {
      const m = /^:(\S+) (\S+)/.exec(line);
      if (m?.[1] === undefined) continue;
      if (m[2] === '-') {
        current.userChains.push(m[1]);
        current.userRules.set(m[1], []);
      } else current.builtins.add(m[1]);
    } else if (current !== undefined && line.startsWith('-A ')) {
      const end = line.indexOf(' ', 3);
      const chain = end < 0 ? line.slice(3) : line.slice(3, end);
      const args = end < 0 ? '' : line.slice(end + 1);
      const user = current.userRules.get(chain);
      if (user !== undefined) {
        user.push(args);
        continue;
      }
      let rules = current.builtinRules.get(chain);
      if (rules === undefined) current.builtinRules.set(chain, (rules = []));
      rules.push(splitRuleArgs(args));
    }
  }
  return { tables: new Map([...tables].map(([name, t]) => [name, { userChains: t.userChains, builtinRules: t.builtinRules, userRules: t.userRules }])) };
}

/** The rules of `chain` in `iptables -S` output, each as its words after `-A CHAIN`. */
function rulesOf(listing: string, chain: BuiltinChain): string[][] {
  const out: string[][] = [];
  const head = `-A ${chain} `;
  for (const line of listing.split('\n')) if (line.startsWith(head)) out.push(splitRuleArgs(line.slice(head.length)));
  return out;
}

function sameWords(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((w, i) => w === b[i]);
}
