// userspace (D.10): the proxy sockets (@slicemesh/netfilter UserspaceProxies, in NETNS when set) are
// reconciled first, so every proxy has its port; then one `iptables-restore --noflush` rewrites
// the two nat chains that REDIRECT the virtual IPs to those ports, and the jumps from
// PREROUTING and OUTPUT are checked. Every sync is full: the script is small (one rule per
// virtual address and chain). Proxy counters go to the sync log and the counts gauge.

import type { IptablesChainNames } from '@slicemesh/dataplane';
import { OWN_CHAINS, renderUserspaceRules, userspaceJumps, userspaceProxies } from '@slicemesh/dataplane';
import type { IptablesRestorer, UserspaceProxies } from '@slicemesh/netfilter';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';

export interface UserspaceBackendOptions {
  readonly restorer: Pick<IptablesRestorer, 'restore' | 'ensureJumps'>;
  readonly proxies: UserspaceProxies;
  readonly chains?: IptablesChainNames;
}

export class UserspaceBackend implements Backend {
  readonly kind = 'userspace' as const;
  readonly #opts: UserspaceBackendOptions;

  constructor(opts: UserspaceBackendOptions) {
    this.#opts = opts;
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    const { restorer, proxies } = this.#opts;
    const chains = this.#opts.chains ?? OWN_CHAINS;
    const specs = userspaceProxies(req.state);
    const ports = await proxies.sync(specs.map((s) => ({ key: s.key, protocol: s.protocol, endpoints: s.endpoints, affinityTimeoutSeconds: s.affinityTimeoutSeconds })));
    const { script, ruleCount } = renderUserspaceRules(specs, ports, { chains, nodeIPs: req.state.nodeIPs, family: req.state.family });
    await restorer.restore(script);
    const jumpsInserted = (await restorer.ensureJumps(userspaceJumps(chains))).length;
    const st = await proxies.stats();
    return {
      mode: 'full',
      counts: { proxies: specs.length, nat: ruleCount, connections: st.connections, connect_failures: st.connectFailures, retries: st.retries },
      detail: { jumpsInserted, connections: st.connections, connectFailures: st.connectFailures, retries: st.retries, exhausted: st.exhausted },
    };
  }

  /** The proxy counters (connections, connect failures, retries, exhausted). */
  stats(): ReturnType<UserspaceProxies['stats']> {
    return this.#opts.proxies.stats();
  }

  close(): Promise<void> {
    return this.#opts.proxies.close();
  }
}
