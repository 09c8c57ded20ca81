import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import type { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj } from './types.ts';

const svc = (name: string, spec: Record<string, unknown>): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default' }, spec });

const specOf = (o: KubeObj) => o['spec'] as Record<string, unknown>;

describe('Service defaults and allocation', () => {
  it('defaults type, protocol, targetPort, affinity, families and traffic policy', () => {
    const store = new ObjectStore({ now: () => 0 });
    expect(specOf(store.create('Service', svc('web', { selector: { app: 'web' }, ports: [{ port: 80 }] })))).toEqual({
      type: 'ClusterIP', selector: { app: 'web' }, sessionAffinity: 'None', clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'],
      ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
  });

  it('allocates cluster IPs in order and node ports from 30000 for NodePort services', () => {
    const store = new ObjectStore({ now: () => 0 });
    store.create('Service', svc('a', { ports: [{ port: 80 }] }));
    const b = specOf(store.create('Service', svc('b', { type: 'NodePort', ports: [{ name: 'x', port: 80 }, { name: 'y', port: 81 }] })));
    expect(b['clusterIP']).toBe('10.96.0.11');
    expect((b['ports'] as { nodePort: number }[]).map((p) => p.nodePort)).toEqual([30000, 30001]);
    expect(b['externalTrafficPolicy']).toBe('Cluster');
  });

  it('headless services keep clusterIP None', () => {
    const store = new ObjectStore({ now: () => 0 });
    expect(specOf(store.create('Service', svc('h', { clusterIP: 'None', ports: [] })))['clusterIPs']).toEqual(['None']);
  });

  it('a requested IP that is taken is 422 Invalid; once released it can be taken', () => {
    const store = new ObjectStore({ now: () => 0 });
    store.create('Service', svc('a', { clusterIP: '10.96.0.50' }));
    let err: unknown;
    try {
      store.create('Service', svc('b', { clusterIP: '10.96.0.50' }));
    } catch (e) {
      err = e;
    }
    expect([(err as ApiError).code, (err as ApiError).message]).toEqual([422, 'Service "b" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.50"]: failed to allocate IP 10.96.0.50: provided IP is already allocated']);
    store.delete('Service', 'default', 'a');
    expect(specOf(store.create('Service', svc('b', { clusterIP: '10.96.0.50' })))['clusterIP']).toBe('10.96.0.50');
  });

  it('an update that omits clusterIP and nodePort keeps them; changing clusterIP is 422', () => {
    const store = new ObjectStore({ now: () => 0 });
    const a = store.create('Service', svc('a', { type: 'NodePort', ports: [{ port: 80 }] }));
    const updated = store.update('Service', { ...a, spec: { type: 'NodePort', ports: [{ port: 80 }], selector: { x: 'y' } } });
    expect(specOf(updated)['clusterIP']).toBe('10.96.0.10');
    expect((specOf(updated)['ports'] as { nodePort: number }[])[0]!.nodePort).toBe(30000);
    expect(() => store.update('Service', { ...updated, spec: { ...specOf(updated), clusterIP: '10.96.0.99' } })).toThrow('may not change once set');
  });

  it('switching NodePort back to ClusterIP drops and frees the node ports', () => {
    const store = new ObjectStore({ now: () => 0 });
    const a = store.create('Service', svc('a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }));
    const b = store.update('Service', { ...a, spec: { ...specOf(a), type: 'ClusterIP' } });
    expect((specOf(b)['ports'] as Record<string, unknown>[])[0]!['nodePort']).toBeUndefined();
    expect(() => store.create('Service', svc('c', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }))).not.toThrow();
  });

  const invalid: readonly { name: string; spec: Record<string, unknown>; field: string }[] = [
    { name: 'port out of range', spec: { ports: [{ port: 0 }] }, field: 'spec.ports[0].port' },
    { name: 'unknown protocol', spec: { ports: [{ port: 80, protocol: 'ICMP' }] }, field: 'spec.ports[0].protocol' },
    { name: 'unnamed port among several', spec: { ports: [{ port: 80, name: 'a' }, { port: 81 }] }, field: 'spec.ports[1].name' },
    { name: 'duplicate port names', spec: { ports: [{ port: 80, name: 'a' }, { port: 81, name: 'a' }] }, field: 'spec.ports[1].name' },
    { name: 'unknown type', spec: { type: 'Magic' }, field: 'spec.type' },
    { name: 'bad clusterIP', spec: { clusterIP: '999.1.1.1' }, field: 'spec.clusterIP' },
  ];
  for (const tc of invalid) {
    it(`422 names ${tc.field} for ${tc.name}`, () => {
      const store = new ObjectStore({ now: () => 0 });
      let err: unknown;
      try {
        store.create('Service', svc('a', tc.spec));
      } catch (e) {
        err = e;
      }
      expect((err as ApiError).code).toBe(422);
      expect((err as ApiError).details?.causes?.map((c) => c.field)).toContain(tc.field);
    });
  }
});
