import type { Endpoint } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { endpointKey, sameEndpoints } from './endpoint-identity.ts';

const base: Endpoint = { addresses: ['10.0.0.1'], conditions: { ready: true }, hostname: 'h', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'd', name: 'p', uid: 'u1', resourceVersion: '1' } };

const cases: { name: string; existing: Endpoint[]; desired: Endpoint[]; want: boolean }[] = [
  { name: 'two empty lists are equal', existing: [], desired: [], want: true },
  { name: 'A.6 the same endpoints in another order are equal', existing: [base, { ...base, addresses: ['10.0.0.2'] }], desired: [{ ...base, addresses: ['10.0.0.2'] }, base], want: true },
  { name: 'A.6.2 a targetRef resourceVersion change is no change', existing: [base], desired: [{ ...base, targetRef: { ...base.targetRef, resourceVersion: '9' } }], want: true },
  { name: 'A.6.2 a targetRef uid change is a change', existing: [base], desired: [{ ...base, targetRef: { ...base.targetRef, uid: 'u2' } }], want: false },
  { name: 'A.6.2 a nodeName change is a change', existing: [base], desired: [{ ...base, nodeName: 'n2' }], want: false },
  { name: 'A.6.2 a zone change is a change', existing: [base], desired: [{ ...base, zone: 'a' }], want: false },
  { name: 'A.6.2 an unset ready differs from ready=true', existing: [{ ...base, conditions: {} }], desired: [base], want: false },
  { name: 'A.6.2 a serving condition the mirror does not set is a change', existing: [{ ...base, conditions: { ready: true, serving: true } }], desired: [base], want: false },
  { name: 'A.6.2 hints are not compared', existing: [{ ...base, hints: { forZones: [{ name: 'a' }] } }], desired: [base], want: true },
  { name: 'A.6.1 another hostname is another endpoint', existing: [base], desired: [{ ...base, hostname: 'other' }], want: false },
  { name: 'a removed endpoint is a change', existing: [base, { ...base, addresses: ['10.0.0.2'] }], desired: [base], want: false },
  { name: 'a duplicate in the existing slice cannot stand in for a missing endpoint', existing: [base, base], desired: [base, { ...base, addresses: ['10.0.0.2'] }], want: false },
];

describe('sameEndpoints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(sameEndpoints(deepFreeze(tc.existing), deepFreeze(tc.desired))).toBe(tc.want);
    });
  }
  it('A.6.1 identity ignores address order but not the addresses', () => {
    expect(endpointKey({ ...base, addresses: ['b', 'a'] })).toBe(endpointKey({ ...base, addresses: ['a', 'b'] }));
    expect(endpointKey({ ...base, addresses: ['a'] })).not.toBe(endpointKey({ ...base, addresses: ['b'] }));
  });
});
