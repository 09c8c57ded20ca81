import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { KubeObj } from '../store/types.ts';
import { chooseNode, nodeAdmits } from './placement.ts';
import type { PlacementCounts } from './placement.ts';

function node(name: string, zone: string, extra: { cpu?: string; ready?: string; spec?: Record<string, unknown>; labels?: Record<string, string> } = {}): KubeObj {
  return deepFreeze({
    apiVersion: 'v1', kind: 'Node',
    metadata: { name, labels: { 'topology.kubernetes.io/zone': zone, ...extra.labels } },
    spec: extra.spec ?? {},
    status: { allocatable: { cpu: extra.cpu ?? '4' }, conditions: [{ type: 'Ready', status: extra.ready ?? 'True' }] },
  });
}

function pod(spec: Record<string, unknown> = {}, cpu = '100m'): KubeObj {
  return deepFreeze({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true }] },
    spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }], ...spec },
  });
}

function counts(owned: Record<string, number> = {}, cpu: Record<string, number> = {}, total: Record<string, number> = {}): PlacementCounts {
  return { cpuUsed: (n) => cpu[n] ?? 0, ownerPods: (n) => owned[n] ?? 0, totalPods: (n) => total[n] ?? owned[n] ?? 0 };
}

describe('nodeAdmits', () => {
  const cases: readonly { name: string; node: KubeObj; pod: KubeObj; want: boolean }[] = [
    { name: 'a ready plain node admits a plain pod', node: node('n', 'a'), pod: pod(), want: true },
    { name: 'a not-ready node admits nothing', node: node('n', 'a', { ready: 'Unknown' }), pod: pod(), want: false },
    { name: 'an unschedulable node admits nothing', node: node('n', 'a', { spec: { unschedulable: true } }), pod: pod(), want: false },
    { name: 'a NoSchedule taint needs a toleration', node: node('n', 'a', { spec: { taints: [{ key: 'cp', effect: 'NoSchedule' }] } }), pod: pod(), want: false },
    { name: 'a matching toleration lets the pod in', node: node('n', 'a', { spec: { taints: [{ key: 'cp', effect: 'NoSchedule' }] } }), pod: pod({ tolerations: [{ key: 'cp', operator: 'Exists' }] }), want: true },
    { name: 'a PreferNoSchedule taint does not block', node: node('n', 'a', { spec: { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] } }), pod: pod(), want: true },
    { name: 'nodeSelector must match labels', node: node('n', 'a'), pod: pod({ nodeSelector: { disk: 'ssd' } }), want: false },
    { name: 'required node affinity on zone', node: node('n', 'b'), pod: pod({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }] }] } } } }), want: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(nodeAdmits(tc.node, tc.pod)).toBe(tc.want));
});

describe('chooseNode', () => {
  const nodes = deepFreeze([node('a1', 'a'), node('a2', 'a'), node('b1', 'b'), node('c1', 'c')]);

  it('prefers the zone with the fewest pods of the same owner, then the node', () => {
    expect(chooseNode(pod(), nodes, counts({ a1: 1, b1: 1 }), 0)?.node.metadata.name).toBe('c1');
    expect(chooseNode(pod(), nodes, counts({ a1: 1, b1: 1, c1: 1 }), 0)?.node.metadata.name).toBe('a2');
  });

  it('breaks ties round-robin from the cursor', () => {
    const first = chooseNode(pod(), nodes, counts(), 0)!;
    const second = chooseNode(pod(), nodes, counts(), first.cursor)!;
    expect([first.node.metadata.name, second.node.metadata.name]).toEqual(['a1', 'a2']);
  });

  it('skips nodes without enough unrequested CPU', () => {
    expect(chooseNode(pod({}, '2'), nodes, counts({}, { a1: 3000, a2: 3000, b1: 2500 }), 0)?.node.metadata.name).toBe('c1');
  });

  it('returns undefined when no node fits', () => {
    expect(chooseNode(pod({}, '8'), nodes, counts(), 0)).toBeUndefined();
    expect(chooseNode(pod(), [], counts(), 0)).toBeUndefined();
  });
});
