// An in-memory `nft -f` for the flat command subset our renderer prints: tables, chains (base
// chains with hooks), sets, verdict maps, elements and rules. A script is one transaction:
// any error leaves the ruleset untouched. Like the kernel it refuses deleting a chain that is
// not empty or still named by a rule or map element, deleting a set still named by a rule,
// unknown references, and re-adding a map key with a different value.

import { tokenize } from './tokenize.ts';

export interface NftBaseSpec {
  readonly type: string;
  readonly hook: string;
  readonly priority: number;
}

export interface NftChain {
  readonly base: NftBaseSpec | null;
  readonly rules: readonly (readonly string[])[];
}

export interface NftContainer {
  readonly kind: 'set' | 'map';
  readonly type: string;
  /** key → value ('' for sets). */
  readonly elements: ReadonlyMap<string, string>;
}

export interface NftTable {
  readonly chains: ReadonlyMap<string, NftChain>;
  readonly containers: ReadonlyMap<string, NftContainer>;
}

/** `family name` → table. */
export type NftRuleset = ReadonlyMap<string, NftTable>;

export class NftError extends Error {
  readonly line: number;
  override readonly name = 'NftError';
  constructor(
    line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.line = line;
  }
}

interface MTable {
  chains: Map<string, { base: NftBaseSpec | null; rules: string[][] }>;
  containers: Map<string, { kind: 'set' | 'map'; type: string; elements: Map<string, string> }>;
}

function copy(rs: NftRuleset): Map<string, MTable> {
  const out = new Map<string, MTable>();
  for (const [k, t] of rs) {
    out.set(k, {
      chains: new Map([...t.chains].map(([n, c]) => [n, { base: c.base, rules: c.rules.map((r) => [...r]) }])),
      containers: new Map([...t.containers].map(([n, c]) => [n, { kind: c.kind, type: c.type, elements: new Map(c.elements) }])),
    });
  }
  return out;
}

/** Chains a rule or verdict names after jump/goto, and sets it names with '@'. */
function references(words: readonly string[]): { chains: string[]; sets: string[] } {
  const chains: string[] = [];
  const sets: string[] = [];
  words.forEach((w, i) => {
    if ((w === 'jump' || w === 'goto') && words[i + 1]) chains.push(words[i + 1] ?? '');
    if (w.startsWith('@')) sets.push(w.slice(1));
  });
  return { chains, sets };
}

/** The words between the first `{` and its `}`, split on top-level ';'. */
function braceBody(words: readonly string[], from: number): string[][] {
  const open = words.indexOf('{', from);
  const close = words.lastIndexOf('}');
  if (open < 0 || close < open) return [];
  const parts: string[][] = [[]];
  for (const w of words.slice(open + 1, close)) {
    if (w === ';') parts.push([]);
    else parts[parts.length - 1]?.push(w);
  }
  return parts.filter((p) => p.length > 0);
}

/** Element key and value from `{ k1 . k2 : verdict }` words. */
function elementOf(words: readonly string[]): { key: string; value: string } {
  const body = words.slice(words.indexOf('{') + 1, words.lastIndexOf('}'));
  const colon = body.indexOf(':');
  return colon < 0 ? { key: body.join(' '), value: '' } : { key: body.slice(0, colon).join(' '), value: body.slice(colon + 1).join(' ') };
}

/** Applies `script` as one transaction; throws NftError (with the line) and changes nothing on error. */
export function applyNft(ruleset: NftRuleset, script: string): NftRuleset {
  const rs = copy(ruleset);
  script.split('\n').forEach((raw, i) => {
    const n = i + 1;
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const words = tokenize(line, true);
    const [verb = '', object = '', family = '', tableName = '', name = ''] = words;
    const key = `${family} ${tableName}`;
    const fail = (why: string): never => {
      throw new NftError(n, `${why}: ${line}`);
    };
    if (object === 'table') {
      if (verb === 'add') {
        if (!rs.has(key)) rs.set(key, { chains: new Map(), containers: new Map() });
      } else if (verb === 'delete') {
        if (!rs.delete(key)) fail('no such table');
      } else fail('unsupported');
      return;
    }
    const t = rs.get(key) ?? fail('no such table');
    const chain = (c: string) => t.chains.get(c) ?? fail(`no such chain ${c}`);
    const container = (c: string) => t.containers.get(c) ?? fail(`no such set or map ${c}`);
    const checkRefs = (ws: readonly string[]): void => {
      const r = references(ws);
      for (const c of r.chains) if (!t.chains.has(c)) fail(`unknown chain ${c}`);
      for (const s of r.sets) if (!t.containers.has(s)) fail(`unknown set ${s}`);
    };
    const chainUsers = (c: string): boolean => {
      for (const ch of t.chains.values()) for (const r of ch.rules) if (references(r).chains.includes(c)) return true;
      for (const m of t.containers.values()) for (const v of m.elements.values()) if (references(tokenize(v)).chains.includes(c)) return true;
      return false;
    };
    switch (`${verb} ${object}`) {
      case 'add chain': {
        const spec = braceBody(words, 5)[0];
        let base: NftBaseSpec | null = null;
        if (spec) {
          const at = (k: string) => spec[spec.indexOf(k) + 1] ?? '';
          const priority = Number(at('priority'));
          if (!Number.isInteger(priority)) fail('priority must be numeric here');
          base = { type: at('type'), hook: at('hook'), priority };
        }
        const existing = t.chains.get(name);
        if (!existing) t.chains.set(name, { base, rules: [] });
        else if (JSON.stringify(existing.base) !== JSON.stringify(base) && base !== null) fail('chain exists with another hook');
        return;
      }
      case 'flush chain':
        chain(name).rules = [];
        return;
      case 'delete chain':
        if (chain(name).rules.length > 0) fail('chain not empty');
        if (chainUsers(name)) fail('chain in use');
        t.chains.delete(name);
        return;
      case 'add rule': {
        const body = words.slice(5);
        checkRefs(body);
        chain(name).rules.push(body);
        return;
      }
      case 'add set':
      case 'add map': {
        const typeSpec = braceBody(words, 5).find((p) => p[0] === 'type') ?? fail('missing type');
        if (!t.containers.has(name)) t.containers.set(name, { kind: object === 'map' ? 'map' : 'set', type: typeSpec.slice(1).join(' '), elements: new Map() });
        return;
      }
      case 'flush set':
      case 'flush map':
        container(name).elements.clear();
        return;
      case 'delete set':
      case 'delete map': {
        container(name);
        for (const ch of t.chains.values()) for (const r of ch.rules) if (references(r).sets.includes(name)) fail('set in use');
        t.containers.delete(name);
        return;
      }
      case 'add element': {
        const c = container(name);
        const { key: k, value } = elementOf(words);
        checkRefs(tokenize(value));
        const had = c.elements.get(k);
        if (had !== undefined && had !== value) fail('element exists with another value');
        c.elements.set(k, value);
        return;
      }
      case 'delete element': {
        const c = container(name);
        const { key: k } = elementOf(words);
        if (!c.elements.delete(k)) fail('no such element');
        return;
      }
      default:
        fail('unsupported command');
    }
  });
  return rs;
}

/** Rules of one table as `chain: rule` lines, chains sorted (for comparisons). */
export function dumpNft(ruleset: NftRuleset, table: string): string[] {
  const t = ruleset.get(table);
  if (!t) return [];
  const out: string[] = [];
  for (const name of [...t.chains.keys()].sort()) {
    const c = t.chains.get(name);
    out.push(`chain ${name}${c?.base ? ` ${c.base.type}/${c.base.hook}/${c.base.priority}` : ''}`);
    for (const r of c?.rules ?? []) out.push(`  ${r.join(' ')}`);
  }
  for (const name of [...t.containers.keys()].sort()) {
    const c = t.containers.get(name);
    out.push(`${c?.kind} ${name} ${c?.type}`);
    for (const [k, v] of [...(c?.elements ?? [])].sort()) out.push(`  ${k}${v ? ` : ${v}` : ''}`);
  }
  return out;
}
