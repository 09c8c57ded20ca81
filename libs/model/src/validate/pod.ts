// Pod validation (the fields the EndpointSlice controller reads: A.3, A.4, A.5).

import type { Container, ContainerPort, Pod, PodCondition } from '../kube.ts';
import { ipFamilyOf } from '../ip.ts';
import type { Ctx } from './fields.ts';
import { compact, compactOrUnset, fail, optChecked, optEnum, optList, optObject, optString, optTimestamp, reqArray, reqChecked, reqEnum, reqInt, reqObject } from './fields.ts';
import { NAMESPACED_SUBDOMAIN_META, readMeta } from './meta.ts';
import { dns1123LabelProblem, dns1123SubdomainProblem, ianaSvcNameProblem, qualifiedNameProblem } from './names.ts';
import { optIP, reqIP } from './net-fields.ts';
import { openObject } from './object.ts';
import { PROTOCOLS } from './service.ts';
import { unsetIfEmpty } from './zero-values.ts';

const PHASES = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'] as const;
const CONDITION_STATUS = ['True', 'False', 'Unknown'] as const;
const MAX_CONTAINERS = 1000;
const MAX_CONTAINER_PORTS = 1000;
const MAX_CONDITIONS = 100;

function readContainerPort(ctx: Ctx, v: unknown, path: string): ContainerPort {
  const o = reqObject(ctx, v, path);
  // name and protocol are plain Go strings: "" is unset, and protocol then defaults to TCP.
  return compact({
    name: optChecked(ctx, unsetIfEmpty(o['name']), `${path}.name`, ianaSvcNameProblem),
    containerPort: reqInt(ctx, o['containerPort'], `${path}.containerPort`, 1, 65535),
    protocol: optEnum(ctx, unsetIfEmpty(o['protocol']), `${path}.protocol`, PROTOCOLS) ?? 'TCP',
  });
}

function readContainer(ctx: Ctx, v: unknown, path: string): Container {
  const o = reqObject(ctx, v, path);
  return compact({
    name: reqChecked(ctx, o['name'], `${path}.name`, dns1123LabelProblem),
    ports: optList(ctx, o['ports'], `${path}.ports`, (p, pp) => readContainerPort(ctx, p, pp), MAX_CONTAINER_PORTS),
    restartPolicy: optString(ctx, o['restartPolicy'], `${path}.restartPolicy`, 32),
  });
}

export function readCondition(ctx: Ctx, v: unknown, path: string): PodCondition {
  const o = reqObject(ctx, v, path);
  return compact({
    type: reqChecked(ctx, o['type'], `${path}.type`, qualifiedNameProblem),
    status: reqEnum(ctx, o['status'], `${path}.status`, CONDITION_STATUS),
    lastTransitionTime: optTimestamp(ctx, o['lastTransitionTime'], `${path}.lastTransitionTime`),
  });
}

function readStatus(ctx: Ctx, v: unknown): Pod['status'] {
  const s = optObject(ctx, v, 'status');
  if (s === undefined) return undefined;
  // phase and podIP are plain Go strings: "" (not yet known) is unset.
  const podIP = optIP(ctx, unsetIfEmpty(s['podIP']), 'status.podIP');
  const podIPs = optList(ctx, s['podIPs'], 'status.podIPs', (e, p) => ({ ip: reqIP(ctx, reqObject(ctx, e, p)['ip'], `${p}.ip`) }), 2);
  if (podIPs?.length === 2 && ipFamilyOf(podIPs[0]?.ip ?? '') === ipFamilyOf(podIPs[1]?.ip ?? '')) {
    fail(ctx, 'status.podIPs', 'must hold at most one address per IP family');
  }
  if (podIP !== undefined && podIPs !== undefined && podIPs[0]?.ip !== podIP) fail(ctx, 'status.podIPs[0].ip', 'must equal status.podIP');
  return compactOrUnset({
    phase: optEnum(ctx, unsetIfEmpty(s['phase']), 'status.phase', PHASES),
    podIP,
    podIPs,
    conditions: optList(ctx, s['conditions'], 'status.conditions', (c, p) => readCondition(ctx, c, p), MAX_CONDITIONS),
  });
}

/**
 * Validates a Pod and returns a normalised copy: only the fields of the Pod model are kept,
 * container ports default to protocol TCP, a missing namespace becomes `default`, and the zero
 * values the API server reads as unset ("" nodeName or podIP, an empty status, ...) are left
 * out (F.13). Throws InvalidObjectError naming the first bad field.
 */
export function validatePod(raw: unknown, where: string): Pod {
  const { ctx, o } = openObject('Pod', raw, where, NAMESPACED_SUBDOMAIN_META, ['v1']);
  const metadata = readMeta(ctx, o['metadata'], 'metadata', NAMESPACED_SUBDOMAIN_META);
  const s = reqObject(ctx, o['spec'], 'spec');
  const containers = reqArray(ctx, s['containers'], 'spec.containers', MAX_CONTAINERS).map((c, i) => readContainer(ctx, c, `spec.containers[${i}]`));
  if (containers.length === 0) fail(ctx, 'spec.containers', 'must have at least one container');
  // Plain Go strings: "" (not scheduled, no hostname) is unset.
  const optName = (field: string, problem: (x: string) => string | null): string | undefined =>
    optChecked(ctx, unsetIfEmpty(s[field]), `spec.${field}`, problem);
  const spec = compact({
    nodeName: optName('nodeName', dns1123SubdomainProblem),
    hostname: optName('hostname', dns1123LabelProblem),
    subdomain: optName('subdomain', dns1123LabelProblem),
    containers,
    initContainers: optList(ctx, s['initContainers'], 'spec.initContainers', (c, p) => readContainer(ctx, c, p), MAX_CONTAINERS),
  });
  return compact({ apiVersion: 'v1', kind: 'Pod' as const, metadata, spec, status: readStatus(ctx, o['status']) });
}
