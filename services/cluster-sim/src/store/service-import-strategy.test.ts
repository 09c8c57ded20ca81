// ServiceImports in the store: a CRD object of sigs.k8s.io/mcs-api's schema.
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj } from './types.ts';

const newStore = () => new ObjectStore({ now: () => Date.UTC(2026, 0, 1), seed: 'test' });

const spec = { type: 'ClusterSetIP', ips: ['243.0.0.7'], ports: [{ name: 'http', protocol: 'TCP', port: 80 }], sessionAffinity: 'None' };
const imp = (extra: Record<string, unknown> = {}): KubeObj => ({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceImport', metadata: { name: 'web', namespace: 'default' }, spec, ...extra,
});

function rejection(obj: KubeObj): unknown {
  try {
    newStore().create('ServiceImport', obj);
  } catch (e) {
    return e instanceof ApiError ? [e.code, e.message] : e;
  }
  return 'accepted';
}

describe('ServiceImport', () => {
  it('is stored with its spec and status as written, and a generation', () => {
    const status = { clusters: [{ cluster: 'a' }, { cluster: 'b' }] };
    const created = newStore().create('ServiceImport', imp({ status }));
    expect([created['spec'], created['status'], created.metadata.generation]).toEqual([spec, status, 1]);
  });

  it('fields outside the schema are pruned', () => {
    expect(newStore().create('ServiceImport', imp({ data: { x: 1 } }))).not.toHaveProperty('data');
  });

  it('a headless import without ips is valid', () => {
    expect(rejection(imp({ spec: { type: 'Headless', ports: [] } }))).toBe('accepted');
  });

  it('an update of the status subresource keeps the spec, one of the main resource keeps the status', () => {
    const store = newStore();
    const created = store.create('ServiceImport', imp());
    const updated = store.update('ServiceImport', { ...created, spec: { type: 'Headless', ports: [] }, status: { clusters: [{ cluster: 'a' }] } }, { scope: 'status' });
    expect([updated['spec'], updated['status']]).toEqual([spec, { clusters: [{ cluster: 'a' }] }]);
    const main = store.update('ServiceImport', { ...updated, spec: { type: 'Headless', ports: [] }, status: {} }, { scope: 'main' });
    expect([main['spec'], main['status'], main.metadata.generation]).toEqual([{ type: 'Headless', ports: [] }, { clusters: [{ cluster: 'a' }] }, 2]);
  });

  const invalid: readonly [string, KubeObj, string][] = [
    ['a spec without a type', imp({ spec: { ports: [] } }), 'spec.type: Required value'],
    ['a type that is not ClusterSetIP or Headless', imp({ spec: { ...spec, type: 'LoadBalancer' } }), 'spec.type: Unsupported value'],
    ['a spec without ports', imp({ spec: { type: 'Headless' } }), 'spec.ports: Required value'],
    ['a port without a number', imp({ spec: { ...spec, ports: [{ name: 'http' }] } }), 'spec.ports[0].port: Required value'],
    ['a port out of range', imp({ spec: { ...spec, ports: [{ port: 70_000 }] } }), 'spec.ports[0].port: Invalid value'],
    ['an unknown protocol', imp({ spec: { ...spec, ports: [{ port: 80, protocol: 'ICMP' }] } }), 'spec.ports[0].protocol: Unsupported value'],
    ['three ips', imp({ spec: { ...spec, ips: ['1.1.1.1', '1.1.1.2', '1.1.1.3'] } }), 'spec.ips: Too many'],
    ['an unknown session affinity', imp({ spec: { ...spec, sessionAffinity: 'Cookie' } }), 'spec.sessionAffinity: Unsupported value'],
    ['a status cluster without its name', imp({ status: { clusters: [{}] } }), 'status.clusters[0].cluster: Required value'],
    ['one cluster twice', imp({ status: { clusters: [{ cluster: 'a' }, { cluster: 'a' }] } }), 'status.clusters[1].cluster: Duplicate value'],
    ['a condition without a type', imp({ status: { conditions: [{ status: 'True' }] } }), 'status.conditions[0].type: Required value'],
  ];
  for (const [name, obj, field] of invalid) {
    it(`rejects ${name} (422)`, () => {
      const r = rejection(obj) as [number, string];
      expect(r[0]).toBe(422);
      expect(r[1]).toContain(field);
    });
  }
});
