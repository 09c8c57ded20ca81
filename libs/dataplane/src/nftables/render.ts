// `nft -f` scripts: the whole table from scratch, or one transaction taking the table from
// one state to the next that touches only what differs (D.6.8, D.6.9).

import type { DpState } from '../model.ts';
import { isServicePortChanged } from '../model.ts';
import { baseCommands, tableRef } from './base.ts';
import type { ElementContainer, NftDesired } from './desired.ts';
import { ELEMENT_CONTAINERS, nftDesired } from './desired.ts';

function setCommand(t: string, d: NftDesired, name: string, timeout: number): string {
  // "dynamic" is set up front: the kernel adds it to sets updated from the packet path anyway.
  return `add set ${t} ${name} { type ${d.addrType} ; flags dynamic,timeout ; timeout ${timeout}s ; }`;
}

function elementCommand(verb: 'add' | 'delete', t: string, container: string, key: string, value: string): string {
  const body = value === '' || verb === 'delete' ? key : `${key} : ${value}`;
  return `${verb} element ${t} ${container} { ${body} }`;
}

/**
 * The complete table for `state`, for `nft -f` on any node: applying it twice, or over an
 * older version of the table, leaves exactly this ruleset. No services → the fixed chains,
 * maps and sets only.
 */
export function renderNftablesFull(state: DpState): string {
  return fullScript(state, nftDesired(state));
}

function fullScript(state: DpState, d: NftDesired): string {
  const t = tableRef(state);
  const out = baseCommands(state, d);
  for (const name of d.chains.keys()) out.push(`add chain ${t} ${name}`);
  for (const [name, timeout] of d.affinitySets) out.push(setCommand(t, d, name, timeout));
  for (const [name, rules] of d.chains) for (const r of rules) out.push(`add rule ${t} ${name} ${r}`);
  for (const c of ELEMENT_CONTAINERS) {
    for (const [key, value] of d.elements.get(c) ?? []) out.push(elementCommand('add', t, c, key, value));
  }
  out.push('');
  return out.join('\n');
}

export interface NftablesUpdateOptions {
  /**
   * Only flush stale chains and report them in `staleChains`, for deletion in a later
   * transaction (kernels before 6.2 notice dropped references late). Default false: stale
   * chains are deleted in this transaction.
   */
  readonly deferChainDeletion?: boolean;
  /**
   * Only these service ports can differ between the two states (keys as for
   * `isServicePortChanged`: `servicePortKey`, the port name, or `ns/name`): the others are
   * neither rendered nor compared, so a one-endpoint change costs one service's objects, not
   * two whole tables (10k services: ~1 s of rendering). Correct as long as no unchanged port
   * shares an element key with a changed one, which Kubernetes' IP and NodePort allocators
   * guarantee (a key that moves between services changes both). Absent: compare everything.
   */
  readonly changedServicePorts?: ReadonlySet<string>;
}

export interface NftablesUpdate {
  /** The transaction for `nft -f`; '' when nothing changed. */
  readonly script: string;
  /** True when the fixed part changed (family, mark, node IPs) and the script is a full one. */
  readonly fullSync: boolean;
  /** Stale chains flushed but not deleted (only with `deferChainDeletion`). */
  readonly staleChains: readonly string[];
  readonly counts: {
    readonly chainsAdded: number;
    readonly chainsRewritten: number;
    readonly chainsDeleted: number;
    readonly elementsAdded: number;
    readonly elementsDeleted: number;
    readonly setsAdded: number;
    readonly setsDeleted: number;
  };
}

function sameRules(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * One transaction from `prev` (what the table holds) to `next`. Order matters to the kernel:
 * new chains exist before rules or elements name them, elements and rules stop naming a
 * chain or set before it is deleted, and a chain is flushed before it is deleted. Identical
 * states → '' (nothing to apply).
 */
export function renderNftablesUpdate(prev: DpState, next: DpState, opts: NftablesUpdateOptions = {}): NftablesUpdate {
  const changed = opts.changedServicePorts;
  const only = (s: DpState): DpState => (changed === undefined ? s : { ...s, servicePorts: s.servicePorts.filter((sp) => isServicePortChanged(sp, changed)) });
  const a = nftDesired(only(prev));
  const b = nftDesired(only(next));
  if (a.baseDigest !== b.baseDigest || tableRef(prev) !== tableRef(next)) {
    const whole = changed === undefined ? b : nftDesired(next);
    return {
      script: fullScript(next, whole),
      fullSync: true,
      staleChains: [],
      counts: { chainsAdded: whole.chains.size, chainsRewritten: 0, chainsDeleted: 0, elementsAdded: 0, elementsDeleted: 0, setsAdded: whole.affinitySets.size, setsDeleted: 0 },
    };
  }
  const t = tableRef(next);

  // Sets that vanish or change timeout go; their users must be rewritten first.
  const setsGone: string[] = [];
  const setsNew: string[] = [];
  for (const [name, timeout] of a.affinitySets) {
    const now = b.affinitySets.get(name);
    if (now === undefined) setsGone.push(name);
    else if (now !== timeout) {
      setsGone.push(name);
      setsNew.push(name);
    }
  }
  for (const name of b.affinitySets.keys()) if (!a.affinitySets.has(name)) setsNew.push(name);
  const forced = new Set<string>();
  for (const name of setsGone) for (const c of b.affinityUsers.get(name) ?? []) forced.add(c);

  const added: string[] = [];
  const rewritten: string[] = [];
  for (const [name, rules] of b.chains) {
    const old = a.chains.get(name);
    if (old === undefined) added.push(name);
    else if (forced.has(name) || !sameRules(old, rules)) rewritten.push(name);
  }
  const stale = [...a.chains.keys()].filter((c) => !b.chains.has(c));

  const delElements: string[] = [];
  const addElements: string[] = [];
  for (const c of ELEMENT_CONTAINERS) diffElements(t, c, a.elements.get(c), b.elements.get(c), delElements, addElements);

  const out: string[] = [];
  for (const c of added) out.push(`add chain ${t} ${c}`);
  for (const c of rewritten) out.push(`flush chain ${t} ${c}`);
  for (const l of delElements) out.push(l);
  for (const c of stale) out.push(`flush chain ${t} ${c}`);
  for (const s of setsGone) out.push(`delete set ${t} ${s}`);
  for (const s of setsNew) out.push(setCommand(t, b, s, b.affinitySets.get(s) ?? 0));
  for (const c of [...added, ...rewritten]) for (const r of b.chains.get(c) ?? []) out.push(`add rule ${t} ${c} ${r}`);
  for (const l of addElements) out.push(l);
  if (!opts.deferChainDeletion) for (const c of stale) out.push(`delete chain ${t} ${c}`);
  if (out.length > 0) out.push('');
  return {
    script: out.join('\n'),
    fullSync: false,
    staleChains: opts.deferChainDeletion ? stale : [],
    counts: {
      chainsAdded: added.length,
      chainsRewritten: rewritten.length,
      chainsDeleted: opts.deferChainDeletion ? 0 : stale.length,
      elementsAdded: addElements.length,
      elementsDeleted: delElements.length,
      setsAdded: setsNew.length,
      setsDeleted: setsGone.length,
    },
  };
}

/** Deletes go before adds; an element whose value changed is deleted and added again. */
function diffElements(
  t: string,
  container: ElementContainer,
  before: ReadonlyMap<string, string> | undefined,
  after: ReadonlyMap<string, string> | undefined,
  del: string[],
  add: string[],
): void {
  const a = before ?? new Map<string, string>();
  const b = after ?? new Map<string, string>();
  for (const [key, value] of a) {
    const now = b.get(key);
    if (now === undefined || now !== value) del.push(elementCommand('delete', t, container, key, value));
  }
  for (const [key, value] of b) {
    if (a.get(key) !== value) add.push(elementCommand('add', t, container, key, value));
  }
}

/** Deletes chains left over by an update made with `deferChainDeletion` (they must be empty). */
export function renderNftablesChainCleanup(state: DpState, chains: readonly string[]): string {
  if (chains.length === 0) return '';
  const t = tableRef(state);
  return [...chains.map((c) => `delete chain ${t} ${c}`), ''].join('\n');
}
