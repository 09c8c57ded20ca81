// Node status changes the timeline drives: failure (Ready goes Unknown/False and the node
// gets the matching NoExecute taint, as the node lifecycle controller does) and recovery.
import type { KubeObj } from '../store/types.ts';
import { conditionsOf, specOf, statusOf, withCondition } from './pod-status.ts';

type Json = Record<string, unknown>;

export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';

const SIM_TAINTS = new Set([TAINT_UNREACHABLE, TAINT_NOT_READY]);

export function failedNode(node: KubeObj, status: 'False' | 'Unknown', at: string): KubeObj {
  const reason = status === 'Unknown'
    ? { reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }
    : { reason: 'KubeletNotReady', message: 'container runtime is down' };
  const taints = ((specOf(node)['taints'] as Json[] | undefined) ?? []).filter((t) => !SIM_TAINTS.has(t['key'] as string));
  taints.push({ key: status === 'Unknown' ? TAINT_UNREACHABLE : TAINT_NOT_READY, effect: 'NoExecute', timeAdded: at });
  return {
    ...node,
    spec: { ...specOf(node), taints },
    status: { ...statusOf(node), conditions: withCondition(conditionsOf(node), 'Ready', status, at, { lastHeartbeatTime: at, ...reason }) },
  };
}

export function recoveredNode(node: KubeObj, at: string): KubeObj {
  const taints = ((specOf(node)['taints'] as Json[] | undefined) ?? []).filter((t) => !SIM_TAINTS.has(t['key'] as string));
  const { taints: _drop, ...spec } = specOf(node);
  return {
    ...node,
    spec: taints.length > 0 ? { ...spec, taints } : spec,
    status: {
      ...statusOf(node),
      conditions: withCondition(conditionsOf(node), 'Ready', 'True', at, { lastHeartbeatTime: at, reason: 'KubeletReady', message: 'kubelet is posting ready status' }),
    },
  };
}
