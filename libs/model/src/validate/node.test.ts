import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateNode } from './node.ts';
import type { RejectCase } from './test-support.ts';
import { patched, thrownBy } from './test-support.ts';

const base = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: 'node-a1',
    uid: 'node-uid-a1',
    labels: { 'topology.kubernetes.io/zone': 'zone-a', 'kubernetes.io/hostname': 'node-a1' },
    annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
  },
  spec: { podCIDR: '10.244.1.0/24', unschedulable: false },
  status: {
    allocatable: { cpu: '3800m', memory: '15Gi', pods: '110', 'ephemeral-storage': '95491281146', 'hugepages-2Mi': '0' },
    capacity: { cpu: '4' },
    conditions: [
      { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
      { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-03-01T10:00:00Z' },
    ],
    addresses: [
      { type: 'InternalIP', address: '192.168.0.11' },
      { type: 'Hostname', address: 'node-a1' },
    ],
  },
};

const O = 'Node node-a1';

const rejects: RejectCase[] = [
  { name: 'nodes are cluster-scoped: a namespace is an error', edits: { 'metadata.namespace': 'default' }, field: 'metadata.namespace', reason: /cluster-scoped/ },
  { name: 'name must be a DNS-1123 subdomain', edits: { 'metadata.name': 'Node-A1' }, object: 'Node Node-A1', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'zone label value syntax', edits: { 'metadata.labels["topology.kubernetes.io/zone"]': 'zone a' }, field: 'metadata.labels["topology.kubernetes.io/zone"]', reason: /label value/ },
  { name: 'allocatable values are quantities', edits: { 'status.allocatable.cpu': 'four' }, field: 'status.allocatable["cpu"]', reason: /quantity/ },
  { name: 'allocatable values are strings or numbers', edits: { 'status.allocatable.cpu': { m: 1 } }, field: 'status.allocatable["cpu"]', reason: /quantity string \(got object\)/ },
  { name: 'allocatable keys are resource names', edits: { 'status.allocatable["a b"]': '1' }, field: 'status.allocatable["a b"]', reason: /qualified name/ },
  { name: 'condition status is an enum', edits: { 'status.conditions[1].status': 'maybe' }, field: 'status.conditions[1].status', reason: /True, False, Unknown/ },
  { name: 'addresses need a type', edits: { 'status.addresses[0].type': undefined }, field: 'status.addresses[0].type', reason: /required/ },
  { name: 'unschedulable is a boolean', edits: { 'spec.unschedulable': 'yes' }, field: 'spec.unschedulable', reason: /boolean/ },
  { name: 'status must be an object', edits: { status: [] }, field: 'status', reason: /object \(got array\)/ },
];

describe('validateNode rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const err = thrownBy(() => validateNode(deepFreeze(patched(base, tc.edits)), 'item 0'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
    });
  }
});

describe('validateNode normalises', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (n: ReturnType<typeof validateNode>) => void }[] = [
    { name: 'a numeric allocatable CPU becomes its text', edits: { 'status.allocatable.cpu': 4 }, check: (n) => expect(n.status?.allocatable?.['cpu']).toBe('4') },
    { name: 'millicores and binary suffixes are quantities', edits: {}, check: (n) => expect(n.status?.allocatable).toMatchObject({ cpu: '3800m', memory: '15Gi' }) },
    { name: 'an empty namespace is accepted on a cluster-scoped object', edits: { 'metadata.namespace': '' }, check: (n) => expect(n.metadata.namespace).toBeUndefined() },
    { name: 'conditions keep type and status only', edits: {}, check: (n) => expect(n.status?.conditions?.[1]).toEqual({ type: 'Ready', status: 'True' }) },
    { name: 'capacity and podCIDR are dropped', edits: {}, check: (n) => expect(JSON.stringify(n)).not.toMatch(/capacity|podCIDR/) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(patched(base, tc.edits));
      tc.check(validateNode(raw, 'item 0'));
    });
  }
});
