// Builds the backend chosen by configuration on top of the netfilter adapters.

import { OWN_CHAINS, iptablesChainsOf } from '@slicemesh/dataplane';
import type { Exec } from '@slicemesh/netfilter';
import { IpsetRestorer, IptablesRestorer, IpvsClient, NetnsUserspaceProxier, NftApplier, SysctlWriter, UserspaceProxier } from '@slicemesh/netfilter';
import type { Clock } from '@slicemesh/runtime';
import { TerminalError } from '@slicemesh/runtime';
import type { Backend } from '../backend.ts';
import type { ProxyAgentConfig } from '../config.ts';
import { DryRunBackend } from './dry-run-backend.ts';
import { IpvsBackend } from './ipvs-backend.ts';
import { IptablesBackend } from './iptables-backend.ts';
import { NftablesBackend } from './nftables-backend.ts';
import { UserspaceBackend } from './userspace-backend.ts';

export interface CreateBackendDeps {
  /** Already wrapped for the configured network namespace. */
  readonly exec: Exec;
  readonly clock: Clock;
  readonly writeFile: (path: string, text: string) => Promise<void>;
  /** A file's text, or null when it does not exist; without it nothing survives a restart. */
  readonly readFile?: (path: string) => Promise<string | null>;
  /** Reports a failed load or save of the nftables state. */
  readonly onStateError?: (err: unknown) => void;
}

type BackendConfig = Pick<ProxyAgentConfig, 'backend' | 'ipFamily' | 'syncPeriod' | 'ipvsScheduler' | 'ipvsInterface' | 'dryRunFile' | 'dryRunFormat' | 'iptablesChains'> & {
  readonly netns?: string | undefined;
  readonly stateDir?: string;
};

/**
 * The configured backend. For IPVS, first checks that `ipvsadm -L -n` works and throws a
 * TerminalError with ipvsadm's reason when it does not (retrying would not help).
 */
export async function createBackend(config: BackendConfig, deps: CreateBackendDeps): Promise<Backend> {
  switch (config.backend) {
    case 'iptables':
      return new IptablesBackend({
        restorer: new IptablesRestorer({ exec: deps.exec, family: config.ipFamily }),
        clock: deps.clock,
        jumpCheckIntervalMs: config.syncPeriod,
        chains: iptablesChainsOf(config.iptablesChains),
        // Replacing kube-proxy: what an earlier run beside it left under our own names goes (D.4.15).
        ...(config.iptablesChains === 'kube-proxy' ? { leftovers: OWN_CHAINS } : {}),
      });
    case 'nftables': {
      const { readFile } = deps;
      const file = `${config.stateDir ?? ''}/nftables-${config.ipFamily === 'IPv6' ? 'ip6' : 'ip'}.json`;
      const stateStore = config.stateDir && readFile ? { load: () => readFile(file), save: (text: string) => deps.writeFile(file, text) } : undefined;
      return new NftablesBackend({
        nft: new NftApplier({ exec: deps.exec }),
        ...(stateStore ? { stateStore, clock: deps.clock } : {}),
        ...(deps.onStateError ? { onStateError: deps.onStateError } : {}),
      });
    }
    case 'ipvs': {
      const client = new IpvsClient({ exec: deps.exec, interface: config.ipvsInterface });
      const reason = await client.unavailableReason();
      if (reason !== null) throw new TerminalError(`the ipvs backend needs IPVS, but \`ipvsadm -L -n\` fails here: ${reason.split('\n')[0]}`);
      const companion = { ipset: new IpsetRestorer({ exec: deps.exec }), iptables: new IptablesRestorer({ exec: deps.exec, family: config.ipFamily }), chains: iptablesChainsOf(config.iptablesChains) };
      return new IpvsBackend({ client, scheduler: config.ipvsScheduler, companion, sysctl: new SysctlWriter({ exec: deps.exec }) });
    }
    case 'userspace': {
      const host = config.ipFamily === 'IPv6' ? '::' : '0.0.0.0';
      const proxies = config.netns !== undefined && config.netns !== '' ? new NetnsUserspaceProxier({ netns: config.netns, host }) : new UserspaceProxier({ host });
      return new UserspaceBackend({ restorer: new IptablesRestorer({ exec: deps.exec, family: config.ipFamily }), proxies, chains: iptablesChainsOf(config.iptablesChains) });
    }
    case 'dry-run':
      return new DryRunBackend({ file: config.dryRunFile, format: config.dryRunFormat, scheduler: config.ipvsScheduler, chains: iptablesChainsOf(config.iptablesChains), ipvsInterface: config.ipvsInterface, writeFile: deps.writeFile });
    default: {
      const never: never = config.backend;
      throw new Error(`unknown backend ${String(never)}`);
    }
  }
}
