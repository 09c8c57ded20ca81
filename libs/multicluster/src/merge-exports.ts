// One import from the exports of a cluster set (KEP-1645, "Constraints and Conflict
// Resolution"): global properties (headlessness, session affinity) come from the export with
// precedence; ports are the union of every export's ports, merged by name first and then by
// (protocol, port), a clash going to the export with precedence. Precedence: the oldest
// export first; equal times are ordered by cluster name (our choice: the KEP leaves ties open).

import type { ExportedPort, ServiceExportRecord, ServiceImportType } from '@slicemesh/contracts';

export interface MergedImport {
  readonly namespace: string;
  readonly name: string;
  readonly type: ServiceImportType;
  readonly ports: readonly ExportedPort[];
  readonly sessionAffinity: 'None' | 'ClientIP';
  readonly sessionAffinityTimeoutSeconds?: number;
  /** The exporting clusters, in precedence order. */
  readonly clusters: readonly string[];
  /**
   * One line per conflict, naming the property and the clusters (MCS: the ServiceExportConflict
   * condition of every export of the Service). Empty when the exports agree.
   */
  readonly conflicts: readonly string[];
}

/** Oldest export first, then cluster name. */
export function byPrecedence(a: ServiceExportRecord, b: ServiceExportRecord): number {
  const ta = Date.parse(a.exportedAt);
  const tb = Date.parse(b.exportedAt);
  if (ta !== tb) return ta - tb;
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}

const portText = (p: ExportedPort): string => `${p.name ?? '(unnamed)'} ${p.protocol}/${p.port}`;

/**
 * Merges the exports of one Service (same namespace and name, one per cluster). Throws for an
 * empty list or records of different Services: the caller groups them.
 */
export function mergeExports(records: readonly ServiceExportRecord[]): MergedImport {
  const first = records[0];
  if (first === undefined) throw new RangeError('mergeExports needs at least one export');
  for (const r of records) if (r.namespace !== first.namespace || r.name !== first.name) throw new RangeError(`mergeExports: ${r.namespace}/${r.name} is not ${first.namespace}/${first.name}`);
  const ordered = [...records].sort(byPrecedence);
  const winner = ordered[0] as ServiceExportRecord;
  const conflicts: string[] = [];
  const differing = (what: string, value: (r: ServiceExportRecord) => string): void => {
    const others = ordered.filter((r) => value(r) !== value(winner));
    if (others.length > 0) conflicts.push(`${what}: ${winner.cluster}'s ${value(winner)} wins over ${others.map((r) => `${r.cluster}'s ${value(r)}`).join(', ')}`);
  };
  differing('type', (r) => r.type);
  differing('sessionAffinity', (r) => (r.sessionAffinity === 'ClientIP' ? `ClientIP (${r.sessionAffinityTimeoutSeconds ?? 10800} s)` : 'None'));

  const ports: ExportedPort[] = [];
  for (const r of ordered) {
    for (const p of r.ports) {
      const name = p.name ?? '';
      const sameName = ports.find((q) => (q.name ?? '') === name);
      if (sameName !== undefined) {
        if (sameName.protocol !== p.protocol || sameName.port !== p.port) conflicts.push(`port ${JSON.stringify(name)}: ${portText(sameName)} wins over ${r.cluster}'s ${portText(p)}`);
        continue;
      }
      const samePort = ports.find((q) => q.protocol === p.protocol && q.port === p.port);
      if (samePort !== undefined) {
        conflicts.push(`port ${p.protocol}/${p.port}: ${portText(samePort)} wins over ${r.cluster}'s ${portText(p)}`);
        continue;
      }
      ports.push(p);
    }
  }
  return {
    namespace: first.namespace,
    name: first.name,
    type: winner.type,
    ports,
    sessionAffinity: winner.sessionAffinity,
    ...(winner.sessionAffinityTimeoutSeconds !== undefined ? { sessionAffinityTimeoutSeconds: winner.sessionAffinityTimeoutSeconds } : {}),
    clusters: ordered.map((r) => r.cluster),
    conflicts,
  };
}
