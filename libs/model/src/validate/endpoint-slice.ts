// EndpointSlice validation (discovery/v1 rules and API caps, A.8.2).

import type { AddressType, Endpoint, EndpointHints, EndpointSlice, EndpointSlicePort } from '../kube.ts';
import { API_MAX_ADDRESSES_PER_ENDPOINT, API_MAX_ENDPOINTS_PER_SLICE, API_MAX_PORTS_PER_SLICE, API_MAX_ZONE_HINTS, DISCOVERY_API_VERSION } from '../constants.ts';
import type { Ctx } from './fields.ts';
import { compact, fail, optBool, optInt, optEnum, optList, optObject, quote, reqArray, reqChecked, reqEnum, reqObject } from './fields.ts';
import { NAMESPACED_SUBDOMAIN_META, readMeta } from './meta.ts';
import { dns1123LabelProblem, dns1123SubdomainProblem, labelValueProblem } from './names.ts';
import { reqIP } from './net-fields.ts';
import { optNameOrEmpty, readObjectReference } from './endpoints.ts';
import { openObject } from './object.ts';
import { PROTOCOLS, readAppProtocol } from './service.ts';

const ADDRESS_TYPES: readonly AddressType[] = ['IPv4', 'IPv6', 'FQDN', 'IP'];
/** Upstream caps node hints like zone hints. */
const MAX_NODE_HINTS = 8;

function readAddress(ctx: Ctx, v: unknown, path: string, type: AddressType): string {
  switch (type) {
    case 'IPv4':
    case 'IPv6':
      return reqIP(ctx, v, path, type);
    case 'IP':
      return reqIP(ctx, v, path);
    case 'FQDN':
      return reqChecked(ctx, v, path, dns1123SubdomainProblem);
    default: {
      const never: never = type;
      return never;
    }
  }
}

function readHints(ctx: Ctx, v: unknown, path: string): EndpointHints | undefined {
  const o = optObject(ctx, v, path);
  if (o === undefined) return undefined;
  const named = (field: string, problem: (s: string) => string | null, max: number): { name: string }[] | undefined =>
    optList(ctx, o[field], `${path}.${field}`, (h, p) => ({ name: reqChecked(ctx, reqObject(ctx, h, p)['name'], `${p}.name`, problem) }), max);
  const nonEmpty = (s: string): string | null => (s === '' ? 'must not be empty' : labelValueProblem(s));
  return compact({
    forZones: named('forZones', nonEmpty, API_MAX_ZONE_HINTS),
    forNodes: named('forNodes', dns1123SubdomainProblem, MAX_NODE_HINTS),
  });
}

function readEndpoint(ctx: Ctx, v: unknown, path: string, type: AddressType): Endpoint {
  const o = reqObject(ctx, v, path);
  const addresses = reqArray(ctx, o['addresses'], `${path}.addresses`, API_MAX_ADDRESSES_PER_ENDPOINT).map((a, i) =>
    readAddress(ctx, a, `${path}.addresses[${i}]`, type),
  );
  if (addresses.length === 0) fail(ctx, `${path}.addresses`, 'must have at least one address');
  const c = optObject(ctx, o['conditions'], `${path}.conditions`) ?? {};
  return compact({
    addresses,
    conditions: compact({
      ready: optBool(ctx, c['ready'], `${path}.conditions.ready`),
      serving: optBool(ctx, c['serving'], `${path}.conditions.serving`),
      terminating: optBool(ctx, c['terminating'], `${path}.conditions.terminating`),
    }),
    hostname: optNameOrEmpty(ctx, o['hostname'], `${path}.hostname`, dns1123LabelProblem),
    targetRef: o['targetRef'] == null ? undefined : readObjectReference(ctx, o['targetRef'], `${path}.targetRef`),
    nodeName: optNameOrEmpty(ctx, o['nodeName'], `${path}.nodeName`, dns1123SubdomainProblem),
    zone: o['zone'] == null ? undefined : reqChecked(ctx, o['zone'], `${path}.zone`, labelValueProblem),
    hints: readHints(ctx, o['hints'], `${path}.hints`),
  });
}

function readPort(ctx: Ctx, v: unknown, path: string): EndpointSlicePort {
  const o = reqObject(ctx, v, path);
  return compact({
    // The API server defaults a missing name to "" and a missing protocol to TCP.
    name: optNameOrEmpty(ctx, o['name'], `${path}.name`, dns1123LabelProblem) ?? '',
    port: optInt(ctx, o['port'], `${path}.port`, 1, 65535),
    protocol: optEnum(ctx, o['protocol'], `${path}.protocol`, PROTOCOLS) ?? 'TCP',
    appProtocol: readAppProtocol(ctx, o['appProtocol'], `${path}.appProtocol`),
  });
}

/**
 * Validates an EndpointSlice and returns a normalised copy: model fields only, `endpoints` and
 * `ports` null/absent become `[]`, port names default to "" and protocols to TCP, missing
 * namespace becomes `default`. Enforces the API caps (1000 endpoints, 100 addresses per
 * endpoint, 8 zone hints, 20000 ports) and the address syntax of `addressType`.
 * Throws InvalidObjectError naming the first bad field.
 */
export function validateEndpointSlice(raw: unknown, where: string): EndpointSlice {
  const { ctx, o } = openObject('EndpointSlice', raw, where, NAMESPACED_SUBDOMAIN_META, [DISCOVERY_API_VERSION]);
  const metadata = readMeta(ctx, o['metadata'], 'metadata', NAMESPACED_SUBDOMAIN_META);
  const addressType = reqEnum(ctx, o['addressType'], 'addressType', ADDRESS_TYPES);
  const endpoints = optList(ctx, o['endpoints'], 'endpoints', (e, p) => readEndpoint(ctx, e, p, addressType), API_MAX_ENDPOINTS_PER_SLICE) ?? [];
  const ports = optList(ctx, o['ports'], 'ports', (p, pp) => readPort(ctx, p, pp), API_MAX_PORTS_PER_SLICE) ?? [];
  const names = new Map<string, number>();
  ports.forEach((p, i) => {
    const seen = names.get(p.name ?? '');
    if (seen !== undefined) fail(ctx, `ports[${i}].name`, `duplicate port name ${quote(p.name ?? '')} (also ports[${seen}])`);
    names.set(p.name ?? '', i);
  });
  return { apiVersion: DISCOVERY_API_VERSION, kind: 'EndpointSlice', metadata, addressType, endpoints, ports };
}
