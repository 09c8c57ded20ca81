// iptables: one `iptables-restore --noflush` per sync of the chains we own (D.4.12). A full
// sync first reads the node's rules (one iptables-save), so stale service chains left by an
// earlier run or a failed sync are deleted too; a partial sync rewrites only the changed
// services' chains. The jumps from the built-in chains are checked after every full sync
// (against that same reading) and at least once per `jumpCheckIntervalMs` otherwise; missing
// ones go in with one more restore. Every chain is named by `chains` (D.4.15): our own prefix
// beside kube-proxy, or kube-proxy's names to replace it; a full sync deletes only stale
// service chains of that naming, so the other proxy's chains survive it. In kube-proxy mode a
// full sync also removes what an earlier run in our own mode left (`leftovers`): those
// chains can only be ours, and their jumps would otherwise still catch traffic.

import type { IptablesChainNames, IptablesKernelChains, IptablesRenderResult } from '@slicemesh/dataplane';
import { OWN_CHAINS, narrowToKernel, renderIptables, renderIptablesJumps } from '@slicemesh/dataplane';
import type { IptablesObserved, IptablesRestorer } from '@slicemesh/netfilter';
import type { Clock } from '@slicemesh/runtime';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';

export interface IptablesBackendOptions {
  readonly restorer: Pick<IptablesRestorer, 'restore' | 'observe' | 'userChains' | 'ensureJumps' | 'deleteChains'>;
  readonly clock: Clock;
  /** Re-check the built-in jumps at least this often. */
  readonly jumpCheckIntervalMs: number;
  /** Chain names; default our own (`SLICEMESH-…`). */
  readonly chains?: IptablesChainNames;
  /** Another naming whose chains only an earlier run of ours made: a full sync deletes them and the jumps into them. */
  readonly leftovers?: IptablesChainNames;
}

function kernelChainsOf(observed: IptablesObserved): IptablesKernelChains {
  const empty = new Map<string, readonly string[]>();
  return { filter: observed.tables.get('filter')?.userRules ?? empty, nat: observed.tables.get('nat')?.userRules ?? empty };
}

export class IptablesBackend implements Backend {
  readonly kind = 'iptables' as const;
  readonly #opts: IptablesBackendOptions;
  #previous: IptablesRenderResult | null = null;
  #jumpsCheckedAt = -Infinity;

  constructor(opts: IptablesBackendOptions) {
    this.#opts = opts;
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    const { restorer, clock } = this.#opts;
    const chains = this.#opts.chains ?? OWN_CHAINS;
    const partial = req.changedServices !== null && this.#previous !== null;
    let result: IptablesRenderResult;
    let script: string;
    let observed: IptablesObserved | undefined;
    let written: number;
    let deleted: number;
    let kept = 0;
    if (partial && this.#previous !== null && req.changedServices !== null) {
      result = renderIptables(req.state, { previous: this.#previous, changedServicePorts: req.changedServices, chains });
      script = result.script;
      written = result.rewrittenChains.filter.length + result.rewrittenChains.nat.length;
      deleted = result.deletedChains.length;
    } else {
      // Observe the node (habit 7) while rendering: iptables-save reads the kernel in its own
      // process meanwhile. Then only the chains the node does not hold word for word are
      // written (a restarted agent keeps what is right), and ours that went stale are deleted.
      const observing = restorer.observe();
      observing.catch(() => undefined); // awaited below; a render error must not leave it unhandled
      result = renderIptables(req.state, { previous: { chains: { filter: [], nat: [] } }, chains });
      observed = await observing;
      const current = new Set(result.chains.nat);
      const stale = (observed.tables.get('nat')?.userChains ?? []).filter((c) => chains.isServiceChain(c) && !current.has(c));
      const narrowed = narrowToKernel(result.script, kernelChainsOf(observed), req.state.family, stale);
      script = narrowed.script;
      written = narrowed.written.filter.length + narrowed.written.nat.length;
      deleted = narrowed.deleted.length;
      kept = narrowed.kept;
    }
    this.#previous = null; // until the kernel has it
    await restorer.restore(script);
    const now = clock.now();
    let jumpsInserted = 0;
    if (result.fullSync || now - this.#jumpsCheckedAt >= this.#opts.jumpCheckIntervalMs) {
      jumpsInserted = (await restorer.ensureJumps(renderIptablesJumps(chains), observed)).length;
      this.#jumpsCheckedAt = now;
    }
    let leftoverChainsDeleted = 0;
    const leftovers = this.#opts.leftovers;
    if (result.fullSync && leftovers !== undefined) {
      for (const table of ['nat', 'filter'] as const) {
        const stale = (await restorer.userChains(table)).filter((c) => c.startsWith(`${leftovers.prefix}-`));
        if (stale.length > 0) leftoverChainsDeleted += await restorer.deleteChains(table, stale);
      }
    }
    this.#previous = result;
    return {
      mode: result.fullSync ? 'full' : 'partial',
      counts: { filter: result.ruleCounts.filter, nat: result.ruleCounts.nat },
      detail: {
        rewrittenChains: written,
        deletedChains: deleted,
        ...(result.fullSync ? { keptChains: kept } : {}),
        scriptLines: script.split('\n').length,
        jumpsInserted,
        ...(leftovers !== undefined ? { leftoverChainsDeleted } : {}),
      },
    };
  }
}
