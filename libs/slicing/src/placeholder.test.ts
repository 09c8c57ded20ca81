import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_HEADLESS, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { isSamePlaceholder, placeholderSlice } from './placeholder.ts';

const svc = deepFreeze(makeService('web'));
const ph = placeholderSlice(svc, 'IPv4', MANAGED_BY_CONTROLLER);
const existing = makeSlice('web-abc', [], { ports: [] });

const cases: { name: string; slice: EndpointSlice; want: boolean }[] = [
  { name: 'A.7.4 an identical placeholder (name ignored)', slice: existing, want: true },
  { name: 'A.7.4 annotations and timestamps are ignored', slice: { ...existing, metadata: { ...existing.metadata, annotations: { a: 'b' }, creationTimestamp: '2026-01-01T00:00:00Z' } }, want: true },
  { name: 'A.7.4 nil ports equal []', slice: { ...existing, ports: undefined as unknown as [] }, want: true },
  { name: 'A.7.4 another namespace differs', slice: makeSlice('x', [], { ports: [], namespace: 'other' }), want: false },
  { name: 'A.7.4 an extra label differs', slice: makeSlice('x', [], { ports: [], labels: { a: 'b' } }), want: false },
  { name: 'A.7.4 a headless-label difference counts here (full label set)', slice: makeSlice('x', [], { ports: [], labels: { [LABEL_HEADLESS]: '' } }), want: false },
  { name: 'A.7.4 another owner uid differs', slice: makeSlice('x', [], { ports: [], serviceUid: 'other' }), want: false },
  {
    name: 'A.7.4 July 2026: the whole ownerReference is compared (controller flag missing differs)',
    slice: { ...existing, metadata: { ...existing.metadata, ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'uid-svc-web' }] } },
    want: false,
  },
  { name: 'A.7.4 another address type differs', slice: makeSlice('x', [], { ports: [], addressType: 'IPv6' }), want: false },
  { name: 'A.7.4 ports differ', slice: makeSlice('x', []), want: false },
  {
    name: 'A.7.4 endpoints differ',
    slice: makeSlice('x', [{ addresses: ['10.0.0.1'], conditions: {} }], { ports: [] }),
    want: false,
  },
];

describe('isSamePlaceholder', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      expect(isSamePlaceholder(deepFreeze(tc.slice), ph)).toBe(tc.want);
    });
  }
  it('A.7.4 the placeholder has no endpoints, no ports, normal labels and owner', () => {
    expect(ph.endpoints).toEqual([]);
    expect(ph.ports).toEqual([]);
    expect(ph.metadata.ownerReferences?.[0]?.uid).toBe('uid-svc-web');
    expect(ph.metadata.generateName).toBe('web-');
  });
});
