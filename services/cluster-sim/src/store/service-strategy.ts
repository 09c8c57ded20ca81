// Service defaulting, validation and cluster IP / node port bookkeeping: what the API
// server's registry does on create and update, reduced to what clients here observe.
import { fieldInvalid, fieldRequired } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { ServiceAllocator } from './service-allocator.ts';
import type { KubeObj } from './types.ts';
import { isPort, isRecord, PROTOCOLS } from './validation.ts';
import { ipFamilyOf } from '@slicemesh/model';

type Json = Record<string, unknown>;
const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

function specOf(obj: KubeObj): Json {
  return isRecord(obj['spec']) ? obj['spec'] : {};
}

function portsOf(spec: Json): Json[] {
  return Array.isArray(spec['ports']) ? (spec['ports'] as unknown[]).filter(isRecord) : [];
}

function usesNodePorts(type: string): boolean {
  return type === 'NodePort' || type === 'LoadBalancer';
}

/** Field problems of a Service spec, before any allocation happens. */
export function serviceCauses(obj: KubeObj): StatusCause[] {
  const spec = obj['spec'];
  if (!isRecord(spec)) return [fieldRequired('spec')];
  const causes: StatusCause[] = [];
  const type = spec['type'] ?? 'ClusterIP';
  if (typeof type !== 'string' || !TYPES.includes(type)) causes.push(fieldInvalid('spec.type', type, `supported values: ${TYPES.map((t) => `"${t}"`).join(', ')}`));
  if (type === 'ExternalName' && typeof spec['externalName'] !== 'string') causes.push(fieldRequired('spec.externalName'));
  const ports = spec['ports'] ?? [];
  if (!Array.isArray(ports)) return [...causes, fieldInvalid('spec.ports', ports, 'must be a list')];
  const names = new Set<string>();
  ports.forEach((p: unknown, i) => {
    const at = `spec.ports[${i}]`;
    if (!isRecord(p)) return void causes.push(fieldInvalid(at, p, 'must be an object'));
    if (!isPort(p['port'])) causes.push(fieldInvalid(`${at}.port`, p['port'], 'must be between 1 and 65535, inclusive'));
    const protocol = p['protocol'] ?? 'TCP';
    if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol)) causes.push(fieldInvalid(`${at}.protocol`, protocol, 'supported values: "SCTP", "TCP", "UDP"'));
    const target = p['targetPort'];
    if (target !== undefined && !isPort(target) && !(typeof target === 'string' && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(target) && target.length <= 15)) {
      causes.push(fieldInvalid(`${at}.targetPort`, target, 'must be a port number or an IANA service name'));
    }
    const name = p['name'];
    if (ports.length > 1 && (typeof name !== 'string' || name === '')) causes.push(fieldRequired(`${at}.name`));
    if (typeof name === 'string' && name !== '') {
      if (names.has(name)) causes.push({ reason: 'FieldValueDuplicate', field: `${at}.name`, message: `Duplicate value: "${name}"` });
      names.add(name);
    }
    if (p['nodePort'] !== undefined && !isPort(p['nodePort'])) causes.push(fieldInvalid(`${at}.nodePort`, p['nodePort'], 'must be between 1 and 65535, inclusive'));
  });
  const clusterIP = spec['clusterIP'];
  if (clusterIP !== undefined && clusterIP !== '' && clusterIP !== 'None' && (typeof clusterIP !== 'string' || ipFamilyOf(clusterIP) === null)) {
    causes.push(fieldInvalid('spec.clusterIP', clusterIP, 'must be a valid IP address, "None" or empty'));
  }
  return causes;
}

function defaultedPorts(spec: Json): Json[] {
  return portsOf(spec).map((p) => ({ ...p, protocol: p['protocol'] ?? 'TCP', targetPort: p['targetPort'] ?? p['port'] }));
}

/**
 * Completes a validated Service: defaults, cluster IP and node ports (taken from `prev` on
 * update when the new object leaves them out). Returns the object and the causes of a
 * failed allocation; on failure nothing stays reserved.
 */
export function completeService(obj: KubeObj, prev: KubeObj | undefined, alloc: ServiceAllocator): { obj: KubeObj; causes: StatusCause[] } {
  const spec = specOf(obj);
  const prevSpec = prev ? specOf(prev) : {};
  const type = (spec['type'] as string | undefined) ?? 'ClusterIP';
  const taken: (() => void)[] = [];
  const fail = (cause: StatusCause) => {
    for (const undo of taken) undo();
    return { obj, causes: [cause] };
  };
  const out: Json = { ...spec, type, sessionAffinity: spec['sessionAffinity'] ?? 'None' };

  if (type !== 'ExternalName') {
    const prevIP = prevSpec['clusterIP'] as string | undefined;
    let ip = spec['clusterIP'] as string | undefined;
    if ((ip === undefined || ip === '') && prevIP) ip = prevIP;
    if (prevIP && ip !== prevIP) return fail(fieldInvalid('spec.clusterIPs[0]', ip, 'may not change once set'));
    if (ip === undefined || ip === '') {
      ip = alloc.allocateIP();
      taken.push(() => alloc.releaseIP(ip!));
    } else if (ip !== 'None' && ip !== prevIP) {
      if (!alloc.reserveIP(ip)) return fail(fieldInvalid('spec.clusterIPs', [ip], `failed to allocate IP ${ip}: provided IP is already allocated`));
      const held = ip;
      taken.push(() => alloc.releaseIP(held));
    }
    out['clusterIP'] = ip;
    out['clusterIPs'] = [ip];
    const family = ip === 'None' ? 'IPv4' : (ipFamilyOf(ip) ?? 'IPv4');
    out['ipFamilies'] = spec['ipFamilies'] ?? prevSpec['ipFamilies'] ?? [family];
    out['ipFamilyPolicy'] = spec['ipFamilyPolicy'] ?? prevSpec['ipFamilyPolicy'] ?? 'SingleStack';
    out['internalTrafficPolicy'] = spec['internalTrafficPolicy'] ?? 'Cluster';
  }
  if (usesNodePorts(type)) out['externalTrafficPolicy'] = spec['externalTrafficPolicy'] ?? 'Cluster';

  const prevPorts = portsOf(prevSpec);
  const ports = defaultedPorts(spec).map((p, i) => ({ p, i }));
  const result: Json[] = [];
  for (const { p, i } of ports) {
    if (!usesNodePorts(type)) {
      const { nodePort: _drop, ...rest } = p;
      result.push(rest);
      continue;
    }
    const old = prevPorts.find((q) => q['port'] === p['port'] && (q['protocol'] ?? 'TCP') === p['protocol'])?.['nodePort'] as number | undefined;
    let nodePort = p['nodePort'] as number | undefined;
    if (nodePort === undefined && old !== undefined) nodePort = old;
    if (nodePort === undefined) {
      const n = alloc.allocateNodePort();
      taken.push(() => alloc.releaseNodePort(n));
      nodePort = n;
    } else if (nodePort !== old && !prevPorts.some((q) => q['nodePort'] === nodePort)) {
      if (!alloc.reserveNodePort(nodePort)) return fail(fieldInvalid(`spec.ports[${i}].nodePort`, nodePort, 'provided port is already allocated'));
      const held = nodePort;
      taken.push(() => alloc.releaseNodePort(held));
    }
    result.push({ ...p, nodePort });
  }
  out['ports'] = result;
  const status = prev?.['status'] ?? obj['status'] ?? { loadBalancer: {} };
  return { obj: { ...obj, spec: out, status }, causes: [] };
}

function heldIPs(obj: KubeObj | undefined): string[] {
  if (!obj) return [];
  const ips = specOf(obj)['clusterIPs'];
  return Array.isArray(ips) ? ips.filter((ip): ip is string => typeof ip === 'string' && ip !== 'None') : [];
}

function heldPorts(obj: KubeObj | undefined): number[] {
  if (!obj) return [];
  return portsOf(specOf(obj)).map((p) => p['nodePort']).filter((n): n is number => typeof n === 'number');
}

/** Releases the IPs and node ports `from` holds that `keep` does not. */
export function releaseService(from: KubeObj, keep: KubeObj | undefined, alloc: ServiceAllocator): void {
  const keepIPs = new Set(heldIPs(keep));
  const keepPorts = new Set(heldPorts(keep));
  for (const ip of heldIPs(from)) if (!keepIPs.has(ip)) alloc.releaseIP(ip);
  for (const port of heldPorts(from)) if (!keepPorts.has(port)) alloc.releaseNodePort(port);
}
