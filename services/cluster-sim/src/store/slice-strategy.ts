// EndpointSlices (discovery.k8s.io/v1): the defaults and checks upstream applies, which are
// what a controller writing slices (slicemesh's publisher) must get right: a known, immutable
// addressType, addresses valid for it, at most 1000 endpoints of 1..100 addresses, at most 100
// ports with unique DNS-label names, and port protocols defaulted to TCP.
import { isIPv4, isIPv6 } from 'node:net';
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, fieldTooMany } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { KubeObj } from './types.ts';
import { isRecord, nameProblem, PROTOCOLS } from './validation.ts';

export const ADDRESS_TYPES: readonly string[] = ['FQDN', 'IPv4', 'IPv6'];
export const MAX_ENDPOINTS = 1000;
export const MAX_PORTS = 100;
export const MAX_ADDRESSES = 100;

function addressProblem(type: string, address: unknown): string | null {
  if (typeof address !== 'string') return 'must be a string';
  if (type === 'IPv4') return isIPv4(address) ? null : 'must be a valid IPv4 address';
  if (type === 'IPv6') return isIPv6(address) ? null : 'must be a valid IPv6 address';
  if (!address.includes('.')) return 'should be a domain with at least two segments separated by dots';
  return nameProblem(address, 'subdomain');
}

function endpointCauses(type: string, endpoints: unknown): StatusCause[] {
  if (endpoints === undefined || endpoints === null) return [];
  if (!Array.isArray(endpoints)) return [fieldInvalid('endpoints', endpoints, 'must be a list')];
  if (endpoints.length > MAX_ENDPOINTS) return [fieldTooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const causes: StatusCause[] = [];
  endpoints.forEach((ep: unknown, i) => {
    const at = `endpoints[${i}]`;
    if (!isRecord(ep)) return void causes.push(fieldInvalid(at, ep, 'must be an object'));
    const addresses = ep['addresses'];
    if (!Array.isArray(addresses) || addresses.length === 0) causes.push(fieldRequired(`${at}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) causes.push(fieldTooMany(`${at}.addresses`, addresses.length, MAX_ADDRESSES));
    else {
      addresses.forEach((a: unknown, j) => {
        const problem = ADDRESS_TYPES.includes(type) ? addressProblem(type, a) : null;
        if (problem) causes.push(fieldInvalid(`${at}.addresses[${j}]`, a, problem));
      });
    }
    const node = ep['nodeName'];
    if (node !== undefined && node !== null) {
      const problem = typeof node === 'string' ? nameProblem(node, 'subdomain') : 'must be a string';
      if (problem) causes.push(fieldInvalid(`${at}.nodeName`, node, problem));
    }
    if (ep['conditions'] !== undefined && ep['conditions'] !== null && !isRecord(ep['conditions'])) causes.push(fieldInvalid(`${at}.conditions`, ep['conditions'], 'must be an object'));
  });
  return causes;
}

function portCauses(ports: unknown): StatusCause[] {
  if (ports === undefined || ports === null) return [];
  if (!Array.isArray(ports)) return [fieldInvalid('ports', ports, 'must be a list')];
  if (ports.length > MAX_PORTS) return [fieldTooMany('ports', ports.length, MAX_PORTS)];
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  ports.forEach((p: unknown, i) => {
    const at = `ports[${i}]`;
    if (!isRecord(p)) return void causes.push(fieldInvalid(at, p, 'must be an object'));
    const name = p['name'] ?? '';
    if (typeof name !== 'string') causes.push(fieldInvalid(`${at}.name`, name, 'must be a string'));
    else {
      const problem = name === '' ? null : nameProblem(name, 'label');
      if (problem) causes.push(fieldInvalid(`${at}.name`, name, problem));
      if (names.has(name)) causes.push(fieldDuplicate(`${at}.name`, name));
      names.add(name);
    }
    const port = p['port'];
    if (port !== undefined && port !== null && !(Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535)) {
      causes.push(fieldInvalid(`${at}.port`, port, 'must be between 1 and 65535, inclusive'));
    }
    const protocol = p['protocol'];
    if (protocol !== undefined && protocol !== null && !PROTOCOLS.includes(protocol as string)) causes.push(fieldNotSupported(`${at}.protocol`, protocol, ['SCTP', 'TCP', 'UDP']));
  });
  return causes;
}

export function sliceCauses(obj: KubeObj, prev: KubeObj | undefined): StatusCause[] {
  const type = obj['addressType'];
  if (type === undefined || type === null || type === '') return [fieldRequired('addressType')];
  if (!ADDRESS_TYPES.includes(type as string)) return [fieldNotSupported('addressType', type, ADDRESS_TYPES)];
  if (prev && prev['addressType'] !== type) return [fieldInvalid('addressType', type, 'field is immutable')];
  return [...endpointCauses(type as string, obj['endpoints']), ...portCauses(obj['ports'])];
}

/** Upstream's defaults: an empty endpoint list, and each port's name "" and protocol TCP. */
export function completeSlice(obj: KubeObj): KubeObj {
  const ports = obj['ports'];
  return {
    ...obj,
    endpoints: obj['endpoints'] ?? [],
    ...(Array.isArray(ports) ? { ports: ports.map((p: Record<string, unknown>) => ({ ...p, name: p['name'] ?? '', protocol: p['protocol'] ?? 'TCP' })) } : {}),
  };
}
