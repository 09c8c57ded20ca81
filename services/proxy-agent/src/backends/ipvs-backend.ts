// IPVS: virtual servers for every service IP (bound to a dummy interface) and NodePort, real
// servers per endpoint, the configured scheduler, persistence for ClientIP affinity (D.5).
// Every sync observes the kernel first, so the diff is against what is really there and
// quiesced TCP real servers are deleted once their connections are gone (D.5.5). With
// `companion`, the ipsets and iptables rules kube-proxy keeps in IPVS mode (D.5.4) are applied
// first, in that order (the rules name the sets): masquerade, NodePorts, source ranges, rejects.
// Without NODE_IPS the NodePort virtual servers go on the addresses the node's interfaces have.
// One backend per family shares the kernel's IPVS table and dummy interface (D.11), so each
// observes, diffs and deletes only the virtual servers and bound addresses of its own family;
// its ipsets (`-6-` names) and companion rules (ip6tables) are its family's already.

import type { IptablesChainNames, IpvsRealServer, IpvsScheduler, IpvsVirtualServer } from '@slicemesh/dataplane';
import { diffIpvs, ipvsCompanionJumps, ipvsSysctls, renderIpvs, renderIpvsCompanion } from '@slicemesh/dataplane';
import type { IpsetRestorer, IptablesRestorer, IpvsClient, ObservedVirtualServer, SysctlWriter } from '@slicemesh/netfilter';
import type { Backend, BackendSyncRequest, BackendSyncResult } from '../backend.ts';

export interface IpvsBackendOptions {
  readonly client: Pick<IpvsClient, 'interface' | 'ensureInterface' | 'boundAddresses' | 'virtualServers' | 'apply' | 'nodeAddresses'>;
  readonly scheduler: IpvsScheduler;
  /** Sets IPVS mode's kernel settings (D.5.5) before the first sync; without it they are left alone. */
  readonly sysctl?: Pick<SysctlWriter, 'ensure'>;
  /** The companion ipsets and iptables rules (D.5.4); without it only IPVS and the addresses are programmed. */
  readonly companion?: {
    readonly ipset: Pick<IpsetRestorer, 'restore'>;
    readonly iptables: Pick<IptablesRestorer, 'restore' | 'ensureJumps'>;
    readonly chains: IptablesChainNames;
  };
}

function connections(observed: readonly ObservedVirtualServer[]): (vs: IpvsVirtualServer, rs: IpvsRealServer) => number {
  return (vs, rs) => {
    const v = observed.find((o) => o.protocol === vs.protocol && o.address === vs.address && o.port === vs.port);
    const r = v?.realServers.find((o) => o.address === rs.address && o.port === rs.port);
    return r === undefined ? 0 : r.activeConnections + r.inactiveConnections;
  };
}

export class IpvsBackend implements Backend {
  readonly kind = 'ipvs' as const;
  readonly #opts: IpvsBackendOptions;
  #interfaceReady = false;

  constructor(opts: IpvsBackendOptions) {
    this.#opts = opts;
  }

  async sync(req: BackendSyncRequest): Promise<BackendSyncResult> {
    const { client, scheduler } = this.#opts;
    if (!this.#interfaceReady) {
      await client.ensureInterface();
      if (this.#opts.sysctl) await this.#opts.sysctl.ensure(ipvsSysctls(req.state.family));
      this.#interfaceReady = true;
    }
    const { companion } = this.#opts;
    let members = 0;
    if (companion) {
      const rules = renderIpvsCompanion(req.state, companion.chains, { includeJumps: false });
      await companion.ipset.restore(rules.ipsetRestore);
      await companion.iptables.restore(rules.iptablesRestore);
      await companion.iptables.ensureJumps(ipvsCompanionJumps(companion.chains));
      members = rules.sets.reduce((n, s) => n + s.entries.length, 0);
    }
    // NodePorts listen on the configured node IPs, or else on the node's own addresses as its
    // interfaces show them now (kube-proxy's default), so NODE_IPS is not needed for them.
    const nodeIPs = req.state.nodeIPs.length > 0 ? req.state.nodeIPs : await client.nodeAddresses(req.state.family);
    const desired = renderIpvs({ ...req.state, nodeIPs }, { scheduler, interface: client.interface });
    const v6 = req.state.family === 'IPv6';
    const bound = (await client.boundAddresses()).filter((ip) => ip.includes(':') === v6);
    // Ours: services on addresses we bound, and NodePort services on the node IPs, of our family.
    const owned = new Set([...bound, ...nodeIPs.filter((ip) => ip.includes(':') === v6)]);
    const observed = (await client.virtualServers()).filter((vs) => owned.has(vs.address));
    const ops = diffIpvs({ virtualServers: observed, boundAddresses: bound }, desired, { activeConnections: connections(observed) });
    await client.apply(ops);
    const realServers = desired.virtualServers.reduce((n, vs) => n + vs.realServers.length, 0);
    return {
      mode: req.changedServices === null ? 'full' : 'partial',
      counts: { virtual_servers: desired.virtualServers.length, real_servers: realServers, addresses: desired.boundAddresses.length },
      detail: { operations: ops.length, ...(companion ? { ipset_members: members } : {}) },
    };
  }
}
