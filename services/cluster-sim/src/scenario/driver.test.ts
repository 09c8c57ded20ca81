import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isPodReady, nodeNameOf, podIP } from '../cluster/pod-status.ts';
import { STATIC_SCENARIO_FILE } from '../start.ts';
import type { KubeObj } from '../store/types.ts';
import { activeOf, dump, nodesOf, podsOf, readyOf, startSim, T0 } from './driver-fixture.ts';

const CLUSTER = `
seed: t
zones: [a, b, c]
nodes:
  - {name: cp, zone: a, controlPlane: true}
  - {namePrefix: na, count: 2, zone: a}
  - {namePrefix: nb, count: 2, zone: b}
  - {namePrefix: nc, count: 2, zone: c}
`;

const WEB = `${CLUSTER}
deployments: [{name: web, namespace: shop, replicas: 6, readinessDelayMs: 500, terminationGracePeriodSeconds: 2, containerPorts: [{name: http, containerPort: 8080}]}]
services: [{name: web, namespace: shop, deployment: web, ports: [{name: http, port: 80, targetPort: http}]}]
`;

const zoneOf = (sim: ReturnType<typeof startSim>, pod: KubeObj) => sim.store.get('Node', undefined, nodeNameOf(pod)!)!.metadata.labels!['topology.kubernetes.io/zone'];

describe('ScenarioDriver bootstrap', () => {
  it('creates namespaces, nodes with topology labels, pod CIDRs and allocatable CPU', () => {
    const { store } = startSim(WEB);
    expect(store.get('Namespace', undefined, 'shop')).toBeDefined();
    const cp = store.get('Node', undefined, 'cp')!;
    expect(cp.metadata.labels).toMatchObject({ 'topology.kubernetes.io/zone': 'a', 'topology.kubernetes.io/region': 'region-1', 'kubernetes.io/hostname': 'cp', 'node-role.kubernetes.io/control-plane': '' });
    expect(cp['spec']).toMatchObject({ podCIDR: '10.244.0.0/24', taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
    const nb1 = store.get('Node', undefined, 'nb-1')!;
    expect(nb1['status']).toMatchObject({ allocatable: { cpu: '4' }, addresses: [{ type: 'InternalIP', address: '172.18.0.13' }, { type: 'Hostname', address: 'nb-1' }] });
    expect((nb1['spec'] as { podCIDR: string }).podCIDR).toBe('10.244.3.0/24');
  });

  it('starts pods bound and Running with an IP from their node block, not yet Ready', () => {
    const { store } = startSim(WEB);
    const pods = podsOf(store, 'shop', 'web');
    expect(pods).toHaveLength(6);
    for (const pod of pods) {
      const node = store.get('Node', undefined, nodeNameOf(pod)!)!;
      const cidr = (node['spec'] as { podCIDR: string }).podCIDR;
      expect(podIP(pod)!.startsWith(cidr.slice(0, cidr.lastIndexOf('.')))).toBe(true);
      expect([(pod['status'] as { phase: string }).phase, isPodReady(pod)]).toEqual(['Running', false]);
      expect(pod.metadata.labels).toMatchObject({ app: 'web', 'pod-template-hash': expect.any(String) });
      expect(pod.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', controller: true });
    }
  });

  it('spreads replicas evenly over zones and nodes and keeps them off the control plane', () => {
    const sim = startSim(WEB);
    const pods = podsOf(sim.store, 'shop', 'web');
    expect(nodesOf(pods)).toEqual(['na-1', 'na-2', 'nb-1', 'nb-2', 'nc-1', 'nc-2']);
  });

  it('pods become Ready after their readiness delay, with the transition time then', () => {
    const sim = startSim(WEB);
    sim.clock.advance(499);
    expect(readyOf(sim.store, 'shop', 'web')).toHaveLength(0);
    sim.clock.advance(1);
    const ready = readyOf(sim.store, 'shop', 'web');
    expect(ready).toHaveLength(6);
    const cond = ((ready[0]!['status'] as { conditions: { type: string; lastTransitionTime: string }[] }).conditions).find((c) => c.type === 'Ready')!;
    expect(cond.lastTransitionTime).toBe('2026-01-01T00:00:00Z');
  });

  it('maintains Endpoints: not-ready first, ready after the delay', () => {
    const sim = startSim(WEB);
    const eps = () => sim.store.get('Endpoints', 'shop', 'web')!['subsets'] as { addresses?: unknown[]; notReadyAddresses?: unknown[]; ports: unknown[] }[];
    expect([eps()[0]!.addresses, eps()[0]!.notReadyAddresses?.length, eps()[0]!.ports]).toEqual([undefined, 6, [{ name: 'http', port: 8080, protocol: 'TCP' }]]);
    sim.clock.advance(500);
    expect([eps()[0]!.addresses?.length, eps()[0]!.notReadyAddresses]).toEqual([6, undefined]);
  });

  it('creates default/kubernetes with skip-mirror Endpoints on the control plane', () => {
    const { store } = startSim(WEB);
    expect((store.get('Service', 'default', 'kubernetes')!['spec'] as { clusterIP: string }).clusterIP).toBe('10.96.0.1');
    const eps = store.get('Endpoints', 'default', 'kubernetes')!;
    expect([eps.metadata.labels, eps['subsets']]).toEqual([{ 'endpointslice.kubernetes.io/skip-mirror': 'true' }, [{ addresses: [{ ip: '172.18.0.10' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] }]]);
  });

  it('restricts a deployment to its zones', () => {
    const sim = startSim(`${CLUSTER}\ndeployments: [{name: edge, replicas: 4, zones: [b]}]`);
    expect(new Set(podsOf(sim.store, 'default', 'edge').map((p) => zoneOf(sim, p)))).toEqual(new Set(['b']));
  });

  it('leaves pods Pending without a node when no node has CPU left, and places them when nodes are added', () => {
    const sim = startSim(`zones: [a]
nodes: [{name: small, zone: a, cpu: 250m}]
deployments: [{name: w, replicas: 3, cpu: 100m}]
timeline: [{at: 1s, action: addNodes, group: {name: big, zone: a, cpu: 2}}]`);
    expect(nodesOf(podsOf(sim.store, 'default', 'w'))).toEqual(['<none>', 'small', 'small']);
    sim.clock.advance(1000);
    expect(nodesOf(podsOf(sim.store, 'default', 'w'))).toEqual(['big', 'small', 'small']);
    expect(podIP(podsOf(sim.store, 'default', 'w').find((p) => nodeNameOf(p) === 'big')!)).toBe('10.244.1.2');
  });

  it('is deterministic: the same scenario and seed give identical objects; another seed differs', () => {
    const yaml = `${WEB}\nchurn: {podsPerSecond: 2}\ntimeline: [{at: 2s, action: rollout, deployment: shop/web}, {at: 4s, action: failNode, node: nb-1}]`;
    const runFor = (seed?: string) => {
      const sim = startSim(yaml, seed ? { seed } : {});
      sim.clock.advance(10_000);
      return dump(sim.store);
    };
    expect(runFor()).toBe(runFor());
    expect(runFor('other')).not.toBe(runFor());
  });
});

describe('ScenarioDriver timeline', () => {
  it('scale up adds pods; scale down removes not-ready pods first', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: scale, deployment: shop/web, replicas: 8}, {at: 1100ms, action: scale, deployment: shop/web, replicas: 6}]`);
    sim.clock.advance(1000);
    expect(activeOf(sim.store, 'shop', 'web')).toHaveLength(8);
    const unready = activeOf(sim.store, 'shop', 'web').filter((p) => !isPodReady(p)).map((p) => p.metadata.name).sort();
    expect(unready).toHaveLength(2);
    sim.clock.advance(100);
    expect(activeOf(sim.store, 'shop', 'web').map((p) => p.metadata.name).filter((n) => unready.includes(n))).toEqual([]);
    expect(readyOf(sim.store, 'shop', 'web')).toHaveLength(6);
  });

  it('rolls out with maxSurge 1 / maxUnavailable 0: never fewer ready or more active pods than allowed', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: rollout, deployment: shop/web}]`);
    const oldHash = podsOf(sim.store, 'shop', 'web')[0]!.metadata.labels!['pod-template-hash'];
    sim.clock.advance(1000);
    let maxActive = 0;
    let minReady = Infinity;
    for (let t = 0; t < 100; t++) {
      sim.clock.advance(100);
      maxActive = Math.max(maxActive, activeOf(sim.store, 'shop', 'web').length);
      minReady = Math.min(minReady, readyOf(sim.store, 'shop', 'web').length);
    }
    expect([maxActive, minReady]).toEqual([7, 6]);
    const hashes = new Set(podsOf(sim.store, 'shop', 'web').map((p) => p.metadata.labels!['pod-template-hash']));
    expect(hashes.size === 1 && !hashes.has(oldHash)).toBe(true);
    expect(podsOf(sim.store, 'shop', 'web')).toHaveLength(6);
  });

  it('failNode: the node goes Unknown with the unreachable taint and its pods become not ready; recoverNode undoes it', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: failNode, node: nb-1}, {at: 5s, action: recoverNode, node: nb-1}]`);
    sim.clock.advance(1000);
    const node = sim.store.get('Node', undefined, 'nb-1')!;
    expect((node['status'] as { conditions: { type: string; status: string; reason?: string }[] }).conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'NodeStatusUnknown' });
    expect((node['spec'] as { taints: unknown[] }).taints).toEqual([{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:01Z' }]);
    const onNode = () => podsOf(sim.store, 'shop', 'web').filter((p) => nodeNameOf(p) === 'nb-1');
    expect(onNode().map(isPodReady)).toEqual([false]);
    expect(readyOf(sim.store, 'shop', 'web')).toHaveLength(5);
    sim.clock.advance(4000);
    expect(onNode().map(isPodReady)).toEqual([false]);
    sim.clock.advance(500);
    expect(onNode().map(isPodReady)).toEqual([true]);
    expect((sim.store.get('Node', undefined, 'nb-1')!['spec'] as { taints?: unknown }).taints).toBeUndefined();
  });

  it('failNode with evictAfter: pods there terminate (stuck while the node is down) and are replaced elsewhere', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: failNode, node: nb-1, evictAfter: 2s}, {at: 10s, action: recoverNode, node: nb-1}]`);
    sim.clock.advance(3000);
    const stuck = podsOf(sim.store, 'shop', 'web').filter((p) => nodeNameOf(p) === 'nb-1');
    expect(stuck.map((p) => p.metadata.deletionTimestamp !== undefined)).toEqual([true]);
    expect(nodesOf(activeOf(sim.store, 'shop', 'web'))).not.toContain('nb-1');
    expect(activeOf(sim.store, 'shop', 'web')).toHaveLength(6);
    sim.clock.advance(5000);
    expect(sim.store.get('Pod', 'shop', stuck[0]!.metadata.name)).toBeDefined();
    sim.clock.advance(2000);
    expect(sim.store.get('Pod', 'shop', stuck[0]!.metadata.name)).toBeUndefined();
  });

  it('deletePod: the pod terminates for its grace period while a replacement starts at once', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: deletePod, deployment: shop/web, count: 2}]`);
    sim.clock.advance(1000);
    const terminating = podsOf(sim.store, 'shop', 'web').filter((p) => p.metadata.deletionTimestamp);
    expect(terminating.map((p) => p.metadata.deletionTimestamp)).toEqual(['2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z']);
    expect(terminating.every(isPodReady)).toBe(true);
    expect(activeOf(sim.store, 'shop', 'web')).toHaveLength(6);
    sim.clock.advance(2000);
    expect(podsOf(sim.store, 'shop', 'web')).toHaveLength(6);
  });

  it('removeNode: its pods are deleted at once and recreated on other nodes', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 1s, action: removeNode, node: nc-1}]`);
    sim.clock.advance(1000);
    expect(sim.store.get('Node', undefined, 'nc-1')).toBeUndefined();
    expect(nodesOf(podsOf(sim.store, 'shop', 'web'))).not.toContain('nc-1');
    expect(podsOf(sim.store, 'shop', 'web')).toHaveLength(6);
  });

  it('updateService: removes and sets annotations and traffic fields', () => {
    const sim = startSim(`${CLUSTER}
deployments: [{name: web}]
services: [{name: web, deployment: web, annotations: {service.kubernetes.io/topology-mode: Auto, keep: x}, ports: [{port: 80}]}]
timeline: [{at: 1s, action: updateService, service: web, annotations: {service.kubernetes.io/topology-mode: null}, trafficDistribution: PreferClose, internalTrafficPolicy: Local}]`);
    sim.clock.advance(1000);
    const svc = sim.store.get('Service', 'default', 'web')!;
    expect(svc.metadata.annotations).toEqual({ keep: 'x' });
    expect(svc['spec']).toMatchObject({ trafficDistribution: 'PreferClose', internalTrafficPolicy: 'Local' });
  });

  it('churn at 2/s deletes a pod every 500 ms until (not at) the end of the scenario', () => {
    const sim = startSim(`${WEB}\ndurationSeconds: 5\nchurn: {podsPerSecond: 2}\ntimeline: [{at: 6s, action: scale, deployment: shop/web, replicas: 1}]`);
    const deletions: string[] = [];
    sim.store.watch('Pod', { onEvent: (e) => { if (e.type === 'MODIFIED' && e.object.metadata.deletionTimestamp && !e.previous?.metadata.deletionTimestamp) deletions.push(e.object.metadata.name); } });
    sim.clock.advance(5000);
    expect(deletions).toHaveLength(9);
    expect(sim.driver.finished).toBe(true);
    sim.clock.advance(5000);
    expect([deletions.length, activeOf(sim.store, 'shop', 'web').length]).toEqual([9, 6]);
  });

  it('timeline times are relative to start', () => {
    const sim = startSim(`${WEB}\ntimeline: [{at: 2s, action: scale, deployment: shop/web, replicas: 1}]`);
    sim.clock.advance(1999);
    expect(activeOf(sim.store, 'shop', 'web')).toHaveLength(6);
    sim.clock.advance(1);
    expect(activeOf(sim.store, 'shop', 'web')).toHaveLength(1);
    expect(sim.clock.now()).toBe(T0 + 2000);
  });
});

describe('ScenarioDriver on the static scenario', () => {
  const settled = () => {
    const sim = startSim(readFileSync(STATIC_SCENARIO_FILE, 'utf8'));
    sim.clock.advance(10_000);
    return sim;
  };

  it('once its pods are Ready nothing changes by itself, and no timer is left', () => {
    const sim = settled();
    expect(readyOf(sim.store, 'shop', 'web')).toHaveLength(6);
    const rv = sim.store.resourceVersion;
    sim.clock.advance(24 * 3600_000);
    expect([sim.store.resourceVersion, sim.clock.pending()]).toEqual([rv, 0]);
  });

  it('a client\'s change plays out (a deleted pod is replaced), then the cluster is quiet again', () => {
    const sim = settled();
    const victim = readyOf(sim.store, 'shop', 'web')[0]!;
    sim.store.delete('Pod', 'shop', victim.metadata.name);
    sim.clock.advance(10_000);
    expect(readyOf(sim.store, 'shop', 'web').map((p) => p.metadata.name)).not.toContain(victim.metadata.name);
    expect(readyOf(sim.store, 'shop', 'web')).toHaveLength(6);
    const rv = sim.store.resourceVersion;
    sim.clock.advance(3600_000);
    expect(sim.store.resourceVersion).toBe(rv);
  });
});
