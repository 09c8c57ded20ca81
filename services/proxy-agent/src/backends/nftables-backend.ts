// nftables: our own table. A full sync replaces the table in one transaction; otherwise one
// transaction carries only the difference from the last applied state (D.6.8, D.6.9),
// rendered from the changed services alone, and the object counts move by their difference.

import type { DpState } from '@slicemesh/dataplane';
import { isServicePortChanged, nftDesired, renderNftablesFull, renderNftablesUpdate } from '@slicemesh/dataplane';
import type { NftApplier } from '@slicemesh/netfilter';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';

export interface NftablesBackendOptions {
  readonly nft: Pick<NftApplier, 'apply'>;
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
  readonly #nft: Pick<NftApplier, 'apply'>;
  #applied: DpState | null = null;
  /** nftObjectCounts(#applied), kept up to date per changed service rather than recounted. */
  #counts: Record<string, number> = {};

  constructor(opts: NftablesBackendOptions) {
    this.#nft = opts.nft;
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    const prev = req.changedServices === null ? null : this.#applied;
    let script: string;
    let mode: BackendSyncResult['mode'];
    let changes: Record<string, number> = {};
    let counts: Record<string, number>;
    if (prev === null) {
      script = renderNftablesFull(req.state);
      mode = 'full';
      counts = nftObjectCounts(req.state);
    } else {
      // Only the changed services are rendered and compared (the rest is as applied).
      const changed = req.changedServices ?? new Set<string>();
      const update = renderNftablesUpdate(prev, req.state, { changedServicePorts: changed });
      script = update.script;
      mode = update.fullSync ? 'full' : 'partial';
      changes = Object.fromEntries(Object.entries(update.counts).map(([k, v]) => [`changed_${k}`, v]));
      if (update.fullSync) {
        counts = nftObjectCounts(req.state);
      } else {
        const only = (s: DpState): DpState => ({ ...s, servicePorts: s.servicePorts.filter((sp) => isServicePortChanged(sp, changed)) });
        const [gone, come] = [nftObjectCounts(only(prev)), nftObjectCounts(only(req.state))];
        counts = Object.fromEntries(Object.entries(this.#counts).map(([k, v]) => [k, v - (gone[k] ?? 0) + (come[k] ?? 0)]));
      }
    }
    this.#applied = null; // until the kernel has it
    await this.#nft.apply(script);
    this.#applied = req.state;
    this.#counts = counts;
    return { mode, counts, detail: { scriptLines: script === '' ? 0 : script.split('\n').length - 1, ...changes } };
  }
}
