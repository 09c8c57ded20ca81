import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { startSim } from '../scenario/driver-fixture.ts';
import type { KubeObj } from '../store/types.ts';

const SIM = `
zones: [a]
nodes: [{name: n1, zone: a}]
deployments: [{name: web, replicas: 2, readinessDelayMs: 0, containerPorts: [{name: http, containerPort: 8080}]}]
cluster: {kubernetesService: false}
`;

const svc = (name: string, spec: Record<string, unknown>): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', labels: { team: 'x' } }, spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }], ...spec } });

type Subsets = { addresses?: { ip: string; targetRef: { name: string } }[]; notReadyAddresses?: unknown[] }[];
const subsets = (o: KubeObj | undefined) => o?.['subsets'] as Subsets | undefined;
const addressCount = (o: KubeObj | undefined) => (subsets(o) ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0), 0);

describe('EndpointsController', () => {
  it('creates Endpoints for a new service with a selector, copying its labels', () => {
    const sim = startSim(SIM);
    sim.clock.advance(0);
    sim.store.create('Service', svc('web', { selector: { app: 'web' } }));
    sim.clock.advance(0);
    const eps = sim.store.get('Endpoints', 'default', 'web')!;
    expect([addressCount(eps), eps.metadata.labels]).toEqual([2, { team: 'x' }]);
    expect(eps.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time']).toBe('2026-01-01T00:00:00Z');
  });

  it('re-syncs on a selector change and deletes Endpoints with the service', () => {
    const sim = startSim(SIM);
    sim.clock.advance(0);
    const created = sim.store.create('Service', svc('web', { selector: { app: 'web' } }));
    sim.clock.advance(0);
    sim.store.update('Service', { ...created, spec: { ...(created['spec'] as object), selector: { app: 'nothing' } } });
    sim.clock.advance(0);
    expect(subsets(sim.store.get('Endpoints', 'default', 'web'))).toEqual([]);
    sim.store.delete('Service', 'default', 'web');
    sim.clock.advance(0);
    expect(sim.store.get('Endpoints', 'default', 'web')).toBeUndefined();
  });

  it('leaves Endpoints of a selectorless service to their owner', () => {
    const sim = startSim(SIM);
    sim.store.create('Service', svc('ext', {}));
    const mine: KubeObj = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'ext', namespace: 'default' }, subsets: [{ addresses: [{ ip: '192.0.2.1' }], ports: [{ port: 5432 }] }] };
    const stored = sim.store.create('Endpoints', mine);
    sim.clock.advance(1000);
    expect(sim.store.get('Endpoints', 'default', 'ext')).toBe(stored);
  });

  it('drops a pod relabelled out of the selector', () => {
    const sim = startSim(SIM);
    sim.clock.advance(0);
    sim.store.create('Service', svc('web', { selector: { app: 'web' } }));
    sim.clock.advance(0);
    const pod = sim.store.list('Pod')[0]!;
    sim.store.update('Pod', { ...pod, metadata: { ...pod.metadata, labels: { app: 'other' } } });
    sim.clock.advance(0);
    expect(addressCount(sim.store.get('Endpoints', 'default', 'web'))).toBe(1);
  });

  it('does not rewrite Endpoints when a pod change does not alter them', () => {
    const sim = startSim(SIM);
    sim.clock.advance(0);
    sim.store.create('Service', svc('web', { selector: { app: 'web' } }));
    sim.clock.advance(0);
    const before = sim.store.get('Endpoints', 'default', 'web');
    const pod = sim.store.list('Pod')[0]!;
    sim.store.update('Pod', { ...pod, metadata: { ...pod.metadata, annotations: { note: 'x' } } });
    sim.clock.advance(0);
    expect(sim.store.get('Endpoints', 'default', 'web')).toBe(before);
  });

  it('labels the Endpoints of a headless service', () => {
    const sim = startSim(SIM);
    sim.store.create('Service', svc('h', { selector: { app: 'web' }, clusterIP: 'None' }));
    sim.clock.advance(0);
    expect(sim.store.get('Endpoints', 'default', 'h')!.metadata.labels).toEqual({ team: 'x', 'service.kubernetes.io/headless': '' });
  });
});
