// iptables-restore script for the whole ruleset or a partial sync (D.4.12), apply with
// `iptables-restore --noflush` (`ip6tables-restore` for IPv6). Only chains we declare are
// flushed; stale per-service chains are flushed and deleted at the end of the nat table.
// Chain names come from one naming (D.4.15): our own `SLICEMESH-` prefix unless the caller
// passes kube-proxy's. The script declares, flushes and deletes only chains of that naming,
// so a ruleset under the other prefix on the same node is never touched.
//
// Partial sync: the top-level chains whose size does not grow with the cluster (KUBE-FORWARD,
// KUBE-MARK-MASQ, KUBE-POSTROUTING) are always rewritten. The dispatch chains (nat
// KUBE-SERVICES/KUBE-NODEPORTS, filter KUBE-SERVICES/KUBE-EXTERNAL-SERVICES/KUBE-NODEPORTS/
// KUBE-PROXY-FIREWALL) are rendered in full every time but written only when their content
// differs from the previous sync, because rewriting a 10k-service dispatch chain costs
// ~1.25 s in the kernel while an endpoint change leaves it untouched. Skipping an unchanged
// dispatch chain is safe: identical content references only chains that still exist.

import { createHash } from 'node:crypto';
import type { DpServicePort, DpState } from '../model.ts';
import { LARGE_CLUSTER_ENDPOINTS_THRESHOLD, isServicePortChanged, servicePortKey, sortedServicePorts } from '../model.ts';
import type { PortPolicy } from '../policy.ts';
import { portPolicy } from '../policy.ts';
import type { IptablesChainNames } from './chain-names.ts';
import { OWN_CHAINS } from './chain-names.ts';
import type { ChainSink, DispatchSink, IptablesContext } from './service-rules.ts';
import { renderDispatch, renderServiceChains } from './service-rules.ts';
import { filterChains, forwardRules, jumpInsertLines, masqueradeRules, natChains, nodePortJumpRules } from './top-level.ts';

/** What a sync remembers about one service port's chains. */
export interface IptablesServiceRecord {
  /** nat chains the port owns (SVC/SVL/EXT/FW/SEP). */
  readonly chains: readonly string[];
  /** Rules in those chains. */
  readonly natRules: number;
}

/** The part of a previous render a partial sync needs (a full result satisfies it). */
export interface IptablesPrevious {
  /** Chains owned after the previous apply (or found on the node); only the naming's `SVC/SVL/EXT/FW/SEP` ones are ever deleted. */
  readonly chains: { readonly filter: readonly string[]; readonly nat: readonly string[] };
  /** Per service-port records, keyed by `servicePortKey`; required for a partial sync. */
  readonly services?: ReadonlyMap<string, IptablesServiceRecord>;
  /** Content digests of the dispatch chains as last written. */
  readonly dispatchDigests?: Readonly<Record<string, string>>;
  /** Digest of the node-wide settings; a change forces a full sync. */
  readonly settingsDigest?: string;
}

/** One service port as rendered in a context: its dispatch lines and own chains. */
interface PortRender {
  readonly context: string;
  readonly dispatch: DispatchSink;
  readonly chains: readonly string[];
  /** The chains it declares (so flushes and refills). */
  readonly declared: readonly string[];
  /** The rules of its own chains as one block of lines ('' when none), and how many there are. */
  readonly rules: string;
  readonly ruleCount: number;
}

/**
 * Renderings kept between renders, by service-port object: a caller that renders the complete
 * ruleset on every sync (the dry-run backend) and hands unchanged ports back as the same
 * objects (the agent keeps each unchanged service's model) re-renders only the ports that
 * changed. It holds every port's rule text, so a kernel backend, which renders only the changed
 * ports anyway, goes without one. Entries go with their port objects.
 */
export class IptablesRenderCache {
  readonly #ports = new WeakMap<DpServicePort, PortRender>();
  readonly #policies = new WeakMap<DpServicePort, PortPolicy>();
  #rendered = 0;

  /** Ports rendered so far (not taken from the cache). */
  get rendered(): number {
    return this.#rendered;
  }

  policy(sp: DpServicePort): PortPolicy {
    let p = this.#policies.get(sp);
    if (p === undefined) this.#policies.set(sp, (p = portPolicy(sp)));
    return p;
  }

  /** `sp` rendered in `context` (a digest of the IptablesContext), rendering it when not kept. */
  port(sp: DpServicePort, context: string, render: () => Omit<PortRender, 'context'>): PortRender {
    const kept = this.#ports.get(sp);
    if (kept !== undefined && kept.context === context) return kept;
    const r = { context, ...render() };
    this.#rendered++;
    this.#ports.set(sp, r);
    return r;
  }
}

export interface RenderIptablesOptions {
  /**
   * Partial sync: only these service ports get their chains rewritten (keys: `servicePortKey`,
   * the service port name, or `ns/name` for every port of a service). Ignored without a
   * usable `previous` (then the sync is full).
   */
  readonly changedServicePorts?: ReadonlySet<string>;
  readonly previous?: IptablesPrevious;
  /** Insert the jumps from the built-in chains (see `renderIptablesFull`). Default false. */
  readonly includeJumps?: boolean;
  /** Override large-cluster detection (more than 1000 endpoints). */
  readonly largeClusterMode?: boolean;
  /** Chain names (D.4.15). Default `OWN_CHAINS` (SLICEMESH-…); `KUBE_PROXY_CHAINS` renders kube-proxy's. */
  readonly chains?: IptablesChainNames;
  /** Keeps each port's rendering for the next render (see IptablesRenderCache). */
  readonly cache?: IptablesRenderCache;
}

export interface IptablesRenderResult {
  /** `*filter` and `*nat` blocks for `iptables-restore --noflush`. */
  readonly script: string;
  /** Every chain we own once the script is applied. */
  readonly chains: { readonly filter: readonly string[]; readonly nat: readonly string[] };
  /** Rules in our chains once applied (jumps from built-in chains not counted). */
  readonly ruleCounts: { readonly filter: number; readonly nat: number };
  readonly services: ReadonlyMap<string, IptablesServiceRecord>;
  readonly dispatchDigests: Readonly<Record<string, string>>;
  readonly settingsDigest: string;
  /** False when a partial sync was asked for and granted. */
  readonly fullSync: boolean;
  /** Chains the script declares (so flushes and refills), per table. */
  readonly rewrittenChains: { readonly filter: readonly string[]; readonly nat: readonly string[] };
  /** Stale chains the script deletes. */
  readonly deletedChains: readonly string[];
  readonly largeClusterMode: boolean;
}

function digest(lines: readonly string[]): string {
  return createHash('sha256').update(lines.join('\n')).digest('base64');
}

function settingsDigest(state: DpState, names: IptablesChainNames): string {
  return digest([state.family, state.podCIDR ?? '', String(state.masqueradeAll), String(state.masqueradeBit), state.nodeIPs.join(','), state.primaryNodeIP ?? state.nodeIPs[0] ?? '', names.prefix]);
}

const DISPATCH_CHAINS = ['natServices', 'natNodePorts', 'filterServices', 'filterExternal', 'filterNodePorts', 'filterFirewall'] as const;

function emptyDispatch(): DispatchSink {
  return { natServices: [], natNodePorts: [], filterServices: [], filterExternal: [], filterNodePorts: [], filterFirewall: [] };
}

/** One port on its own: its dispatch lines and its own chains, for the cache. */
function renderPort(sp: DpServicePort, pol: PortPolicy, names: IptablesChainNames, ctx: IptablesContext): Omit<PortRender, 'context'> {
  const own = names.service(sp);
  const dispatch = emptyDispatch();
  renderDispatch(sp, pol, own, names, dispatch);
  const sink: ChainSink = { declared: [], rules: [] };
  const chains = renderServiceChains(sp, pol, own, ctx, sink);
  return { dispatch, chains, declared: sink.declared, rules: sink.rules.join('\n'), ruleCount: sink.rules.length };
}

/**
 * Renders the rules for `state`. With no services the script still creates and fills the
 * top-level chains (and deletes every previously owned service chain). Endpoint lists that
 * are all terminating are rendered like any other (the caller's categorisation decides).
 */
export function renderIptables(state: DpState, opts: RenderIptablesOptions = {}): IptablesRenderResult {
  const prev = opts.previous;
  const names = opts.chains ?? OWN_CHAINS;
  const settings = settingsDigest(state, names);
  const partial =
    opts.changedServicePorts !== undefined && prev?.services !== undefined && prev.settingsDigest === settings;
  const ports = sortedServicePorts(state);
  const cache = opts.cache;
  const policies = ports.map((sp) => (cache === undefined ? portPolicy(sp) : cache.policy(sp)));
  const totalEndpoints = policies.reduce((n, p) => n + p.reachable.length, 0);
  const largeCluster = opts.largeClusterMode ?? totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
  const ctx: IptablesContext = {
    chains: names,
    podCIDR: state.podCIDR,
    masqueradeAll: state.masqueradeAll,
    largeCluster,
    nodeIP: state.primaryNodeIP ?? state.nodeIPs[0] ?? null,
  };

  const dispatch = emptyDispatch();
  // With a cache, a port's rules come into `sink.rules` as one block of lines (its count is in its record).
  const sink: ChainSink = { declared: [], rules: [] };
  const services = new Map<string, IptablesServiceRecord>();
  const context = cache === undefined ? '' : JSON.stringify([names.prefix, ctx.podCIDR, ctx.masqueradeAll, ctx.largeCluster, ctx.nodeIP]);
  ports.forEach((sp, i) => {
    const pol = policies[i];
    if (!pol) return;
    const key = servicePortKey(sp);
    const kept = partial && !isServicePortChanged(sp, opts.changedServicePorts ?? new Set()) ? prev?.services?.get(key) : undefined;
    if (cache !== undefined) {
      const r = cache.port(sp, context, () => renderPort(sp, pol, names, ctx));
      for (const k of DISPATCH_CHAINS) for (const l of r.dispatch[k]) dispatch[k].push(l);
      if (kept) services.set(key, kept);
      else {
        for (const c of r.declared) sink.declared.push(c);
        if (r.rules !== '') sink.rules.push(r.rules);
        services.set(key, { chains: r.chains, natRules: r.ruleCount });
      }
      return;
    }
    const own = names.service(sp);
    renderDispatch(sp, pol, own, names, dispatch);
    if (kept) {
      services.set(key, kept);
      return;
    }
    const before = sink.rules.length;
    const chains = renderServiceChains(sp, pol, own, ctx, sink);
    services.set(key, { chains, natRules: sink.rules.length - before });
  });
  for (const line of nodePortJumpRules(state, names)) dispatch.natServices.push(line);

  const filterBodies = new Map<string, readonly string[]>([
    [names.nodePorts, dispatch.filterNodePorts],
    [names.services, dispatch.filterServices],
    [names.externalServices, dispatch.filterExternal],
    [names.forward, forwardRules(state, names)],
    [names.proxyFirewall, dispatch.filterFirewall],
  ]);
  const natDispatch = new Map<string, readonly string[]>([
    [names.nodePorts, dispatch.natNodePorts],
    [names.services, dispatch.natServices],
  ]);
  const digests: Record<string, string> = {};
  const write = (table: string, chain: string, lines: readonly string[], alwaysWrite: boolean): boolean => {
    const id = `${table}/${chain}`;
    const d = digest(lines);
    digests[id] = d;
    return alwaysWrite || !partial || prev?.dispatchDigests?.[id] !== d;
  };

  // Ownership after this sync, and what went stale since the previous one.
  const natTop = natChains(names);
  const filterTop = filterChains(names);
  const natOwned: string[] = [...natTop];
  const current = new Set<string>();
  for (const rec of services.values()) for (const c of rec.chains) current.add(c);
  for (const c of current) natOwned.push(c);
  const stale = (prev?.chains.nat ?? []).filter((c) => names.isServiceChain(c) && !current.has(c));

  const out: string[] = ['*filter'];
  const filterWritten: string[] = [];
  for (const chain of filterTop) {
    if (write('filter', chain, filterBodies.get(chain) ?? [], chain === names.forward)) filterWritten.push(chain);
  }
  for (const c of filterWritten) out.push(`:${c} - [0:0]`);
  if (opts.includeJumps) for (const l of jumpInsertLines('filter', names)) out.push(l);
  for (const c of filterWritten) for (const l of filterBodies.get(c) ?? []) out.push(l);
  out.push('COMMIT', '*nat');

  const natWritten: string[] = [];
  for (const chain of natTop) {
    const body = natDispatch.get(chain);
    if (body === undefined || write('nat', chain, body, false)) natWritten.push(chain);
  }
  for (const c of natWritten) out.push(`:${c} - [0:0]`);
  for (const c of sink.declared) out.push(`:${c} - [0:0]`);
  for (const c of stale) out.push(`:${c} - [0:0]`);
  if (opts.includeJumps) for (const l of jumpInsertLines('nat', names)) out.push(l);
  for (const c of natWritten) {
    const body = natDispatch.get(c);
    if (body) for (const l of body) out.push(l);
  }
  const masquerade = masqueradeRules(state, names);
  for (const l of masquerade) out.push(l);
  for (const l of sink.rules) out.push(l);
  for (const c of stale) out.push(`-X ${c}`);
  out.push('COMMIT', '');

  let filterRules = 0;
  for (const body of filterBodies.values()) filterRules += body.length;
  let natRules = dispatch.natServices.length + dispatch.natNodePorts.length + masquerade.length;
  for (const rec of services.values()) natRules += rec.natRules;

  return {
    script: out.join('\n'),
    chains: { filter: filterTop, nat: natOwned },
    ruleCounts: { filter: filterRules, nat: natRules },
    services,
    dispatchDigests: digests,
    settingsDigest: settings,
    fullSync: !partial,
    rewrittenChains: { filter: filterWritten, nat: [...natWritten, ...sink.declared] },
    deletedChains: stale,
    largeClusterMode: largeCluster,
  };
}

/**
 * The complete ruleset for a fresh node, as `slicemesh proxy-plan --format iptables` prints
 * it: the jumps from INPUT/FORWARD/OUTPUT/PREROUTING/POSTROUTING are inserted at the top of
 * those chains, then every chain is written. Restore format cannot say "insert unless
 * present", so applying this twice duplicates the built-in jumps (harmless: the duplicate
 * finds the same verdict) — a running agent uses `renderIptables` plus `renderIptablesJumps`.
 * `chains` picks the names (default our own, D.4.15).
 */
export function renderIptablesFull(state: DpState, chains: IptablesChainNames = OWN_CHAINS): string {
  return renderIptables(state, { includeJumps: true, chains }).script;
}
