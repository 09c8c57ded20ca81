// The `exportstatus` KV bucket of one cluster: the status each of its ServiceExports should
// have (MCS conditions Valid and Conflict), as the multi-cluster service decides it. The
// publisher watches it and writes each status to the Kubernetes API, the one writer to the API.
//
//   <cluster>.<ns>.<name>   ServiceExportStatusEntry

import type { ServiceExportCondition } from '@slicemesh/model';
import type { Parsed } from './kube-event.ts';
import { clusterEntryBody, fail, isObject } from './cluster-entry.ts';
import { svcClusterFilter, svcKey } from './subjects.ts';

export const EXPORT_STATUS_VERSION = 1;

/** The MCS condition types (mcs-api v1alpha1). */
export const CONDITION_VALID = 'Valid';
export const CONDITION_CONFLICT = 'Conflict';

export interface ServiceExportStatusEntry {
  readonly v: typeof EXPORT_STATUS_VERSION;
  readonly namespace: string;
  readonly name: string;
  /** The whole condition list the ServiceExport's status should hold. */
  readonly conditions: readonly ServiceExportCondition[];
}

/** Same layout as the svc bucket: `<cluster>.<ns>.<name>`. */
export function exportStatusKey(a: { readonly cluster: string; readonly namespace: string; readonly name: string }): string {
  return svcKey(a);
}

/** Watch filter for one cluster's entries. */
export const exportStatusFilter = svcClusterFilter;

/** Parses an entry of `cluster`: its key and body must name the same ServiceExport. Never throws. */
export function parseServiceExportStatus(key: string, value: unknown, cluster: string): Parsed<ServiceExportStatusEntry> {
  const head = clusterEntryBody(key, value, cluster, EXPORT_STATUS_VERSION, 'export status');
  if (!head.ok) return head as Parsed<ServiceExportStatusEntry>;
  const body = head.value;
  const conditions = body['conditions'];
  if (!Array.isArray(conditions)) return fail(`${key}: conditions is not a list`, 'conditions');
  for (const [i, c] of conditions.entries()) {
    if (!isObject(c) || typeof c['type'] !== 'string' || !['True', 'False', 'Unknown'].includes(c['status'] as string) || typeof c['reason'] !== 'string' || typeof c['lastTransitionTime'] !== 'string') {
      return fail(`${key}: conditions[${i}] needs type, status True|False|Unknown, reason and lastTransitionTime`, 'conditions');
    }
  }
  return { ok: true, value: body as unknown as ServiceExportStatusEntry };
}
