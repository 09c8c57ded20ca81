// The live summary `npm start` prints every few seconds: one compact line a person can follow.

import type { BackboneReading, UnknownCount } from './probe.ts';
import type { ReplicaReadiness } from './replicas.ts';

export interface StackStatus extends BackboneReading {
  /** Since the stack started, ms. */
  readonly uptimeMs: number;
  /** Changes the watcher stored in KUBE (its published counter); null when unknown. */
  readonly objectsSeen: number | null;
  readonly viewKeys: number | null;
  readonly agents: { readonly synced: number; readonly total: number };
  /** The publisher's writes to the API (shadow: the writes it would have made); absent when it does not run. */
  readonly apiWrites?: { readonly count: number | null; readonly shadow: boolean };
  /** Components not ready right now, by name. */
  readonly notReady: readonly string[];
  /** With --replicas: per replicated kind, replicas ready / run. */
  readonly replicas?: readonly ReplicaReadiness[];
}

const num = (n: number | null): string => (n === null ? '-' : String(n));

/** A count read from NATS: `?` when the server's value could not be true (see BackboneReading.unknown), `-` when absent. */
function count(s: StackStatus, field: UnknownCount): string {
  return s.unknown?.includes(field) === true ? '?' : num(s[field]);
}

function uptime(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * One line, e.g.
 * `[1m05s] objects 96 | KUBE seq 412 | slices 8 | hinted 3/7 svc | views 54 | agents 9/9 synced | DLQ 0 | backlog 0`
 * (with `--replicas`, ` | replicas slicer 3/3 hints 1/1 watcher 2/2` before the agents: ready / run per kind)
 * with ` | not ready: slicer, hints` appended while any component is not ready. `backlog` adds
 * the consumers' pending messages, dirty Services and unpublished outbox rows (0 = settled).
 * A count the server reported as something that cannot be true (e.g. a pending count of
 * 2^64 − 1) prints `?`, never as a number; `-` is a count whose source does not exist yet.
 */
export function formatStatus(s: StackStatus): string {
  const backlog = s.unknown?.includes('pending') === true ? '?' : s.pending === null ? '-' : String(s.pending + s.dirty + s.outbox);
  const parts = [
    `objects ${num(s.objectsSeen)}`,
    `KUBE seq ${count(s, 'kubeSeq')}`,
    `slices ${s.slices}`,
    `hinted ${s.hintedServices}/${s.decidedServices} svc`,
    `views ${num(s.viewKeys)}`,
    ...(s.apiWrites !== undefined ? [`${s.apiWrites.shadow ? 'would write' : 'API writes'} ${num(s.apiWrites.count)}`] : []),
    ...(s.replicas !== undefined && s.replicas.length > 0 ? [`replicas ${s.replicas.map((r) => `${r.kind} ${r.ready}/${r.total}`).join(' ')}`] : []),
    `agents ${s.agents.synced}/${s.agents.total} synced`,
    `DLQ ${count(s, 'deadLetters')}`,
    `backlog ${backlog}`,
  ];
  if (s.notReady.length > 0) parts.push(`not ready: ${s.notReady.join(', ')}`);
  return `[${uptime(s.uptimeMs).padStart(6)}] ${parts.join(' | ')}`;
}
