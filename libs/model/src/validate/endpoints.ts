// Endpoints validation (input of the mirroring controller, B). Addresses are only type-checked:
// a non-IP address is legal input that mirroring skips with a warning (B.2.5).

import type { EndpointAddress, EndpointPort, EndpointSubset, Endpoints, ObjectReference } from '../kube.ts';
import type { Ctx } from './fields.ts';
import { compact, optChecked, optEnum, optList, optString, reqInt, reqObject, reqString } from './fields.ts';
import { NAMESPACED_SUBDOMAIN_META, readMeta } from './meta.ts';
import { dns1123LabelProblem, dns1123SubdomainProblem } from './names.ts';
import { openObject } from './object.ts';
import { PROTOCOLS, readAppProtocol } from './service.ts';
import { unsetIfEmpty } from './zero-values.ts';

/**
 * A name behind a Go pointer (*string): "" is a value there, distinct from unset, and is kept.
 * (The API server would refuse it as a name; it is accepted here as it always was.)
 */
export function optNameOrEmpty(ctx: Ctx, v: unknown, path: string, problem: (s: string) => string | null): string | undefined {
  return v === '' ? '' : optChecked(ctx, v, path, problem);
}

/** An ObjectReference: every field is a plain Go string, so "" is unset (F.13). */
export function readObjectReference(ctx: Ctx, v: unknown, path: string): ObjectReference {
  const o = reqObject(ctx, v, path);
  const s = (field: string, max: number): string | undefined => optString(ctx, unsetIfEmpty(o[field]), `${path}.${field}`, max);
  return compact({ kind: s('kind', 63), namespace: s('namespace', 63), name: s('name', 253), uid: s('uid', 128), resourceVersion: s('resourceVersion', 64) });
}

function readAddress(ctx: Ctx, v: unknown, path: string): EndpointAddress {
  const o = reqObject(ctx, v, path);
  // hostname is a plain Go string ("" unset); nodeName is a pointer, so "" is kept.
  return compact({
    ip: reqString(ctx, o['ip'], `${path}.ip`, 253),
    hostname: optChecked(ctx, unsetIfEmpty(o['hostname']), `${path}.hostname`, dns1123LabelProblem),
    nodeName: optNameOrEmpty(ctx, o['nodeName'], `${path}.nodeName`, dns1123SubdomainProblem),
    targetRef: o['targetRef'] == null ? undefined : readObjectReference(ctx, o['targetRef'], `${path}.targetRef`),
  });
}

function readPort(ctx: Ctx, v: unknown, path: string): EndpointPort {
  const o = reqObject(ctx, v, path);
  // name and protocol are plain Go strings: "" is unset, and protocol then defaults to TCP.
  return compact({
    name: optChecked(ctx, unsetIfEmpty(o['name']), `${path}.name`, dns1123LabelProblem),
    port: reqInt(ctx, o['port'], `${path}.port`, 1, 65535),
    protocol: optEnum(ctx, unsetIfEmpty(o['protocol']), `${path}.protocol`, PROTOCOLS) ?? 'TCP',
    appProtocol: readAppProtocol(ctx, o['appProtocol'], `${path}.appProtocol`),
  });
}

function readSubset(ctx: Ctx, v: unknown, path: string): EndpointSubset {
  const o = reqObject(ctx, v, path);
  const addrs = (field: string): EndpointAddress[] | undefined => optList(ctx, o[field], `${path}.${field}`, (a, p) => readAddress(ctx, a, p));
  return compact({
    addresses: addrs('addresses'),
    notReadyAddresses: addrs('notReadyAddresses'),
    ports: optList(ctx, o['ports'], `${path}.ports`, (p, pp) => readPort(ctx, p, pp)),
  });
}

/**
 * Validates an Endpoints object and returns a normalised copy (model fields only, ports default
 * to TCP, missing namespace becomes `default`, "" in plain fields and empty lists left out, F.13).
 * Address strings are not required to be IPs. Throws InvalidObjectError naming the first bad field.
 */
export function validateEndpoints(raw: unknown, where: string): Endpoints {
  const { ctx, o } = openObject('Endpoints', raw, where, NAMESPACED_SUBDOMAIN_META, ['v1']);
  return compact({
    apiVersion: 'v1',
    kind: 'Endpoints' as const,
    metadata: readMeta(ctx, o['metadata'], 'metadata', NAMESPACED_SUBDOMAIN_META),
    subsets: optList(ctx, o['subsets'], 'subsets', (s, p) => readSubset(ctx, s, p), 1000),
  });
}
