import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { startSim } from '../scenario/driver-fixture.ts';
import type { KubeObj } from '../store/types.ts';
import { failedNode } from './node-actions.ts';
import { isPodReady, nodeNameOf, podIP } from './pod-status.ts';

const CLUSTER = `
zones: [a]
nodes: [{name: n1, zone: a}, {name: n2, zone: a}]
`;

const apiPod = (name: string, spec: Record<string, unknown> = {}): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [{ name: 'c' }], ...spec } });

describe('KubeletSim', () => {
  it('schedules, starts and readies a pod created without a node (as from kubectl)', () => {
    const sim = startSim(CLUSTER, { defaultReadinessDelayMs: 300 });
    sim.store.create('Pod', apiPod('p'), { resetStatus: true });
    sim.clock.advance(0);
    const started = sim.store.get('Pod', 'default', 'p')!;
    expect([nodeNameOf(started), podIP(started), isPodReady(started)]).toEqual(['n1', '10.244.0.2', false]);
    sim.clock.advance(300);
    expect(isPodReady(sim.store.get('Pod', 'default', 'p')!)).toBe(true);
  });

  it('starts a pod created already bound to a ready node', () => {
    const sim = startSim(CLUSTER);
    sim.store.create('Pod', apiPod('p', { nodeName: 'n2' }));
    sim.clock.advance(0);
    expect(podIP(sim.store.get('Pod', 'default', 'p')!)).toBe('10.244.1.2');
  });

  it('removes a gracefully deleted pod when its grace period ends', () => {
    const sim = startSim(CLUSTER);
    sim.store.create('Pod', apiPod('p', { terminationGracePeriodSeconds: 3 }));
    sim.clock.advance(0);
    sim.store.delete('Pod', 'default', 'p');
    sim.clock.advance(2999);
    expect(sim.store.get('Pod', 'default', 'p')?.metadata.deletionTimestamp).toBe('2026-01-01T00:00:03Z');
    sim.clock.advance(1);
    expect(sim.store.get('Pod', 'default', 'p')).toBeUndefined();
  });

  it('a terminating pod on a failed node stays until the node recovers', () => {
    const sim = startSim(`${CLUSTER}\ntimeline: [{at: 1s, action: failNode, node: n1}, {at: 10s, action: recoverNode, node: n1}]`);
    sim.store.create('Pod', apiPod('p', { nodeName: 'n1', terminationGracePeriodSeconds: 2 }));
    sim.clock.advance(1000);
    sim.store.delete('Pod', 'default', 'p');
    sim.clock.advance(8000);
    expect(sim.store.get('Pod', 'default', 'p')).toBeDefined();
    sim.clock.advance(1000);
    expect(sim.store.get('Pod', 'default', 'p')).toBeUndefined();
  });

  it('marks pods not ready when their node stops being Ready through the API too', () => {
    const sim = startSim(CLUSTER, { defaultReadinessDelayMs: 0 });
    sim.store.create('Pod', apiPod('p', { nodeName: 'n1' }));
    sim.clock.advance(0);
    sim.clock.advance(0);
    expect(isPodReady(sim.store.get('Pod', 'default', 'p')!)).toBe(true);
    sim.store.update('Node', failedNode(sim.store.get('Node', undefined, 'n1')!, 'False', 'x'));
    sim.clock.advance(0);
    expect(isPodReady(sim.store.get('Pod', 'default', 'p')!)).toBe(false);
  });

  it('force-deletes the pods of a deleted node and frees nothing else', () => {
    const sim = startSim(CLUSTER);
    sim.store.create('Pod', apiPod('a', { nodeName: 'n1', terminationGracePeriodSeconds: 30 }));
    sim.store.create('Pod', apiPod('b', { nodeName: 'n2' }));
    sim.clock.advance(0);
    sim.store.delete('Node', undefined, 'n1');
    sim.clock.advance(0);
    expect([sim.store.get('Pod', 'default', 'a'), sim.store.get('Pod', 'default', 'b') !== undefined]).toEqual([undefined, true]);
  });

  it('does not reuse the IP of a removed pod for the next one on the node', () => {
    const sim = startSim(CLUSTER);
    sim.store.create('Pod', apiPod('a', { nodeName: 'n1' }));
    sim.clock.advance(0);
    const first = podIP(sim.store.get('Pod', 'default', 'a')!);
    sim.store.delete('Pod', 'default', 'a', { gracePeriodSeconds: 0 });
    sim.store.create('Pod', apiPod('b', { nodeName: 'n1' }));
    sim.clock.advance(0);
    expect([first, podIP(sim.store.get('Pod', 'default', 'b')!)]).toEqual(['10.244.0.2', '10.244.0.3']);
  });
});
