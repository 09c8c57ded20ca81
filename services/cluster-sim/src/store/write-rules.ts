// Small rules the store applies on writes: ordering, what counts as a spec change, pod
// grace periods.
import { objectKey } from './types.ts';
import type { KubeObj, Meta } from './types.ts';

export function compareKeys(a: KubeObj, b: KubeObj): number {
  const ak = objectKey(a.metadata.namespace, a.metadata.name);
  const bk = objectKey(b.metadata.namespace, b.metadata.name);
  return ak < bk ? -1 : ak > bk ? 1 : 0;
}

export function withoutMetaAndStatus(obj: KubeObj): Record<string, unknown> {
  const { metadata: _m, status: _s, ...rest } = obj;
  return rest;
}

export function dropUndefinedMeta(obj: KubeObj): KubeObj {
  const meta = Object.fromEntries(Object.entries(obj.metadata).filter(([, v]) => v !== undefined)) as Meta;
  return { ...obj, metadata: meta };
}

export function podGraceSeconds(pod: KubeObj, requested: number | undefined, fallback: number): number {
  const spec = (pod['spec'] ?? {}) as { nodeName?: string; terminationGracePeriodSeconds?: number };
  const phase = (pod['status'] as { phase?: string } | undefined)?.phase;
  // Pods never bound to a node, or already finished, have nothing to drain.
  if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
  const grace = requested ?? spec.terminationGracePeriodSeconds ?? fallback;
  return Number.isFinite(grace) && grace > 0 ? Math.floor(grace) : 0;
}
