// dry-run: programs nothing; after every sync the file holds the complete ruleset the chosen
// backend would have on this node (what `slicemesh proxy-plan --format X` prints), written
// atomically so a reader never sees half a file. For iptables it keeps each service port's
// rendering between syncs (IptablesRenderCache): a sync re-renders only the ports that changed,
// where rendering all of them took ~50 ms per sync at 1000 services.

import type { DpState, IptablesChainNames } from '@slicemesh/dataplane';
import { IptablesRenderCache, OWN_CHAINS, renderIptables, renderIpvs, renderIpvsNodePlan, renderNftablesFull } from '@slicemesh/dataplane';
import type { IpvsScheduler } from '@slicemesh/dataplane';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';
import { nftObjectCounts } from './nftables-backend.ts';

export interface DryRunBackendOptions {
  readonly file: string;
  readonly format: 'iptables' | 'nftables' | 'ipvs';
  readonly scheduler: IpvsScheduler;
  /** iptables chain names (D.4.15); default our own (`SLICEMESH-…`). */
  readonly chains?: IptablesChainNames;
  /** IPVS dummy interface; default `kube-ipvs0`. */
  readonly ipvsInterface?: string;
  /** Replaces the file's content (atomically in production: write a temporary file, rename). */
  readonly writeFile: (path: string, text: string) => Promise<void>;
}

function render(state: DpState, opts: DryRunBackendOptions, cache: IptablesRenderCache): { text: string; counts: Record<string, number> } {
  switch (opts.format) {
    case 'iptables': {
      const r = renderIptables(state, { includeJumps: true, chains: opts.chains ?? OWN_CHAINS, cache });
      return { text: r.script, counts: { filter: r.ruleCounts.filter, nat: r.ruleCounts.nat } };
    }
    case 'nftables':
      return { text: renderNftablesFull(state), counts: nftObjectCounts(state) };
    case 'ipvs': {
      const r = renderIpvs(state, { scheduler: opts.scheduler });
      const realServers = r.virtualServers.reduce((n, vs) => n + vs.realServers.length, 0);
      const text = renderIpvsNodePlan([state], { chains: opts.chains ?? OWN_CHAINS, scheduler: opts.scheduler, ...(opts.ipvsInterface ? { interface: opts.ipvsInterface } : {}) });
      return { text, counts: { virtual_servers: r.virtualServers.length, real_servers: realServers, addresses: r.boundAddresses.length } };
    }
    default: {
      const never: never = opts.format;
      throw new Error(`unknown dry-run format ${String(never)}`);
    }
  }
}

export class DryRunBackend implements Backend {
  readonly kind = 'dry-run' as const;
  readonly #opts: DryRunBackendOptions;
  readonly #cache = new IptablesRenderCache();

  constructor(opts: DryRunBackendOptions) {
    this.#opts = opts;
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    const { text, counts } = render(req.state, this.#opts, this.#cache);
    await this.#opts.writeFile(this.#opts.file, text);
    return { mode: req.changedServices === null ? 'full' : 'partial', counts, detail: { file: this.#opts.file, format: this.#opts.format } };
  }
}
