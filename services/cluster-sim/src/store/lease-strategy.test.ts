// Leases in the store: what leader election writes, checked as upstream does.
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj } from './types.ts';

const newStore = () => new ObjectStore({ now: () => Date.UTC(2026, 0, 1), seed: 'test' });

const lease = (spec: Record<string, unknown> | undefined): KubeObj => ({
  apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'slicemesh-publisher', namespace: 'kube-system' },
  ...(spec ? { spec } : {}),
});

const HELD = { holderIdentity: 'publisher-0', leaseDurationSeconds: 15, acquireTime: '2026-01-01T00:00:00.000000Z', renewTime: '2026-01-01T00:00:10.000000Z', leaseTransitions: 0 };

describe('Lease', () => {
  it('keeps the spec as written, with no generation (as upstream)', () => {
    const created = newStore().create('Lease', lease(HELD));
    expect([created['spec'], created.metadata.generation]).toEqual([HELD, undefined]);
  });

  it('a lease without spec gets an empty one', () => {
    expect(newStore().create('Lease', lease(undefined))['spec']).toEqual({});
  });

  it('drops the CoordinatedLeaderElection fields (feature gate off, as 1.32 by default)', () => {
    expect(newStore().create('Lease', lease({ ...HELD, strategy: 'OldestEmulationVersion', preferredHolder: 'x' }))['spec']).toEqual(HELD);
  });

  const invalid: readonly [string, Record<string, unknown>, string][] = [
    ['leaseDurationSeconds 0', { leaseDurationSeconds: 0 }, 'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0'],
    ['negative leaseTransitions', { leaseTransitions: -1 }, 'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0'],
    ['a renewTime that is not a time', { renewTime: 'yesterday' }, 'spec.renewTime: Invalid value: "yesterday": must be an RFC 3339 time, e.g. 2026-01-01T00:00:00.000000Z'],
  ];
  for (const [name, spec, message] of invalid) {
    it(`rejects ${name}`, () => {
      let err: unknown;
      try {
        newStore().create('Lease', lease(spec));
      } catch (e) {
        err = e;
      }
      expect(err instanceof ApiError ? [err.code, err.message] : err).toEqual([422, `Lease "slicemesh-publisher" is invalid: ${message}`]);
    });
  }

  it('a renewal from a stale copy is 409 Conflict: two candidates cannot both take the lease', () => {
    const store = newStore();
    const created = store.create('Lease', lease(HELD));
    store.update('Lease', { ...created, spec: { ...HELD, renewTime: '2026-01-01T00:00:20.000000Z' } });
    let err: unknown;
    try {
      store.update('Lease', { ...created, spec: { ...HELD, holderIdentity: 'publisher-1', leaseTransitions: 1 } });
    } catch (e) {
      err = e;
    }
    expect(err instanceof ApiError ? [err.code, err.reason, err.message] : err).toEqual([409, 'Conflict', 'Operation cannot be fulfilled on leases.coordination.k8s.io "slicemesh-publisher": the object has been modified; please apply your changes to the latest version and try again']);
  });
});
