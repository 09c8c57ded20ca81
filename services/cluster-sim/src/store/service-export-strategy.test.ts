// ServiceExports in the store: a CRD object of sigs.k8s.io/mcs-api's schema.
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj } from './types.ts';

const newStore = () => new ObjectStore({ now: () => Date.UTC(2026, 0, 1), seed: 'test' });

const exp = (extra: Record<string, unknown> = {}): KubeObj => ({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ServiceExport', metadata: { name: 'web', namespace: 'default' }, ...extra,
});

function rejection(obj: KubeObj): unknown {
  try {
    newStore().create('ServiceExport', obj);
  } catch (e) {
    return e instanceof ApiError ? [e.code, e.message] : e;
  }
  return 'accepted';
}

describe('ServiceExport', () => {
  it('is stored with a uid, resourceVersion and creationTimestamp', () => {
    const created = newStore().create('ServiceExport', exp());
    expect(created.metadata).toMatchObject({ name: 'web', namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 });
    expect(created.metadata.uid).toBeTruthy();
  });

  it('a spec (not in the schema) is pruned', () => {
    expect(newStore().create('ServiceExport', exp({ spec: { ports: [] } }))).not.toHaveProperty('spec');
  });

  it('keeps conditions as written', () => {
    const conditions = [{ type: 'Valid', status: 'True', reason: 'ServiceFound', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }];
    expect(newStore().create('ServiceExport', exp({ status: { conditions } }))['status']).toEqual({ conditions });
  });

  const invalid: readonly [string, KubeObj, string][] = [
    ['a name that is not a DNS-1123 subdomain', { ...exp(), metadata: { name: 'Web', namespace: 'default' } }, 'metadata.name'],
    ['conditions that are not a list', exp({ status: { conditions: {} } }), 'status.conditions: Invalid value'],
    ['a condition without a type', exp({ status: { conditions: [{ status: 'True' }] } }), 'status.conditions[0].type: Required value'],
    ['a condition status that is not a string', exp({ status: { conditions: [{ type: 'Valid', status: true }] } }), 'status.conditions[0].status: Invalid value'],
    ['two conditions of one type', exp({ status: { conditions: [{ type: 'Valid', status: 'True' }, { type: 'Valid', status: 'False' }] } }), 'status.conditions[1].type: Duplicate value'],
  ];
  for (const [name, obj, field] of invalid) {
    it(`rejects ${name} (422)`, () => {
      const r = rejection(obj) as [number, string];
      expect(r[0]).toBe(422);
      expect(r[1]).toContain(field);
    });
  }
});
