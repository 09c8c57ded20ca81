// An in-memory `iptables-restore --noflush`: parses restore text and applies it table by table
// the way the kernel would, refusing what the kernel refuses (unknown chains or targets,
// deleting a chain still referenced). Tests apply rendered scripts here and trace packets
// through the result, so partial syncs are checked against the state they produce.

import { tokenize } from './tokenize.ts';

const BUILTIN: Readonly<Record<string, readonly string[]>> = {
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  raw: ['PREROUTING', 'OUTPUT'],
};

/** The longest chain name iptables accepts. */
const CHAIN_NAME_MAX = 28;

/** Targets that are not chains. */
export const IPTABLES_TARGETS = new Set(['ACCEPT', 'DROP', 'REJECT', 'RETURN', 'DNAT', 'SNAT', 'MASQUERADE', 'MARK', 'REDIRECT']);

/** One rule: its words after `-A CHAIN`. */
export interface SimRule {
  readonly words: readonly string[];
  readonly text: string;
}

/** table → chain → rules. */
export type IptablesTables = ReadonlyMap<string, ReadonlyMap<string, readonly SimRule[]>>;

export class IptablesRestoreError extends Error {
  readonly line: number;
  override readonly name = 'IptablesRestoreError';
  constructor(
    line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.line = line;
  }
}

function targetOf(words: readonly string[]): string | null {
  const j = words.indexOf('-j');
  return j >= 0 ? (words[j + 1] ?? null) : null;
}

/** A fresh kernel: the built-in chains of every table, all empty. */
export function emptyIptables(): IptablesTables {
  return new Map(Object.entries(BUILTIN).map(([t, chains]) => [t, new Map(chains.map((c) => [c, [] as SimRule[]]))]));
}

/** Applies `script` like `iptables-restore --noflush`; throws (leaving `tables` untouched) on error. */
export function applyIptablesRestore(tables: IptablesTables, script: string): IptablesTables {
  const next = new Map<string, Map<string, SimRule[]>>();
  for (const [t, chains] of tables) next.set(t, new Map([...chains].map(([c, r]) => [c, [...r]])));
  let table: Map<string, SimRule[]> | null = null;
  let tableName = '';
  const lines = script.split('\n');
  lines.forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (line.startsWith('*')) {
      tableName = line.slice(1);
      table = next.get(tableName) ?? null;
      if (!table) throw new IptablesRestoreError(n, `unknown table ${tableName}`);
      return;
    }
    if (!table) throw new IptablesRestoreError(n, 'rule outside a table');
    const t: Map<string, SimRule[]> = table;
    if (line === 'COMMIT') {
      table = null;
      return;
    }
    if (line.startsWith(':')) {
      const chain = line.slice(1).split(' ')[0] ?? '';
      // iptables-restore: "chain name `…' too long (must be under 29 chars)".
      if (chain.length > CHAIN_NAME_MAX) throw new IptablesRestoreError(n, `chain name ${chain} too long (must be under ${CHAIN_NAME_MAX + 1} chars)`);
      // A declared user chain is created or flushed; a built-in one keeps its rules.
      if (!(BUILTIN[tableName] ?? []).includes(chain)) t.set(chain, []);
      return;
    }
    // `-S` lists the table and changes nothing (the restorer sends it to large scripts).
    if (line === '-S') return;
    const words = tokenize(line);
    const [op, chain = ''] = words;
    const rules = t.get(chain);
    if (!rules) throw new IptablesRestoreError(n, `no chain ${chain} in ${tableName}`);
    if (op === '-X') {
      if ((BUILTIN[tableName] ?? []).includes(chain)) throw new IptablesRestoreError(n, `cannot delete built-in ${chain}`);
      if (rules.length > 0) throw new IptablesRestoreError(n, `chain ${chain} is not empty`);
      for (const [other, rs] of t) {
        if (rs.some((r) => targetOf(r.words) === chain)) throw new IptablesRestoreError(n, `chain ${chain} is referenced from ${other}`);
      }
      t.delete(chain);
      return;
    }
    let rest = words.slice(2);
    let position = rules.length;
    if (op === '-I') {
      const at = Number(rest[0]);
      position = 0;
      if (Number.isInteger(at) && at > 0) {
        if (at > rules.length + 1) throw new IptablesRestoreError(n, `index ${at} too big for ${chain}`);
        position = at - 1;
        rest = rest.slice(1);
      }
    } else if (op !== '-A') {
      throw new IptablesRestoreError(n, `unsupported command ${op ?? ''}`);
    }
    const target = targetOf(rest);
    if (target !== null && !IPTABLES_TARGETS.has(target) && !t.has(target)) {
      throw new IptablesRestoreError(n, `unknown target ${target}`);
    }
    rules.splice(position, 0, { words: rest, text: rest.join(' ') });
  });
  if (table) throw new IptablesRestoreError(lines.length, 'missing COMMIT');
  return next;
}

/** Chain contents of one table as `-A CHAIN rule` lines, chains sorted (for comparisons). */
export function dumpIptablesTable(tables: IptablesTables, table: string): string[] {
  const chains = tables.get(table);
  if (!chains) return [];
  const out: string[] = [];
  for (const name of [...chains.keys()].sort()) {
    out.push(`:${name}`);
    for (const r of chains.get(name) ?? []) out.push(`-A ${name} ${r.text}`);
  }
  return out;
}
