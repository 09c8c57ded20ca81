// `slicemesh proxy-plan`: what kube-proxy on one node would program.

import type { IptablesChainMode } from '@slicemesh/dataplane';
import { IPTABLES_CHAIN_MODES, iptablesChainsOf, renderIptablesFull, renderIpvsNodePlan, renderNftablesFull } from '@slicemesh/dataplane';
import type { IPFamily, KubeObject } from '@slicemesh/model';
import { dns1123SubdomainProblem } from '@slicemesh/model';
import { proxyPlan } from '@slicemesh/proxy-state';
import { UsageError } from '../cli-error.ts';
import { dpState } from './dp-state.ts';
import { inventory } from './objects.ts';
import type { Warn } from './plan.ts';

export const PROXY_FORMATS = ['json', 'iptables', 'nftables', 'ipvs'] as const;
export type ProxyFormat = (typeof PROXY_FORMATS)[number];

export interface ProxyPlanOptions {
  readonly node: string;
  readonly format: ProxyFormat;
  /** Only this family; undefined = both (iptables: IPv4, since one restore script holds one family). */
  readonly family: IPFamily | undefined;
  /** iptables chain names and the default mark (D.4.15), as the agent's IPTABLES_CHAINS. Default `own`. */
  readonly iptablesChains?: IptablesChainMode;
  /** IPVS mode's dummy interface holding the service addresses, as the agent's IPVS_INTERFACE. Default `kube-ipvs0`. */
  readonly ipvsInterface?: string;
}

/** Reads the proxy-plan flags; throws UsageError when --node is missing or a value is unknown. */
export function proxyPlanOptions(flags: Readonly<Record<string, string | undefined>>): ProxyPlanOptions {
  const node = flags['node'];
  if (node === undefined) throw new UsageError('proxy-plan needs --node NAME');
  const problem = dns1123SubdomainProblem(node);
  if (problem !== null) throw new UsageError(`--node ${JSON.stringify(node)} ${problem}`);
  const format = flags['format'] ?? 'json';
  if (!(PROXY_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${PROXY_FORMATS.join(', ')} (got ${JSON.stringify(format)})`);
  const family = flags['ip-family'];
  if (family !== undefined && family !== 'IPv4' && family !== 'IPv6') throw new UsageError(`--ip-family must be IPv4 or IPv6 (got ${JSON.stringify(family)})`);
  const chains = flags['iptables-chains'] ?? 'own';
  if (!(IPTABLES_CHAIN_MODES as readonly string[]).includes(chains)) {
    throw new UsageError(`--iptables-chains must be one of ${IPTABLES_CHAIN_MODES.join(', ')} (got ${JSON.stringify(chains)})`);
  }
  const ipvsInterface = flags['ipvs-interface'];
  if (ipvsInterface !== undefined && !/^[A-Za-z0-9_.-]{1,15}$/.test(ipvsInterface)) throw new UsageError(`--ipvs-interface must be an interface name of 1-15 letters, digits, '_', '.', '-' (got ${JSON.stringify(ipvsInterface)})`);
  return { node, format: format as ProxyFormat, family, iptablesChains: chains as IptablesChainMode, ...(ipvsInterface !== undefined ? { ipvsInterface } : {}) };
}

/**
 * The JSON entries (format json, an array, sorted by service port) or the rules text of the
 * chosen backend. A node missing from the input is treated as a node without labels (a
 * warning says so). No services: `[]`, or a ruleset with only the fixed chains.
 */
export function proxyPlanCommand(objects: readonly KubeObject[], opts: ProxyPlanOptions, warn: Warn): { json: unknown } | { text: string } {
  const inv = inventory(objects);
  if (!inv.nodes.some((n) => n.metadata.name === opts.node)) warn(`Node ${opts.node} is not in the input; assuming a node without labels`);
  const input = { services: inv.services, slices: inv.slices, nodes: inv.nodes, nodeName: opts.node };
  const families: IPFamily[] = opts.family ? [opts.family] : ['IPv4', 'IPv6'];
  const mode = opts.iptablesChains ?? 'own';
  switch (opts.format) {
    case 'json':
      return { json: proxyPlan({ ...input, ...(opts.family ? { family: opts.family } : {}) }) };
    case 'iptables':
      return { text: renderIptablesFull(dpState(input, opts.family ?? 'IPv4', mode), iptablesChainsOf(mode)) };
    case 'nftables':
      return { text: families.map((f) => renderNftablesFull(dpState(input, f, mode))).join('') };
    case 'ipvs':
      return { text: renderIpvsNodePlan(families.map((f) => dpState(input, f, mode)), { chains: iptablesChainsOf(mode), interface: opts.ipvsInterface ?? 'kube-ipvs0' }) };
    default: {
      const never: never = opts.format;
      throw new Error(`unexpected format ${String(never)}`);
    }
  }
}
