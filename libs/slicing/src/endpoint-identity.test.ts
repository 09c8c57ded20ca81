import { describe, expect, it } from 'vitest';
import type { Endpoint } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { endpointIdentity, endpointNeedsUpdate } from './endpoint-identity.ts';

const base: Endpoint = deepFreeze({
  addresses: ['10.0.0.1', '10.0.0.2'],
  conditions: { ready: true, serving: true, terminating: false },
  hostname: 'h',
  targetRef: { kind: 'Pod', namespace: 'default', name: 'p', uid: 'u1' },
  nodeName: 'n1',
  zone: 'z1',
});

describe('A.6.1 endpoint identity', () => {
  const same: { name: string; other: Endpoint }[] = [
    { name: 'address order does not matter', other: { ...base, addresses: ['10.0.0.2', '10.0.0.1'] } },
    { name: 'conditions are not part of it', other: { ...base, conditions: { ready: false, serving: false, terminating: true } } },
    { name: 'zone and nodeName are not part of it', other: { ...base, zone: 'z2', nodeName: 'n2' } },
    { name: 'targetRef uid is not part of it', other: { ...base, targetRef: { ...base.targetRef, uid: 'u2' } } },
    { name: 'hints are not part of it', other: { ...base, hints: { forZones: [{ name: 'z1' }] } } },
  ];
  for (const tc of same) {
    it(`${tc.name}`, () => {
      expect(endpointIdentity(deepFreeze(tc.other))).toBe(endpointIdentity(base));
    });
  }
  const different: { name: string; other: Endpoint }[] = [
    { name: 'another address', other: { ...base, addresses: ['10.0.0.1'] } },
    { name: 'another hostname', other: { ...base, hostname: 'x' } },
    { name: 'no hostname', other: { ...base, hostname: undefined } },
    { name: 'another pod name', other: { ...base, targetRef: { ...base.targetRef, name: 'q' } } },
    { name: 'another pod namespace', other: { ...base, targetRef: { ...base.targetRef, namespace: 'x' } } },
  ];
  for (const tc of different) {
    it(`${tc.name} is another endpoint`, () => {
      expect(endpointIdentity(deepFreeze(tc.other))).not.toBe(endpointIdentity(base));
    });
  }
  it('A.3.5 two pods sharing one IP are two endpoints', () => {
    const a = { ...base, targetRef: { kind: 'Pod', namespace: 'default', name: 'a' } };
    const b = { ...base, targetRef: { kind: 'Pod', namespace: 'default', name: 'b' } };
    expect(endpointIdentity(a)).not.toBe(endpointIdentity(b));
  });
});

describe('A.6.2 needs update', () => {
  const cases: { name: string; other: Endpoint; want: boolean }[] = [
    { name: 'identical -> no', other: { ...base }, want: false },
    { name: 'hints differ only -> no', other: { ...base, hints: { forZones: [{ name: 'z9' }] } }, want: false },
    { name: 'targetRef resourceVersion differs only -> no', other: { ...base, targetRef: { ...base.targetRef, resourceVersion: '7' } }, want: false },
    { name: 'nodeName -> yes', other: { ...base, nodeName: 'n2' }, want: true },
    { name: 'nodeName absent vs set -> yes', other: { ...base, nodeName: undefined }, want: true },
    { name: 'zone -> yes', other: { ...base, zone: 'z2' }, want: true },
    { name: 'ready -> yes', other: { ...base, conditions: { ...base.conditions, ready: false } }, want: true },
    { name: 'serving -> yes', other: { ...base, conditions: { ...base.conditions, serving: false } }, want: true },
    { name: 'terminating -> yes', other: { ...base, conditions: { ...base.conditions, terminating: true } }, want: true },
    { name: 'a condition absent vs set -> yes', other: { ...base, conditions: { ready: true, serving: true } }, want: true },
    { name: 'targetRef uid -> yes', other: { ...base, targetRef: { ...base.targetRef, uid: 'u2' } }, want: true },
    { name: 'targetRef missing -> yes', other: { ...base, targetRef: undefined }, want: true },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      expect(endpointNeedsUpdate(deepFreeze(tc.other), base)).toBe(tc.want);
    });
  }
});
