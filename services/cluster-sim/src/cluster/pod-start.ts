// What binding and starting a pod writes: the node name, a Running phase with addresses,
// and the kubelet's conditions (scheduled, initialized, not yet ready).
import { createHash } from 'node:crypto';
import type { KubeObj } from '../store/types.ts';
import { specOf, statusOf } from './pod-status.ts';

type Json = Record<string, unknown>;

export function bindAndStart(pod: KubeObj, nodeName: string, hostIP: string, podIP: string, at: string): KubeObj {
  const containers = (specOf(pod)['containers'] as Json[] | undefined) ?? [];
  const idFor = (name: string) => createHash('sha256').update(`${pod.metadata.namespace}/${pod.metadata.name}/${name}`).digest('hex');
  return {
    ...pod,
    spec: { ...specOf(pod), nodeName },
    status: {
      ...statusOf(pod),
      phase: 'Running',
      hostIP,
      hostIPs: [{ ip: hostIP }],
      podIP,
      podIPs: [{ ip: podIP }],
      startTime: at,
      qosClass: 'Burstable',
      conditions: [
        { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: at },
        { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: at },
        { type: 'Ready', status: 'False', lastProbeTime: null, lastTransitionTime: at, reason: 'ContainersNotReady' },
        { type: 'ContainersReady', status: 'False', lastProbeTime: null, lastTransitionTime: at, reason: 'ContainersNotReady' },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: at },
      ],
      containerStatuses: containers.map((c) => ({
        name: c['name'],
        image: c['image'] ?? '',
        imageID: '',
        containerID: `containerd://${idFor(String(c['name']))}`,
        ready: false,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: at } },
      })),
    },
  };
}

/** The node's InternalIP (what pods report as hostIP). */
export function internalIPOf(node: KubeObj): string {
  const addrs = (statusOf(node)['addresses'] as Json[] | undefined) ?? [];
  return String(addrs.find((a) => a['type'] === 'InternalIP')?.['address'] ?? '');
}
