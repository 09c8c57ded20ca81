// D.1: the proxy's model of one service port, per IP family (dual-stack nodes run one
// single-stack proxy per family).

import type { IPFamily, Protocol, Service } from '@slicemesh/model';
import { parseIP } from '@slicemesh/model';

/** API default for `sessionAffinityConfig.clientIP.timeoutSeconds`. */
export const DEFAULT_CLIENT_IP_TIMEOUT_SECONDS = 10800;

export interface ServicePortInfo {
  readonly family: IPFamily;
  readonly namespace: string;
  readonly serviceName: string;
  /** May be '' (single unnamed port). */
  readonly portName: string;
  /** `<ns>/<name>:<portName>` (upstream ServicePortName without the protocol). */
  readonly servicePortName: string;
  readonly protocol: Protocol;
  readonly port: number;
  /** Canonical cluster IP of this family; null when headless or the service has none of this family. */
  readonly clusterIP: string | null;
  readonly nodePort: number | null;
  /** spec.externalIPs of this family, canonical, in spec order. */
  readonly externalIPs: readonly string[];
  /** status.loadBalancer.ingress IPs of this family whose ipMode is VIP or unset. */
  readonly loadBalancerIPs: readonly string[];
  /** Trimmed source ranges of this family, as canonical masked CIDRs; unparsable ranges dropped. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** ClientIP affinity timeout in seconds, or null without ClientIP affinity. */
  readonly sessionAffinityTimeoutSeconds: number | null;
  readonly internalPolicyLocal: boolean;
  readonly externalPolicyLocal: boolean;
  readonly externallyAccessible: boolean;
  readonly usesClusterEndpoints: boolean;
  readonly usesLocalEndpoints: boolean;
  /** Set only for LoadBalancer services with externalTrafficPolicy Local and a non-zero port. */
  readonly healthCheckNodePort: number | null;
}

/** The key a service port is known by in plans and endpoint maps: `<ns>/<svc>:<portName>/<proto>`. */
export function servicePortKey(p: Pick<ServicePortInfo, 'servicePortName' | 'protocol'>): string {
  return `${p.servicePortName}/${p.protocol}`;
}

function clusterIPOf(service: Service, family: IPFamily): string | null {
  const spec = service.spec;
  if (spec.clusterIP === undefined || spec.clusterIP === '' || spec.clusterIP === 'None') return null;
  // clusterIPs[i] belongs to ipFamilies[i]; picking by the address's own family is the same for
  // valid objects and also copes with objects that only carry the legacy `clusterIP` field.
  const candidates = spec.clusterIPs && spec.clusterIPs.length > 0 ? spec.clusterIPs : [spec.clusterIP];
  for (const c of candidates) {
    const ip = parseIP(c);
    if (ip?.family === family) return ip.text;
  }
  return null;
}

function ipsOfFamily(ips: readonly string[], family: IPFamily): string[] {
  const out: string[] = [];
  for (const s of ips) {
    const ip = parseIP(s);
    if (ip?.family === family) out.push(ip.text);
  }
  return out;
}

function formatBytes(bytes: readonly number[], family: IPFamily): string | null {
  if (family === 'IPv4') return bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0)).toString(16));
  const ip = parseIP(groups.join(':'));
  // A masked network inside ::ffff:0:0/96 would read back as IPv4; such ranges are dropped.
  return ip?.family === 'IPv6' ? ip.text : null;
}

/** Parses `ip/prefix`, returning the family and the masked network in canonical text. */
export function parseCIDR(text: string): { readonly family: IPFamily; readonly cidr: string } | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const ip = parseIP(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!ip || !/^[0-9]{1,3}$/.test(prefixText)) return null;
  // An IPv4-mapped IPv6 network would need a 128-bit prefix; not a valid source range here.
  if (ip.family === 'IPv4' && text.slice(0, slash).includes(':')) return null;
  const prefix = Number(prefixText);
  const bits = ip.bytes.length * 8;
  if (prefix > bits) return null;
  const masked = ip.bytes.map((b, i) => {
    const keep = Math.min(8, Math.max(0, prefix - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
  const net = formatBytes(masked, ip.family);
  return net === null ? null : { family: ip.family, cidr: `${net}/${prefix}` };
}

/** API-level "externally accessible" (used to decide whether eTP applies at all). */
function apiExternallyAccessible(service: Service): boolean {
  const type = service.spec.type ?? 'ClusterIP';
  return type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && (service.spec.externalIPs?.length ?? 0) > 0);
}

/**
 * The service ports of `service` as the `family` proxy models them, in spec order.
 * ExternalName services produce nothing. Headless services (and services without a cluster
 * IP of this family) produce ports with `clusterIP: null`; the proxy programs none of those
 * (see `proxiedServicePorts`). A service without ports produces [].
 */
export function servicePortsOf(service: Service, family: IPFamily): ServicePortInfo[] {
  const spec = service.spec;
  if (spec.type === 'ExternalName') return [];
  const namespace = service.metadata.namespace ?? 'default';
  const serviceName = service.metadata.name;
  const clusterIP = clusterIPOf(service, family);
  const externalIPs = ipsOfFamily(spec.externalIPs ?? [], family);
  const loadBalancerIPs: string[] = [];
  for (const ing of service.status?.loadBalancer?.ingress ?? []) {
    if (!ing.ip || (ing.ipMode !== undefined && ing.ipMode !== 'VIP')) continue;
    const ip = parseIP(ing.ip);
    if (ip?.family === family) loadBalancerIPs.push(ip.text);
  }
  const loadBalancerSourceRanges: string[] = [];
  for (const r of spec.loadBalancerSourceRanges ?? []) {
    const c = parseCIDR(r.trim());
    if (c?.family === family) loadBalancerSourceRanges.push(c.cidr);
  }
  const sessionAffinityTimeoutSeconds =
    spec.sessionAffinity === 'ClientIP' ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_CLIENT_IP_TIMEOUT_SECONDS) : null;
  const internalPolicyLocal = spec.internalTrafficPolicy === 'Local';
  const externalPolicyLocal = spec.externalTrafficPolicy === 'Local' && apiExternallyAccessible(service);
  const needsHealthCheck = spec.type === 'LoadBalancer' && externalPolicyLocal;
  const healthCheckNodePort = needsHealthCheck && spec.healthCheckNodePort ? spec.healthCheckNodePort : null;

  return (spec.ports ?? []).map((p) => {
    const portName = p.name ?? '';
    const nodePort = p.nodePort ? p.nodePort : null;
    const externallyAccessible = nodePort !== null || loadBalancerIPs.length > 0 || externalIPs.length > 0;
    return {
      family,
      namespace,
      serviceName,
      portName,
      servicePortName: `${namespace}/${serviceName}:${portName}`,
      protocol: p.protocol ?? 'TCP',
      port: p.port,
      clusterIP,
      nodePort,
      externalIPs,
      loadBalancerIPs,
      loadBalancerSourceRanges,
      sessionAffinityTimeoutSeconds,
      internalPolicyLocal,
      externalPolicyLocal,
      externallyAccessible,
      // Cluster endpoints are needed for iTP=Cluster and for any external traffic (short-circuit
      // of node-originated traffic even under eTP=Local).
      usesClusterEndpoints: !internalPolicyLocal || externallyAccessible,
      usesLocalEndpoints: internalPolicyLocal || (externalPolicyLocal && externallyAccessible),
      healthCheckNodePort,
    };
  });
}

/** The ports the `family` proxy programs: `servicePortsOf` minus those without a cluster IP. */
export function proxiedServicePorts(service: Service, family: IPFamily): ServicePortInfo[] {
  return servicePortsOf(service, family).filter((p) => p.clusterIP !== null);
}
