import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateEndpoints } from './endpoints.ts';
import type { RejectCase } from './test-support.ts';
import { patched, thrownBy } from './test-support.ts';

const base = {
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'legacy-db', namespace: 'shop', uid: 'ep-uid-1', labels: { app: 'legacy-db' }, annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': '2026-03-01T10:00:00Z' } },
  subsets: [
    {
      addresses: [
        { ip: '192.168.10.5', hostname: 'db-0', nodeName: 'node-a1', targetRef: { kind: 'Pod', namespace: 'shop', name: 'db-0', uid: 'pod-db-0', resourceVersion: '77' } },
        { ip: 'db.example.com' },
      ],
      notReadyAddresses: [{ ip: '192.168.10.6' }],
      ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }, { name: 'metrics', port: 9187 }],
    },
  ],
};

const O = 'Endpoints shop/legacy-db';

const rejects: RejectCase[] = [
  { name: 'name must be a DNS-1123 subdomain', edits: { 'metadata.name': 'legacy db' }, object: 'item 0 (kind Endpoints)', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'subsets must be an array', edits: { subsets: {} }, field: 'subsets', reason: /array/ },
  { name: 'address ip must be a string', edits: { 'subsets[0].addresses[0].ip': 192 }, field: 'subsets[0].addresses[0].ip', reason: /string \(got number\)/ },
  { name: 'address ip is required', edits: { 'subsets[0].notReadyAddresses[0].ip': undefined }, field: 'subsets[0].notReadyAddresses[0].ip', reason: /required/ },
  { name: 'address ip at most 253 characters', edits: { 'subsets[0].addresses[1].ip': 'a'.repeat(254) }, field: 'subsets[0].addresses[1].ip', reason: /at most 253/ },
  { name: 'address hostname is a DNS-1123 label', edits: { 'subsets[0].addresses[0].hostname': 'db.0' }, field: 'subsets[0].addresses[0].hostname', reason: /DNS-1123 label/ },
  { name: 'address nodeName is a DNS-1123 subdomain', edits: { 'subsets[0].addresses[0].nodeName': 'Node A' }, field: 'subsets[0].addresses[0].nodeName', reason: /DNS-1123 subdomain/ },
  { name: 'targetRef fields are strings', edits: { 'subsets[0].addresses[0].targetRef.uid': 7 }, field: 'subsets[0].addresses[0].targetRef.uid', reason: /string/ },
  { name: 'port range', edits: { 'subsets[0].ports[0].port': 0 }, field: 'subsets[0].ports[0].port', reason: /between 1 and 65535/ },
  { name: 'port is required', edits: { 'subsets[0].ports[1].port': undefined }, field: 'subsets[0].ports[1].port', reason: /required/ },
  { name: 'port protocol', edits: { 'subsets[0].ports[0].protocol': 'QUIC' }, field: 'subsets[0].ports[0].protocol', reason: /TCP, UDP, SCTP/ },
  { name: 'port names are DNS-1123 labels', edits: { 'subsets[0].ports[0].name': 'PG' }, field: 'subsets[0].ports[0].name', reason: /DNS-1123 label/ },
];

describe('validateEndpoints rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const err = thrownBy(() => validateEndpoints(deepFreeze(patched(base, tc.edits)), 'item 0'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
    });
  }
});

describe('validateEndpoints normalises', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (e: ReturnType<typeof validateEndpoints>) => void }[] = [
    { name: 'a non-IP address is accepted for mirroring to skip with a warning (B.2.5)', edits: {}, check: (e) => expect(e.subsets?.[0]?.addresses?.[1]).toEqual({ ip: 'db.example.com' }) },
    { name: 'ports default to TCP', edits: {}, check: (e) => expect(e.subsets?.[0]?.ports?.[1]).toEqual({ name: 'metrics', port: 9187, protocol: 'TCP' }) },
    { name: 'targetRef is kept as is (B.2.3)', edits: {}, check: (e) => expect(e.subsets?.[0]?.addresses?.[0]?.targetRef).toEqual(base.subsets[0]?.addresses[0]?.targetRef) },
    { name: 'annotations are kept for mirroring (B.4.2)', edits: {}, check: (e) => expect(Object.keys(e.metadata.annotations ?? {})).toEqual(['endpoints.kubernetes.io/last-change-trigger-time']) },
    { name: 'an Endpoints without subsets is accepted', edits: { subsets: null }, check: (e) => expect(e.subsets).toBeUndefined() },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      tc.check(validateEndpoints(deepFreeze(patched(base, tc.edits)), 'item 0'));
    });
  }
});
