// ServiceExport (MCS, multicluster.x-k8s.io/v1alpha1) as the API server treats a CRD object of
// sigs.k8s.io/mcs-api's schema: no spec (pruned: the schema declares none), and status
// conditions that are objects with a string type and status, unique by type (listType map).
import { fieldDuplicate, fieldInvalid, fieldRequired } from './api-error.ts';
import type { StatusCause } from './api-error.ts';
import type { KubeObj } from './types.ts';
import { isRecord } from './validation.ts';

export function serviceExportCauses(obj: KubeObj): StatusCause[] {
  const status = obj['status'];
  if (status === undefined || status === null) return [];
  if (!isRecord(status)) return [fieldInvalid('status', status, 'must be an object')];
  return conditionCauses(status['conditions'], 'status.conditions');
}

/** A metav1.Condition list as a CRD schema checks it: objects with a string type and status, unique by type. */
export function conditionCauses(conditions: unknown, field: string): StatusCause[] {
  if (conditions === undefined || conditions === null) return [];
  if (!Array.isArray(conditions)) return [fieldInvalid(field, conditions, 'must be a list')];
  const causes: StatusCause[] = [];
  const types = new Set<string>();
  conditions.forEach((c: unknown, i) => {
    const at = `${field}[${i}]`;
    if (!isRecord(c)) return void causes.push(fieldInvalid(at, c, 'must be an object'));
    for (const f of ['type', 'status'] as const) {
      if (c[f] === undefined || c[f] === null) causes.push(fieldRequired(`${at}.${f}`));
      else if (typeof c[f] !== 'string') causes.push(fieldInvalid(`${at}.${f}`, c[f], 'must be a string'));
    }
    if (typeof c['type'] === 'string') {
      if (types.has(c['type'])) causes.push(fieldDuplicate(`${at}.type`, c['type']));
      types.add(c['type']);
    }
  });
  return causes;
}

/** Drops what the schema prunes: every top-level field but the type, metadata and status. */
export function completeServiceExport(obj: KubeObj): KubeObj {
  const { apiVersion, kind, metadata } = obj;
  return obj['status'] === undefined ? { apiVersion, kind, metadata } : { apiVersion, kind, metadata, status: obj['status'] };
}
