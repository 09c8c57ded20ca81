import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateServiceExport } from './service-export.ts';
import type { RejectCase } from './test-support.ts';
import { patched, thrownBy } from './test-support.ts';

const base = {
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ServiceExport',
  metadata: { name: 'web', namespace: 'shop', uid: 'se-uid-1', resourceVersion: '12', creationTimestamp: '2026-03-01T10:00:00Z', generation: 1 },
  status: {
    conditions: [
      { type: 'Valid', status: 'True', reason: 'ServiceFound', message: '', lastTransitionTime: '2026-03-01T10:00:01Z', observedGeneration: 1 },
      { type: 'Conflict', status: 'False' },
    ],
  },
};

const O = 'ServiceExport shop/web';

const rejects: RejectCase[] = [
  { name: 'another apiVersion', edits: { apiVersion: 'multicluster.x-k8s.io/v1beta1' }, field: 'apiVersion', reason: /multicluster\.x-k8s\.io\/v1alpha1/ },
  { name: 'name must be a DNS-1123 subdomain', edits: { 'metadata.name': 'Web' }, object: 'ServiceExport shop/Web', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'namespace must be a DNS-1123 label', edits: { 'metadata.namespace': 'a.b' }, object: 'ServiceExport a.b/web', field: 'metadata.namespace', reason: /DNS-1123 label/ },
  { name: 'status must be an object', edits: { status: 'ok' }, field: 'status', reason: /object/ },
  { name: 'conditions must be an array', edits: { 'status.conditions': {} }, field: 'status.conditions', reason: /array/ },
  { name: 'a condition needs a type', edits: { 'status.conditions[1].type': undefined }, field: 'status.conditions[1].type', reason: /required/ },
  { name: 'a condition needs a status', edits: { 'status.conditions[0].status': undefined }, field: 'status.conditions[0].status', reason: /required/ },
  { name: 'lastTransitionTime is RFC 3339', edits: { 'status.conditions[0].lastTransitionTime': 'yesterday' }, field: 'status.conditions[0].lastTransitionTime', reason: /RFC 3339/ },
];

describe('validateServiceExport rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const err = thrownBy(() => validateServiceExport(deepFreeze(patched(base, tc.edits)), 'item 0'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
    });
  }
});

describe('validateServiceExport accepts what the CRD accepts', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (s: ReturnType<typeof validateServiceExport>) => void }[] = [
    { name: 'identity and creationTimestamp are kept', edits: {}, check: (s) => expect(s.metadata).toEqual(base.metadata) },
    { name: 'conditions keep their fields, "" left out', edits: {}, check: (s) => expect(s.status?.conditions?.[0]).toEqual({ type: 'Valid', status: 'True', reason: 'ServiceFound', lastTransitionTime: '2026-03-01T10:00:01Z', observedGeneration: 1 }) },
    { name: 'a spec (pruned by the schema) is dropped', edits: { spec: { anything: true } }, check: (s) => expect(s).not.toHaveProperty('spec') },
    { name: 'no status at all', edits: { status: undefined }, check: (s) => expect(s.status).toBeUndefined() },
    { name: 'an empty status is unset', edits: { status: {} }, check: (s) => expect(s.status).toBeUndefined() },
    { name: 'a missing namespace is default', edits: { 'metadata.namespace': undefined }, check: (s) => expect(s.metadata.namespace).toBe('default') },
    { name: 'a name with dots (a subdomain, not a Service name) is accepted', edits: { 'metadata.name': 'web.v2' }, check: (s) => expect(s.metadata.name).toBe('web.v2') },
    { name: 'a condition status of an older CRD (any string) is accepted', edits: { 'status.conditions[1].status': 'Pending' }, check: (s) => expect(s.status?.conditions?.[1]?.status).toBe('Pending') },
    { name: 'apiVersion and kind are filled in', edits: { apiVersion: undefined, kind: undefined }, check: (s) => expect([s.apiVersion, s.kind]).toEqual(['multicluster.x-k8s.io/v1alpha1', 'ServiceExport']) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      tc.check(validateServiceExport(deepFreeze(patched(base, tc.edits)), 'item 0'));
    });
  }
});
