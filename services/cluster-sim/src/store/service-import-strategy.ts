// ServiceImport (MCS, multicluster.x-k8s.io/v1alpha1) as the API server treats a CRD object of
// sigs.k8s.io/mcs-api's schema: spec.type ClusterSetIP|Headless and spec.ports (each with a
// port) required, at most two ips, sessionAffinity None|ClientIP; status.clusters unique by
// cluster and status.conditions unique by type (listType map). Fields outside the schema's
// top level are pruned.
import { fieldDuplicate, fieldInvalid, fieldNotSupported, fieldRequired, fieldTooMany } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import { conditionCauses } from './service-export-strategy.ts';
import type { KubeObj } from './types.ts';
import { isPort, isRecord, PROTOCOLS } from './validation.ts';

const TYPES = ['ClusterSetIP', 'Headless'];
const AFFINITIES = ['None', 'ClientIP'];

function specCauses(spec: unknown): StatusCause[] {
  if (spec === undefined || spec === null) return [];
  if (!isRecord(spec)) return [fieldInvalid('spec', spec, 'must be an object')];
  const causes: StatusCause[] = [];
  if (spec['type'] === undefined) causes.push(fieldRequired('spec.type'));
  else if (!TYPES.includes(spec['type'] as string)) causes.push(fieldNotSupported('spec.type', spec['type'], TYPES));
  const ports = spec['ports'];
  if (ports === undefined || ports === null) causes.push(fieldRequired('spec.ports'));
  else if (!Array.isArray(ports)) causes.push(fieldInvalid('spec.ports', ports, 'must be a list'));
  else {
    ports.forEach((p: unknown, i) => {
      const at = `spec.ports[${i}]`;
      if (!isRecord(p)) return void causes.push(fieldInvalid(at, p, 'must be an object'));
      if (p['port'] === undefined) causes.push(fieldRequired(`${at}.port`));
      else if (!isPort(p['port'])) causes.push(fieldInvalid(`${at}.port`, p['port'], 'must be between 1 and 65535, inclusive'));
      if (p['protocol'] !== undefined && !PROTOCOLS.includes(p['protocol'] as string)) causes.push(fieldNotSupported(`${at}.protocol`, p['protocol'], PROTOCOLS));
    });
  }
  const ips = spec['ips'];
  if (ips !== undefined && ips !== null) {
    if (!Array.isArray(ips) || ips.some((ip) => typeof ip !== 'string')) causes.push(fieldInvalid('spec.ips', ips, 'must be a list of strings'));
    else if (ips.length > 2) causes.push(fieldTooMany('spec.ips', ips.length, 2));
  }
  if (spec['sessionAffinity'] !== undefined && !AFFINITIES.includes(spec['sessionAffinity'] as string)) causes.push(fieldNotSupported('spec.sessionAffinity', spec['sessionAffinity'], AFFINITIES));
  return causes;
}

function statusCauses(status: unknown): StatusCause[] {
  if (status === undefined || status === null) return [];
  if (!isRecord(status)) return [fieldInvalid('status', status, 'must be an object')];
  const causes: StatusCause[] = [];
  const clusters = status['clusters'];
  if (clusters !== undefined && clusters !== null) {
    if (!Array.isArray(clusters)) causes.push(fieldInvalid('status.clusters', clusters, 'must be a list'));
    else {
      const seen = new Set<string>();
      clusters.forEach((c: unknown, i) => {
        const at = `status.clusters[${i}].cluster`;
        if (!isRecord(c) || c['cluster'] === undefined || c['cluster'] === null) return void causes.push(fieldRequired(at));
        if (typeof c['cluster'] !== 'string') return void causes.push(fieldInvalid(at, c['cluster'], 'must be a string'));
        if (seen.has(c['cluster'])) causes.push(fieldDuplicate(at, c['cluster']));
        seen.add(c['cluster']);
      });
    }
  }
  return [...causes, ...conditionCauses(status['conditions'], 'status.conditions')];
}

export function serviceImportCauses(obj: KubeObj): StatusCause[] {
  return [...specCauses(obj['spec']), ...statusCauses(obj['status'])];
}

/** Drops what the schema prunes: every top-level field but the type, metadata, spec and status. */
export function completeServiceImport(obj: KubeObj): KubeObj {
  const { apiVersion, kind, metadata } = obj;
  return {
    apiVersion, kind, metadata,
    ...(obj['spec'] !== undefined ? { spec: obj['spec'] } : {}),
    ...(obj['status'] !== undefined ? { status: obj['status'] } : {}),
  };
}
