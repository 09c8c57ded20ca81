// nftables: our own table. A full sync replaces the table in one transaction; otherwise one
// transaction carries only the difference from the last applied state (D.6.8, D.6.9),
// rendered from the changed services alone, and the object counts move by their difference.
//
// Restarts: every transaction also writes a generation number into a one-element set of the
// table, and the state it applied is saved, with that number, to a file (at most every few
// seconds, off the sync path). An agent starting on a node whose table holds the generation of
// the saved state takes that state as applied: its first sync changes only what differs, and
// the rules already in the kernel stay. Any doubt — no file, another generation (a crash
// between the apply and the save, another writer), another family — means a full sync.

import type { DpState } from '@slicemesh/dataplane';
import { TABLE_NAME, isServicePortChanged, nftDesired, renderNftablesFull, renderNftablesUpdate } from '@slicemesh/dataplane';
import type { NftApplier } from '@slicemesh/netfilter';
import type { Clock } from '@slicemesh/runtime';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';

/** Where the applied state is kept between runs (a file in production). */
export interface NftStateStore {
  /** The saved text; null when there is none. */
  load(): Promise<string | null>;
  /** Replaces the saved text (atomically). */
  save(text: string): Promise<void>;
}

export interface NftablesBackendOptions {
  readonly nft: Pick<NftApplier, 'apply'> & Partial<Pick<NftApplier, 'listSetElements'>>;
  /** Keeps the applied state across restarts; absent: every start is a full sync. */
  readonly stateStore?: NftStateStore;
  /** Paces the saves; required with stateStore. */
  readonly clock?: Clock;
  /** Least time between two saves. Defaults to 5 s. */
  readonly saveIntervalMs?: number;
  /** Reports a failed load or save (never fatal: the next start is then a full sync). */
  readonly onStateError?: (err: unknown) => void;
  /** Generation of the first apply; defaults to a random number. */
  readonly firstGeneration?: number;
}

/** The one-element set holding the generation of the last transaction. */
export const NFT_GENERATION_SET = 'sync-generation';
const STATE_VERSION = 1;

interface SavedState {
  readonly version: number;
  readonly generation: number;
  readonly state: DpState;
}

function familyOf(state: DpState): 'ip' | 'ip6' {
  return state.family === 'IPv6' ? 'ip6' : 'ip';
}

/** The commands that mark a transaction with `generation` (appended to every script). */
export function generationCommands(state: DpState, generation: number): string {
  const t = `${familyOf(state)} ${TABLE_NAME}`;
  return `add set ${t} ${NFT_GENERATION_SET} { type mark ; }\nflush set ${t} ${NFT_GENERATION_SET}\nadd element ${t} ${NFT_GENERATION_SET} { ${generation} }\n`;
}

/** Per-service objects of the table (the fixed chains and maps are not counted). */
export function nftObjectCounts(state: DpState): Record<string, number> {
  const d = nftDesired(state);
  let rules = 0;
  for (const r of d.chains.values()) rules += r.length;
  let elements = 0;
  for (const m of d.elements.values()) elements += m.size;
  return { chains: d.chains.size, rules, elements, sets: d.affinitySets.size };
}

export class NftablesBackend implements Backend {
  readonly kind = 'nftables' as const;
  readonly #nft: NftablesBackendOptions['nft'];
  readonly #opts: NftablesBackendOptions;
  #applied: DpState | null = null;
  /** nftObjectCounts(#applied), kept up to date per changed service rather than recounted. */
  #counts: Record<string, number> = {};
  #generation: number;
  #restoreTried = false;
  #unsaved: SavedState | null = null;
  #saving = false;
  #lastSave = -Infinity;

  constructor(opts: NftablesBackendOptions) {
    this.#nft = opts.nft;
    this.#opts = opts;
    this.#generation = opts.firstGeneration ?? Math.floor(Math.random() * 0xffff_ffff);
  }

  /** The state saved by an earlier run, when the kernel's table is still the one it applied. */
  async #restore(family: 'ip' | 'ip6'): Promise<DpState | null> {
    const store = this.#opts.stateStore;
    if (store === undefined || this.#nft.listSetElements === undefined) return null;
    try {
      const text = await store.load();
      if (text === null) return null;
      const saved = JSON.parse(text) as SavedState;
      if (saved.version !== STATE_VERSION || familyOf(saved.state) !== family) return null;
      const kernel = await this.#nft.listSetElements(family, TABLE_NAME, NFT_GENERATION_SET);
      if (kernel === null || kernel.length !== 1 || kernel[0] !== String(saved.generation)) return null;
      this.#generation = saved.generation;
      return saved.state;
    } catch (err) {
      this.#opts.onStateError?.(err);
      return null;
    }
  }

  // Saves the newest applied state, at most every saveIntervalMs, one write at a time.
  #scheduleSave(): void {
    const { stateStore, clock } = this.#opts;
    if (stateStore === undefined || clock === undefined || this.#saving) return;
    this.#saving = true;
    const wait = Math.max(0, this.#lastSave + (this.#opts.saveIntervalMs ?? 5000) - clock.now());
    clock.setTimer(() => {
      const pending = this.#unsaved;
      this.#unsaved = null;
      const done = (): void => {
        this.#lastSave = clock.now();
        this.#saving = false;
        if (this.#unsaved !== null) this.#scheduleSave();
      };
      if (pending === null) return done();
      stateStore.save(JSON.stringify(pending)).catch((err: unknown) => this.#opts.onStateError?.(err)).finally(done);
    }, wait);
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    let prev = req.changedServices === null ? null : this.#applied;
    let restored = false;
    if (!this.#restoreTried) {
      this.#restoreTried = true;
      prev = await this.#restore(familyOf(req.state));
      restored = prev !== null;
    }
    let script: string;
    let mode: BackendSyncResult['mode'];
    let changes: Record<string, number> = {};
    let counts: Record<string, number>;
    if (prev === null) {
      script = renderNftablesFull(req.state);
      mode = 'full';
      counts = nftObjectCounts(req.state);
    } else {
      // Only the changed services are rendered and compared (the rest is as applied); after a
      // restart everything is compared, since nobody knows what changed meanwhile.
      const changed = req.changedServices ?? new Set<string>();
      const update = restored ? renderNftablesUpdate(prev, req.state) : renderNftablesUpdate(prev, req.state, { changedServicePorts: changed });
      script = update.script;
      mode = update.fullSync ? 'full' : 'partial';
      changes = Object.fromEntries(Object.entries(update.counts).map(([k, v]) => [`changed_${k}`, v]));
      if (update.fullSync || restored) {
        counts = nftObjectCounts(req.state);
      } else {
        const only = (s: DpState): DpState => ({ ...s, servicePorts: s.servicePorts.filter((sp) => isServicePortChanged(sp, changed)) });
        const [gone, come] = [nftObjectCounts(only(prev)), nftObjectCounts(only(req.state))];
        counts = Object.fromEntries(Object.entries(this.#counts).map(([k, v]) => [k, v - (gone[k] ?? 0) + (come[k] ?? 0)]));
      }
    }
    this.#applied = null; // until the kernel has it
    // An empty script changes nothing in the kernel, so it needs no new generation either.
    const marked = this.#opts.stateStore === undefined || script.trim() === '' ? script : `${script}${generationCommands(req.state, (this.#generation + 1) >>> 0)}`;
    await this.#nft.apply(marked);
    if (marked !== script) this.#generation = (this.#generation + 1) >>> 0;
    this.#applied = req.state;
    this.#counts = counts;
    if (this.#opts.stateStore !== undefined) {
      this.#unsaved = { version: STATE_VERSION, generation: this.#generation, state: req.state };
      this.#scheduleSave();
    }
    return { mode, counts, detail: { scriptLines: script === '' ? 0 : script.split('\n').length - 1, ...changes, ...(restored ? { restored: true } : {}) } };
  }
}
