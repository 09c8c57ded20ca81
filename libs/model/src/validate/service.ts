// Service validation (core/v1 rules for the fields slicemesh reads).

import type { IPFamily, LoadBalancerIngress, Protocol, Service, ServicePort, ServiceSpec } from '../kube.ts';
import { ipFamilyOf } from '../ip.ts';
import type { Ctx } from './fields.ts';
import {
  compact,
  fail,
  isAbsent,
  optBool,
  optChecked,
  optEnum,
  optInt,
  optList,
  optObject,
  optString,
  optStringMap,
  quote,
  reqInt,
  reqObject,
  typeName,
} from './fields.ts';
import { SERVICE_META, readMeta } from './meta.ts';
import { dns1123LabelProblem, ianaSvcNameProblem, labelValueProblem, qualifiedNameProblem } from './names.ts';
import { optIP, reqCIDR, reqIP } from './net-fields.ts';
import { openObject } from './object.ts';
import { unsetIfEmpty, unsetIfFalse, unsetIfZero } from './zero-values.ts';

export const PROTOCOLS: readonly Protocol[] = ['TCP', 'UDP', 'SCTP'];
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const;
const POLICIES = ['Cluster', 'Local'] as const;
/** Same cap as the ports of one EndpointSlice, since every service port can reach one. */
const MAX_SERVICE_PORTS = 20_000;
/** Upstream's longest ClientIP affinity timeout (one day). */
const MAX_AFFINITY_SECONDS = 86_400;

/** `appProtocol`: a qualified name such as `http` or `kubernetes.io/h2c`. */
export function readAppProtocol(ctx: Ctx, v: unknown, path: string): string | undefined {
  return optChecked(ctx, v, path, qualifiedNameProblem);
}

/**
 * `targetPort`, an IntOrString the server decodes into a plain field: 0 and "" are unset, and the
 * server then defaults them to `port` — which is what unset means to every reader here.
 */
function readTargetPort(ctx: Ctx, raw: unknown, path: string): number | string | undefined {
  const v = unsetIfZero(unsetIfEmpty(raw));
  if (isAbsent(v)) return undefined;
  if (typeof v === 'number') return reqInt(ctx, v, path, 1, 65535);
  if (typeof v === 'string') {
    const p = ianaSvcNameProblem(v);
    if (p !== null) fail(ctx, path, `${quote(v)} ${p}`);
    return v;
  }
  return fail(ctx, path, `must be a port number or a port name (got ${typeName(v)})`);
}

function readServicePort(ctx: Ctx, v: unknown, path: string): ServicePort {
  const o = reqObject(ctx, v, path);
  // name, protocol and nodePort are plain Go fields: "" and 0 are unset (F.13); appProtocol is a
  // pointer, so "" is a value, and not a qualified name.
  return compact({
    name: optChecked(ctx, unsetIfEmpty(o['name']), `${path}.name`, dns1123LabelProblem),
    protocol: optEnum(ctx, unsetIfEmpty(o['protocol']), `${path}.protocol`, PROTOCOLS) ?? 'TCP',
    appProtocol: readAppProtocol(ctx, o['appProtocol'], `${path}.appProtocol`),
    port: reqInt(ctx, o['port'], `${path}.port`, 1, 65535),
    targetPort: readTargetPort(ctx, o['targetPort'], `${path}.targetPort`),
    nodePort: optInt(ctx, unsetIfZero(o['nodePort']), `${path}.nodePort`, 1, 65535),
  });
}

/**
 * Upstream's port rules: with more than one port every port needs a name, names that are set
 * are unique (one unnamed port is fine on its own), and (port, protocol) pairs are unique.
 */
function checkPorts(ctx: Ctx, ports: readonly ServicePort[], path: string): void {
  const names = new Map<string, number>();
  const numbers = new Map<string, number>();
  ports.forEach((p, i) => {
    if (p.name === undefined) {
      if (ports.length > 1) fail(ctx, `${path}[${i}].name`, 'is required when the service has more than one port');
    } else {
      const seen = names.get(p.name);
      if (seen !== undefined) fail(ctx, `${path}[${i}].name`, `duplicate port name ${quote(p.name)} (also ${path}[${seen}])`);
      names.set(p.name, i);
    }
    const key = `${p.port}/${p.protocol}`;
    const same = numbers.get(key);
    if (same !== undefined) fail(ctx, `${path}[${i}]`, `duplicate port ${key} (also ${path}[${same}])`);
    numbers.set(key, i);
  });
}

/** A plain Go string: "" (not allocated yet) is unset; otherwise an IP or `None` (headless). */
function readClusterIP(ctx: Ctx, raw: unknown, path: string): string | undefined {
  const v = unsetIfEmpty(raw);
  if (isAbsent(v)) return undefined;
  return v === 'None' ? v : reqIP(ctx, v, path);
}

function readClusterIPs(ctx: Ctx, v: unknown, path: string, clusterIP: string | undefined): string[] | undefined {
  const ips = optList(ctx, v, path, (ip, p) => (ip === 'None' ? 'None' : reqIP(ctx, ip, p)), 2);
  if (ips === undefined) return undefined;
  if (ips.length === 2) {
    if (ips.includes('None')) fail(ctx, path, '"None" must be the only entry');
    if (ipFamilyOf(ips[0] ?? '') === ipFamilyOf(ips[1] ?? '')) fail(ctx, path, 'must hold at most one address per IP family');
  }
  if (clusterIP !== undefined && ips[0] !== clusterIP) {
    fail(ctx, `${path}[0]`, `must equal spec.clusterIP ${quote(clusterIP)}`);
  }
  return ips;
}

function readIPFamilies(ctx: Ctx, v: unknown, path: string): IPFamily[] | undefined {
  const fams = optList(ctx, v, path, (f, p) => optEnum(ctx, f, p, ['IPv4', 'IPv6'] as const) ?? fail(ctx, p, 'is required'), 2);
  if (fams?.length === 2 && fams[0] === fams[1]) fail(ctx, `${path}[1]`, `duplicate IP family ${fams[1]}`);
  return fams;
}

function readIngress(ctx: Ctx, v: unknown, path: string): LoadBalancerIngress {
  const o = reqObject(ctx, v, path);
  // ip and hostname are plain strings ("" unset); ipMode is a pointer ("" is not a mode).
  return compact({
    ip: optIP(ctx, unsetIfEmpty(o['ip']), `${path}.ip`),
    hostname: optString(ctx, unsetIfEmpty(o['hostname']), `${path}.hostname`, 253),
    ipMode: optEnum(ctx, o['ipMode'], `${path}.ipMode`, ['VIP', 'Proxy'] as const),
  });
}

function readSpec(ctx: Ctx, v: unknown): ServiceSpec {
  const s = reqObject(ctx, v, 'spec');
  const selector = optStringMap(ctx, s['selector'], 'spec.selector', qualifiedNameProblem, labelValueProblem);
  const ports = optList(ctx, s['ports'], 'spec.ports', (p, path) => readServicePort(ctx, p, path), MAX_SERVICE_PORTS);
  if (ports) checkPorts(ctx, ports, 'spec.ports');
  const clusterIP = readClusterIP(ctx, s['clusterIP'], 'spec.clusterIP');
  const affinity = optObject(ctx, s['sessionAffinityConfig'], 'spec.sessionAffinityConfig');
  const clientIP = optObject(ctx, affinity?.['clientIP'], 'spec.sessionAffinityConfig.clientIP');
  const timeoutSeconds = optInt(ctx, clientIP?.['timeoutSeconds'], 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', 1, MAX_AFFINITY_SECONDS);
  // The plain Go fields of the spec take "", 0 and false for unset (F.13): the server then
  // applies its defaults (type ClusterIP, sessionAffinity None, externalTrafficPolicy Cluster
  // where it applies), which is what every reader here assumes of an unset field. The pointer
  // fields (internalTrafficPolicy, trafficDistribution, sessionAffinityConfig) keep "".
  return compact({
    type: optEnum(ctx, unsetIfEmpty(s['type']), 'spec.type', SERVICE_TYPES),
    // An empty selector is no selector (optStringMap returns undefined): selectorless.
    selector,
    clusterIP,
    clusterIPs: readClusterIPs(ctx, s['clusterIPs'], 'spec.clusterIPs', clusterIP),
    ipFamilies: readIPFamilies(ctx, s['ipFamilies'], 'spec.ipFamilies'),
    ports,
    publishNotReadyAddresses: optBool(ctx, unsetIfFalse(s['publishNotReadyAddresses']), 'spec.publishNotReadyAddresses'),
    externalIPs: optList(ctx, s['externalIPs'], 'spec.externalIPs', (ip, p) => reqIP(ctx, ip, p), 1000),
    externalName: optString(ctx, unsetIfEmpty(s['externalName']), 'spec.externalName', 253),
    sessionAffinity: optEnum(ctx, unsetIfEmpty(s['sessionAffinity']), 'spec.sessionAffinity', ['None', 'ClientIP'] as const),
    sessionAffinityConfig: affinity ? { ...(clientIP ? { clientIP: compact({ timeoutSeconds }) } : {}) } : undefined,
    externalTrafficPolicy: optEnum(ctx, unsetIfEmpty(s['externalTrafficPolicy']), 'spec.externalTrafficPolicy', POLICIES),
    internalTrafficPolicy: optEnum(ctx, s['internalTrafficPolicy'], 'spec.internalTrafficPolicy', POLICIES),
    healthCheckNodePort: optInt(ctx, unsetIfZero(s['healthCheckNodePort']), 'spec.healthCheckNodePort', 1, 65535),
    loadBalancerSourceRanges: optList(ctx, s['loadBalancerSourceRanges'], 'spec.loadBalancerSourceRanges', (c, p) => reqCIDR(ctx, c, p), 1000),
    // Any string is accepted; unknown values behave as unset (C.2.2).
    trafficDistribution: optString(ctx, s['trafficDistribution'], 'spec.trafficDistribution', 63),
  });
}

/**
 * Validates a Service and returns a normalised copy: only the fields of the Service model are
 * kept, service ports default to protocol TCP, an empty selector becomes no selector, a
 * missing namespace becomes `default`, and "", 0, false, `null`, `[]` and `{}` in fields whose
 * zero value the API server cannot tell from unset are left out (F.13).
 * Throws InvalidObjectError naming the first bad field.
 */
export function validateService(raw: unknown, where: string): Service {
  const { ctx, o } = openObject('Service', raw, where, SERVICE_META, ['v1']);
  const metadata = readMeta(ctx, o['metadata'], 'metadata', SERVICE_META);
  const spec = readSpec(ctx, o['spec']);
  const status = optObject(ctx, o['status'], 'status');
  const lb = optObject(ctx, status?.['loadBalancer'], 'status.loadBalancer');
  const ingress = optList(ctx, lb?.['ingress'], 'status.loadBalancer.ingress', (i, p) => readIngress(ctx, i, p), 1000);
  return compact({
    apiVersion: 'v1',
    kind: 'Service' as const,
    metadata,
    spec,
    status: ingress ? { loadBalancer: { ingress } } : undefined,
  });
}
