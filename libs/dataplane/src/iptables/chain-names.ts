// iptables chain names (D.4.2, D.4.15): every chain the renderer creates is named here, by a
// naming object built from a prefix. kube-proxy's prefix `KUBE` gives kube-proxy's names
// exactly (a drop-in replacement); our own prefix `SLICEMESH` gives names that cannot collide
// with kube-proxy's, so both can program one node during a migration.
//
// iptables refuses chain names longer than 28 characters, so per-service chains keep as much
// of the hash as fits: `KUBE-SVC-` + 16 base32 characters (25), `SLICEMESH-SVC-` + 14 (28).
// The hash is the same one, cut shorter: SLICEMESH-SVC-XPGD46QRK7WJZT is KUBE-SVC-XPGD46QRK7WJZT7O.

import { hash16 } from '../hash.ts';
import type { DpEndpoint, DpServicePort } from '../model.ts';
import { DEFAULT_MASQUERADE_BIT, OWN_MASQUERADE_BIT, joinHostPort, upstreamPortName } from '../model.ts';

/** iptables' longest chain name (XT_EXTENSION_MAXNAMELEN is 29 with the terminating NUL). */
export const IPTABLES_CHAIN_NAME_MAX = 28;

/** Our own prefix: chains `SLICEMESH-SERVICES`, `SLICEMESH-SVC-<hash>`, … */
export const OWN_CHAIN_PREFIX = 'SLICEMESH';
/** kube-proxy's prefix: chains `KUBE-SERVICES`, `KUBE-SVC-<hash>`, … */
export const KUBE_PROXY_CHAIN_PREFIX = 'KUBE';

/**
 * Which names the iptables rules use: `own` (SLICEMESH-…, runs beside kube-proxy) or
 * `kube-proxy` (kube-proxy's own names, to replace it in place).
 */
export const IPTABLES_CHAIN_MODES = ['own', 'kube-proxy'] as const;
export type IptablesChainMode = (typeof IPTABLES_CHAIN_MODES)[number];

/** The fixed chains after the prefix, as kube-proxy spells them. */
const TOP_LEVEL = {
  services: 'SERVICES',
  externalServices: 'EXTERNAL-SERVICES',
  forward: 'FORWARD',
  nodePorts: 'NODEPORTS',
  proxyFirewall: 'PROXY-FIREWALL',
  postrouting: 'POSTROUTING',
  markMasq: 'MARK-MASQ',
} as const;

/** Per-service chain kinds (D.4.2): cluster, local, external entry, firewall, endpoint. */
const SERVICE_KINDS = ['SVC', 'SVL', 'EXT', 'FW', 'SEP'] as const;
const LONGEST_KIND = Math.max(...SERVICE_KINDS.map((k) => k.length));
/** Fewer hash characters than this (60 bits) would make collisions thinkable; refuse such prefixes. */
const MIN_HASH_LENGTH = 12;
const MAX_HASH_LENGTH = 16;

export interface ServiceChainNames {
  /** Cluster-policy endpoints. */
  readonly svc: string;
  /** Local-policy endpoints. */
  readonly svl: string;
  /** Entry point for NodePort, external and LB IP traffic. */
  readonly ext: string;
  /** loadBalancerSourceRanges filter. */
  readonly fw: string;
}

/** Every chain name one ruleset uses, from one prefix. */
export interface IptablesChainNames {
  readonly prefix: string;
  /** filter and nat: the per-service dispatch chain. */
  readonly services: string;
  /** filter: REJECT/DROP for external entry points without endpoints. */
  readonly externalServices: string;
  /** filter: what FORWARD accepts for services. */
  readonly forward: string;
  /** filter: health-check node ports; nat: NodePort dispatch. */
  readonly nodePorts: string;
  /** filter: the loadBalancerSourceRanges DROP rules. */
  readonly proxyFirewall: string;
  /** nat: turns the masquerade mark into SNAT. */
  readonly postrouting: string;
  /** nat: sets the masquerade mark. */
  readonly markMasq: string;
  /** Base32 characters of the hash in per-service names (16 for kube-proxy's prefix). */
  readonly hashLength: number;
  /** Prefixes of the per-service chains (`<prefix>-SVC-`, …): only these are ever deleted as stale. */
  readonly serviceChainPrefixes: readonly string[];
  /** Chain names of one service port: hash of `ns/name:port` + lowercase protocol. */
  service(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>): ServiceChainNames;
  /** Endpoint (`SEP`) chain: hash of `ns/name:port` + protocol + `ip:port`. */
  endpoint(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>, ep: Pick<DpEndpoint, 'ip' | 'port'>): string;
  /** True for chains this ruleset creates per service (and may delete when they go stale). */
  isServiceChain(chain: string): boolean;
}

/**
 * The naming for `prefix` (upper-case letters and digits, starting with a letter, e.g.
 * `SLICEMESH`). The hash in per-service names is as long as the 28-character limit allows, at
 * most 16. Throws for a prefix too long to leave room for the fixed names and a 12-character hash.
 */
export function iptablesChainNames(prefix: string): IptablesChainNames {
  if (!/^[A-Z][A-Z0-9]*$/.test(prefix)) throw new Error(`iptables chain prefix ${JSON.stringify(prefix)}: upper-case letters and digits, starting with a letter`);
  const head = `${prefix}-`;
  const hashLength = Math.min(MAX_HASH_LENGTH, IPTABLES_CHAIN_NAME_MAX - head.length - LONGEST_KIND - 1);
  const longestFixed = Math.max(...Object.values(TOP_LEVEL).map((n) => head.length + n.length));
  if (hashLength < MIN_HASH_LENGTH || longestFixed > IPTABLES_CHAIN_NAME_MAX) {
    throw new Error(`iptables chain prefix ${JSON.stringify(prefix)} is too long for iptables' ${IPTABLES_CHAIN_NAME_MAX}-character chain names`);
  }
  const kind = (k: (typeof SERVICE_KINDS)[number]) => `${head}${k}-`;
  const hash = (input: string) => hash16(input).slice(0, hashLength);
  const serviceChainPrefixes = SERVICE_KINDS.map(kind);
  return {
    prefix,
    services: head + TOP_LEVEL.services,
    externalServices: head + TOP_LEVEL.externalServices,
    forward: head + TOP_LEVEL.forward,
    nodePorts: head + TOP_LEVEL.nodePorts,
    proxyFirewall: head + TOP_LEVEL.proxyFirewall,
    postrouting: head + TOP_LEVEL.postrouting,
    markMasq: head + TOP_LEVEL.markMasq,
    hashLength,
    serviceChainPrefixes,
    service(sp) {
      const h = hash(upstreamPortName(sp.servicePortName) + sp.protocol.toLowerCase());
      return { svc: kind('SVC') + h, svl: kind('SVL') + h, ext: kind('EXT') + h, fw: kind('FW') + h };
    },
    endpoint(sp, ep) {
      return kind('SEP') + hash(upstreamPortName(sp.servicePortName) + sp.protocol.toLowerCase() + joinHostPort(ep.ip, ep.port));
    },
    isServiceChain(chain) {
      return serviceChainPrefixes.some((p) => chain.startsWith(p));
    },
  };
}

/** kube-proxy's names, exactly: `KUBE-SERVICES`, `KUBE-SVC-<16>`, … */
export const KUBE_PROXY_CHAINS: IptablesChainNames = iptablesChainNames(KUBE_PROXY_CHAIN_PREFIX);
/** Our own names, the default: `SLICEMESH-SERVICES`, `SLICEMESH-SVC-<14>`, … */
export const OWN_CHAINS: IptablesChainNames = iptablesChainNames(OWN_CHAIN_PREFIX);

/** The naming of a mode. */
export function iptablesChainsOf(mode: IptablesChainMode): IptablesChainNames {
  return mode === 'kube-proxy' ? KUBE_PROXY_CHAINS : OWN_CHAINS;
}

/** Chain names of one service port under `names` (default: our own). */
export function serviceChainNames(sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>, names: IptablesChainNames = OWN_CHAINS): ServiceChainNames {
  return names.service(sp);
}

/** The endpoint chain of one endpoint under `names` (default: our own). */
export function endpointChainName(
  sp: Pick<DpServicePort, 'servicePortName' | 'protocol'>,
  ep: Pick<DpEndpoint, 'ip' | 'port'>,
  names: IptablesChainNames = OWN_CHAINS,
): string {
  return names.endpoint(sp, ep);
}

/** The masquerade mark bit a mode uses unless configured: kube-proxy's 14, or our own 13 (D.4.15). */
export function defaultMasqueradeBit(mode: IptablesChainMode): number {
  return mode === 'kube-proxy' ? DEFAULT_MASQUERADE_BIT : OWN_MASQUERADE_BIT;
}
