// The status of a ServiceExport, as the MCS API defines it (mcs-api v1alpha1 conditions):
// `Valid` says whether the Service it names can be exported, `Conflict` whether the exports of
// that Service across the cluster set disagree — and, when they do, which property and which
// cluster's value won (KEP-1645: the condition goes on every export of the conflicted Service).

import type { ServiceExportStatusEntry } from '@slicemesh/contracts';
import { CONDITION_CONFLICT, CONDITION_VALID, EXPORT_STATUS_VERSION } from '@slicemesh/contracts';
import type { Service, ServiceExport, ServiceExportCondition } from '@slicemesh/model';
import { unexportableReason } from './export-of.ts';

export interface ExportStatusInput {
  readonly serviceExport: ServiceExport;
  /** The Service of the same namespace and name, if it exists. */
  readonly service: Service | undefined;
  /** The conflicts of the Service's import across the set (MergedImport.conflicts); none when not imported. */
  readonly conflicts: readonly string[];
  /** RFC 3339: the transition time of a condition whose status changes now. */
  readonly now: string;
}

/** The reason of a Conflict condition: the first property in contention. */
function conflictReason(conflicts: readonly string[]): string {
  const first = conflicts[0] ?? '';
  if (first.startsWith('port')) return 'PortConflict';
  if (first.startsWith('type')) return 'TypeConflict';
  if (first.startsWith('sessionAffinity')) return 'SessionAffinityConflict';
  return 'Conflict';
}

/**
 * The conditions the ServiceExport should hold. A condition keeps its lastTransitionTime while its
 * status stays what the object already says (metav1.Condition's rule), so writing it again
 * changes nothing.
 */
export function serviceExportConditions(input: ExportStatusInput): ServiceExportCondition[] {
  const { serviceExport, service } = input;
  const ns = serviceExport.metadata.namespace ?? 'default';
  const name = serviceExport.metadata.name;
  const current = new Map((serviceExport.status?.conditions ?? []).map((c) => [c.type, c]));
  const generation = serviceExport.metadata.generation;
  const condition = (type: string, status: 'True' | 'False', reason: string, message: string): ServiceExportCondition => {
    const was = current.get(type);
    return {
      type,
      status,
      reason,
      message,
      lastTransitionTime: was?.status === status && was.lastTransitionTime !== undefined ? was.lastTransitionTime : input.now,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
    };
  };
  if (service === undefined) return [condition(CONDITION_VALID, 'False', 'NoService', `Service ${ns}/${name} does not exist`)];
  const unexportable = unexportableReason(service);
  if (unexportable !== undefined) return [condition(CONDITION_VALID, 'False', 'InvalidServiceType', unexportable)];
  const valid = condition(CONDITION_VALID, 'True', 'Exported', `Service ${ns}/${name} is exported to the cluster set`);
  if (input.conflicts.length === 0) return [valid, condition(CONDITION_CONFLICT, 'False', 'NoConflicts', 'the exports of this Service agree across the cluster set')];
  // The condition's message is capped at 32768 characters by the API.
  const message = `the oldest export wins: ${input.conflicts.join('; ')}`.slice(0, 32_768);
  return [valid, condition(CONDITION_CONFLICT, 'True', conflictReason(input.conflicts), message)];
}

/** The entry of the exportstatus bucket for `conditions`. */
export function exportStatusEntry(namespace: string, name: string, conditions: readonly ServiceExportCondition[]): ServiceExportStatusEntry {
  return { v: EXPORT_STATUS_VERSION, namespace, name, conditions };
}
