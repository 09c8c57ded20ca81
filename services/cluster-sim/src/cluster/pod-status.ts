// Reading and writing the pod and node status fields the simulator drives (phase, IPs,
// Ready conditions), as pure functions over stored objects.
import { parseCpu } from '../scenario/quantities.ts';
import type { KubeObj } from '../store/types.ts';

type Json = Record<string, unknown>;

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly lastTransitionTime?: string;
  readonly lastProbeTime?: string | null;
  readonly lastHeartbeatTime?: string;
  readonly reason?: string;
  readonly message?: string;
}

export function specOf(obj: KubeObj): Json {
  return (obj['spec'] as Json | undefined) ?? {};
}

export function statusOf(obj: KubeObj): Json {
  return (obj['status'] as Json | undefined) ?? {};
}

export function conditionsOf(obj: KubeObj): readonly Condition[] {
  const c = statusOf(obj)['conditions'];
  return Array.isArray(c) ? (c as Condition[]) : [];
}

export function conditionStatus(obj: KubeObj, type: string): string | undefined {
  return conditionsOf(obj).find((c) => c.type === type)?.status;
}

/** A pod counts as ready when its Ready condition is True. */
export function isPodReady(pod: KubeObj): boolean {
  return conditionStatus(pod, 'Ready') === 'True';
}

export function isTerminating(obj: KubeObj): boolean {
  return obj.metadata.deletionTimestamp !== undefined;
}

export function podPhase(pod: KubeObj): string | undefined {
  return statusOf(pod)['phase'] as string | undefined;
}

export function isTerminal(pod: KubeObj): boolean {
  const phase = podPhase(pod);
  return phase === 'Succeeded' || phase === 'Failed';
}

export function podIP(pod: KubeObj): string | undefined {
  return statusOf(pod)['podIP'] as string | undefined;
}

export function nodeNameOf(pod: KubeObj): string | undefined {
  return specOf(pod)['nodeName'] as string | undefined;
}

/** A node counts as ready when its Ready condition is True. */
export function isNodeReady(node: KubeObj): boolean {
  return conditionStatus(node, 'Ready') === 'True';
}

/**
 * `conditions` with `type` set to `status`. The transition time changes only when the
 * status does (as upstream keeps it), so unchanged conditions compare equal.
 */
export function withCondition(conditions: readonly Condition[], type: string, status: Condition['status'], at: string, extra: Partial<Condition> = {}): Condition[] {
  const existing = conditions.find((c) => c.type === type);
  const next: Condition = existing && existing.status === status
    ? { ...existing, ...extra }
    : { type, status, lastProbeTime: null, lastTransitionTime: at, ...extra };
  return existing ? conditions.map((c) => (c.type === type ? next : c)) : [...conditions, next];
}

/** The pod with Ready and ContainersReady (and each container's `ready`) set to `ready`. */
export function withPodReadiness(pod: KubeObj, ready: boolean, at: string): KubeObj {
  const status = statusOf(pod);
  const value = ready ? 'True' : 'False';
  let conditions = withCondition(conditionsOf(pod), 'Ready', value, at, ready ? { reason: undefined } : { reason: 'ContainersNotReady' });
  conditions = withCondition(conditions, 'ContainersReady', value, at, ready ? { reason: undefined } : { reason: 'ContainersNotReady' });
  const containerStatuses = Array.isArray(status['containerStatuses'])
    ? (status['containerStatuses'] as Json[]).map((c) => ({ ...c, ready }))
    : status['containerStatuses'];
  return { ...pod, status: { ...status, conditions: conditions.map(stripUndefined), ...(containerStatuses ? { containerStatuses } : {}) } };
}

function stripUndefined(c: Condition): Condition {
  return Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)) as unknown as Condition;
}

/** CPU requested by a pod's containers, in millicores (absent requests count as 0). */
export function podCpuMillis(pod: KubeObj): number {
  const containers = specOf(pod)['containers'];
  if (!Array.isArray(containers)) return 0;
  let total = 0;
  for (const c of containers as Json[]) {
    const cpu = ((c['resources'] as Json | undefined)?.['requests'] as Json | undefined)?.['cpu'];
    total += parseCpuText(cpu);
  }
  return total;
}

/** Node allocatable CPU in millicores (0 when absent or unreadable). */
export function nodeCpuMillis(node: KubeObj): number {
  return parseCpuText((statusOf(node)['allocatable'] as Json | undefined)?.['cpu']);
}

function parseCpuText(v: unknown): number {
  return parseCpu(v) ?? 0;
}
