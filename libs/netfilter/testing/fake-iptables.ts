// A fake iptables for one family: `iptables-restore --noflush` (through the dataplane's
// restore simulator, which refuses what the kernel refuses), `iptables-save -t T`, and
// `iptables -t T -S/-C/-I/-A/-D` for the jumps from the built-in chains. Error output and exit codes
// follow iptables 1.8 (nf_tables): `line N failed` from restore (`Error occurred at line: N`
// for a match module the kernel cannot load), 1 for a missing rule and 2 for a missing chain
// from `-C`.

import type { IptablesTables } from '@slicemesh/dataplane/testing';
import { IPTABLES_TARGETS, IptablesRestoreError, applyIptablesRestore, emptyIptables } from '@slicemesh/dataplane/testing';
import type { ExecRequest, ExecResult } from '../src/exec.ts';
import type { ExecHandler } from './recording-exec.ts';

const BUILTIN = new Set(['INPUT', 'FORWARD', 'OUTPUT', 'PREROUTING', 'POSTROUTING']);

/** Match modules the kernel loads for our rules; others fail as an unloadable match does. */
const KNOWN_MATCHES = new Set(['addrtype', 'comment', 'conntrack', 'mark', 'recent', 'statistic', 'tcp', 'udp', 'sctp', 'multiport', 'set']);

/** The first line using an unknown `-m` module, or null. */
function unknownMatchLine(script: string): { line: number; name: string } | null {
  const lines = script.split('\n');
  for (let i = 0; i < lines.length; i++) {
    for (const m of (lines[i] ?? '').matchAll(/(?:^|\s)-m (\S+)/g)) {
      if (!KNOWN_MATCHES.has(m[1] ?? '')) return { line: i + 1, name: m[1] ?? '' };
    }
  }
  return null;
}

const ok = (stdout = ''): ExecResult => ({ code: 0, stdout, stderr: '' });

function quoteWord(w: string): string {
  return /\s/.test(w) ? `"${w}"` : w;
}

export interface FakeIptablesOptions {
  /** IPv4 answers iptables*, IPv6 ip6tables*. Defaults to IPv4. */
  readonly family?: 'IPv4' | 'IPv6';
}

export class FakeIptables implements ExecHandler {
  readonly #prefix: string;
  #tables: IptablesTables = emptyIptables();
  /** Scripts restored successfully, in order. */
  readonly restores: string[] = [];

  constructor(opts: FakeIptablesOptions = {}) {
    this.#prefix = opts.family === 'IPv6' ? 'ip6tables' : 'iptables';
  }

  /** The current rules (for `traceIptables` and assertions). */
  get tables(): IptablesTables {
    return this.#tables;
  }

  /** User chains of `table`, sorted. */
  userChains(table: string): string[] {
    return [...(this.#tables.get(table)?.keys() ?? [])].filter((c) => !BUILTIN.has(c)).sort();
  }

  /** Rules of one chain as their argument text (after `-A CHAIN`). */
  rules(table: string, chain: string): string[] {
    return (this.#tables.get(table)?.get(chain) ?? []).map((r) => r.text);
  }

  handle(req: ExecRequest): ExecResult | undefined {
    if (req.command === `${this.#prefix}-restore`) return this.#restore(req);
    if (req.command === `${this.#prefix}-save`) return this.#save(req.args);
    if (req.command === this.#prefix) return this.#rule(req.args);
    return undefined;
  }

  #restore(req: ExecRequest): ExecResult {
    if (!req.args.includes('--noflush')) return { code: 2, stdout: '', stderr: 'fake: only --noflush restores are modelled\n' };
    const unknown = unknownMatchLine(req.input ?? '');
    if (unknown !== null) {
      const head = `${this.#prefix}-restore v1.8.9 (nf_tables): Couldn't load match \`${unknown.name}':No such file or directory`;
      return { code: 2, stdout: '', stderr: `${head}\n\nError occurred at line: ${unknown.line}\n` };
    }
    try {
      this.#tables = applyIptablesRestore(this.#tables, req.input ?? '');
      this.restores.push(req.input ?? '');
      return ok();
    } catch (e) {
      if (!(e instanceof IptablesRestoreError)) throw e;
      return { code: 1, stdout: '', stderr: `${this.#prefix}-restore: line ${e.line} failed: ${e.message}\n` };
    }
  }

  #save(args: readonly string[]): ExecResult {
    const only = args[args.indexOf('-t') + 1];
    const out: string[] = [];
    for (const [table, chains] of this.#tables) {
      if (args.includes('-t') && table !== only) continue;
      out.push(`*${table}`);
      for (const c of chains.keys()) out.push(BUILTIN.has(c) ? `:${c} ACCEPT [0:0]` : `:${c} - [0:0]`);
      for (const [c, rules] of chains) for (const r of rules) out.push(`-A ${c} ${r.words.map(quoteWord).join(' ')}`);
      out.push('COMMIT');
    }
    return ok(`${out.join('\n')}\n`);
  }

  #rule(argv: readonly string[]): ExecResult {
    const args = argv.filter((a) => a !== '-w');
    let table = 'filter';
    if (args[0] === '-t') {
      table = args[1] ?? '';
      args.splice(0, 2);
    }
    const [op, chain = '', ...rest] = args;
    const chains = this.#tables.get(table);
    const rules = chains?.get(chain);
    const j = rest.indexOf('-j');
    const target = j >= 0 ? rest[j + 1] : undefined;
    const missingChain = rules === undefined ? chain : target !== undefined && !IPTABLES_TARGETS.has(target) && !chains?.has(target) ? target : null;
    if (missingChain !== null) {
      return { code: 2, stdout: '', stderr: `${this.#prefix} v1.8.9 (nf_tables): Chain '${missingChain}' does not exist\n` };
    }
    if (op === '-S') {
      const head = BUILTIN.has(chain) ? `-P ${chain} ACCEPT` : `-N ${chain}`;
      return ok([head, ...(rules ?? []).map((r) => `-A ${chain} ${r.words.map(quoteWord).join(' ')}`), ''].join('\n'));
    }
    if (op === '-C') {
      const found = (rules ?? []).some((r) => r.words.length === rest.length && r.words.every((w, i) => w === rest[i]));
      return found ? ok() : { code: 1, stdout: '', stderr: `${this.#prefix}: Bad rule (does a matching rule exist in that chain?).\n` };
    }
    if (op === '-D') {
      const at = (rules ?? []).findIndex((r) => r.words.length === rest.length && r.words.every((w, i) => w === rest[i]));
      if (at < 0) return { code: 1, stdout: '', stderr: `${this.#prefix}: Bad rule (does a matching rule exist in that chain?).\n` };
      const next = new Map([...this.#tables].map(([t, cs]) => [t, new Map(cs)]));
      next.get(table)?.set(chain, (rules ?? []).filter((_, i) => i !== at));
      this.#tables = next;
      return ok();
    }
    if (op === '-I' || op === '-A') {
      const line = `${op} ${chain} ${rest.map(quoteWord).join(' ')}`;
      try {
        this.#tables = applyIptablesRestore(this.#tables, `*${table}\n${line}\nCOMMIT\n`);
        return ok();
      } catch (e) {
        if (!(e instanceof IptablesRestoreError)) throw e;
        return { code: 1, stdout: '', stderr: `${this.#prefix}: ${e.message}\n` };
      }
    }
    return { code: 2, stdout: '', stderr: `fake: ${op ?? ''} is not modelled\n` };
  }
}

