import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validateEndpointSlice } from './endpoint-slice.ts';
import type { RejectCase } from './test-support.ts';
import { patched, thrownBy } from './test-support.ts';

const endpoint = (i: number): Record<string, unknown> => ({
  addresses: [`10.244.1.${i}`],
  conditions: { ready: true, serving: true, terminating: false },
  nodeName: 'node-a1',
  zone: 'zone-a',
  targetRef: { kind: 'Pod', namespace: 'shop', name: `web-${i}`, uid: `pod-${i}` },
  hints: { forZones: [{ name: 'zone-a' }] },
});

const base = {
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'web-abc12',
    namespace: 'shop',
    generateName: 'web-',
    generation: 3,
    labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-web', controller: true, blockOwnerDeletion: true }],
  },
  addressType: 'IPv4',
  endpoints: [endpoint(1), endpoint(2)],
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
};

const O = 'EndpointSlice shop/web-abc12';
const many = (n: number, f: (i: number) => unknown): unknown[] => Array.from({ length: n }, (_, i) => f(i));

const rejects: RejectCase[] = [
  { name: 'apiVersion must be discovery.k8s.io/v1', edits: { apiVersion: 'discovery.k8s.io/v1beta1' }, field: 'apiVersion', reason: /discovery.k8s.io\/v1/ },
  { name: 'name must be a DNS-1123 subdomain', edits: { 'metadata.name': 'web>abc' }, object: 'EndpointSlice shop/web>abc', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'addressType is required', edits: { addressType: undefined }, field: 'addressType', reason: /required/ },
  { name: 'addressType is IPv4, IPv6, FQDN or IP', edits: { addressType: 'IPv7' }, field: 'addressType', reason: /IPv4, IPv6, FQDN, IP/ },
  { name: 'at most 1000 endpoints (A.8.2)', edits: { endpoints: many(1001, (i) => ({ addresses: [`10.1.${i >> 8}.${i & 255}`] })) }, field: 'endpoints', reason: /at most 1000 entries \(got 1001\)/ },
  { name: 'every endpoint has at least one address', edits: { 'endpoints[0].addresses': [] }, field: 'endpoints[0].addresses', reason: /at least one/ },
  { name: 'at most 100 addresses per endpoint (A.8.2)', edits: { 'endpoints[1].addresses': many(101, (i) => `10.2.0.${i}`) }, field: 'endpoints[1].addresses', reason: /at most 100/ },
  { name: 'IPv4 slices hold IPv4 addresses', edits: { 'endpoints[1].addresses': ['fd00::1'] }, field: 'endpoints[1].addresses[0]', reason: /IPv4 address/ },
  { name: 'IPv6 slices hold IPv6 addresses', edits: { addressType: 'IPv6' }, field: 'endpoints[0].addresses[0]', reason: /IPv6 address/ },
  { name: 'addresses must be IPs', edits: { 'endpoints[0].addresses': ['10.244.1.999'] }, field: 'endpoints[0].addresses[0]', reason: /valid IP/ },
  { name: 'FQDN addresses are DNS-1123 subdomains', edits: { addressType: 'FQDN', 'endpoints[0].addresses': ['Bad_Host.example'] }, field: 'endpoints[0].addresses[0]', reason: /DNS-1123 subdomain/ },
  { name: 'at most 8 zone hints (A.8.2)', edits: { 'endpoints[0].hints.forZones': many(9, (i) => ({ name: `zone-${i}` })) }, field: 'endpoints[0].hints.forZones', reason: /at most 8/ },
  { name: 'at most 8 node hints', edits: { 'endpoints[0].hints.forNodes': many(9, (i) => ({ name: `node-${i}` })) }, field: 'endpoints[0].hints.forNodes', reason: /at most 8/ },
  { name: 'zone hint names are not empty', edits: { 'endpoints[0].hints.forZones[0].name': '' }, field: 'endpoints[0].hints.forZones[0].name', reason: /empty/ },
  { name: 'node hint names are node names', edits: { 'endpoints[0].hints.forNodes': [{ name: 'Node A' }] }, field: 'endpoints[0].hints.forNodes[0].name', reason: /DNS-1123 subdomain/ },
  { name: 'zone is a label value', edits: { 'endpoints[1].zone': 'zone/a' }, field: 'endpoints[1].zone', reason: /label value/ },
  { name: 'conditions are booleans', edits: { 'endpoints[0].conditions.ready': 'true' }, field: 'endpoints[0].conditions.ready', reason: /boolean \(got string\)/ },
  { name: 'endpoint nodeName is a DNS-1123 subdomain', edits: { 'endpoints[0].nodeName': 'node*' }, field: 'endpoints[0].nodeName', reason: /DNS-1123 subdomain/ },
  { name: 'endpoint hostname is a DNS-1123 label', edits: { 'endpoints[0].hostname': 'a.b' }, field: 'endpoints[0].hostname', reason: /DNS-1123 label/ },
  { name: 'port range', edits: { 'ports[0].port': 0 }, field: 'ports[0].port', reason: /between 1 and 65535/ },
  { name: 'port protocol', edits: { 'ports[0].protocol': 'tcp' }, field: 'ports[0].protocol', reason: /TCP, UDP, SCTP/ },
  { name: 'port names are unique', edits: { ports: [{ name: 'http', port: 1 }, { name: 'http', port: 2 }] }, field: 'ports[1].name', reason: /duplicate/ },
  { name: 'an unnamed port counts as the name ""', edits: { ports: [{ port: 1 }, { name: '', port: 2 }] }, field: 'ports[1].name', reason: /duplicate port name ""/ },
  { name: 'port names are DNS-1123 labels', edits: { 'ports[0].name': 'Http' }, field: 'ports[0].name', reason: /DNS-1123 label/ },
  { name: 'endpoints must be an array', edits: { endpoints: 'none' }, field: 'endpoints', reason: /array/ },
];

describe('validateEndpointSlice rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const err = thrownBy(() => validateEndpointSlice(deepFreeze(patched(base, tc.edits)), 'item 0'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
    });
  }
});

describe('validateEndpointSlice accepts and normalises', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (s: ReturnType<typeof validateEndpointSlice>) => void }[] = [
    { name: 'exactly 1000 endpoints is within the cap', edits: { endpoints: many(1000, (i) => ({ addresses: [`10.1.${i >> 8}.${i & 255}`] })) }, check: (s) => expect(s.endpoints).toHaveLength(1000) },
    { name: 'exactly 8 zone hints is within the cap', edits: { 'endpoints[0].hints.forZones': many(8, (i) => ({ name: `zone-${i}` })) }, check: (s) => expect(s.endpoints[0]?.hints?.forZones).toHaveLength(8) },
    { name: 'a placeholder slice printed with null endpoints and ports becomes []', edits: { endpoints: null, ports: null }, check: (s) => expect([s.endpoints, s.ports]).toEqual([[], []]) },
    { name: 'port name defaults to "" and protocol to TCP, as the API server defaults them', edits: { ports: [{ port: 53 }] }, check: (s) => expect(s.ports).toEqual([{ name: '', port: 53, protocol: 'TCP' }]) },
    { name: 'a port without a number means all ports', edits: { ports: [{ name: 'all' }] }, check: (s) => expect(s.ports[0]?.port).toBeUndefined() },
    { name: 'absent conditions become {}', edits: { 'endpoints[0].conditions': undefined }, check: (s) => expect(s.endpoints[0]?.conditions).toEqual({}) },
    { name: 'the deprecated IP address type accepts both families', edits: { addressType: 'IP', 'endpoints[1].addresses': ['fd00::2'] }, check: (s) => expect(s.addressType).toBe('IP') },
    { name: 'FQDN slices accept host names', edits: { addressType: 'FQDN', 'endpoints[0].addresses': ['db.example.com'], 'endpoints[1].addresses': ['db2.example.com'] }, check: (s) => expect(s.endpoints[0]?.addresses).toEqual(['db.example.com']) },
    { name: 'deprecatedTopology and other unknown fields are dropped', edits: { 'endpoints[0].deprecatedTopology': { a: 'b' } }, check: (s) => expect(JSON.stringify(s)).not.toMatch(/deprecatedTopology/) },
    { name: 'the endpoint fields the proxy reads are kept', edits: {}, check: (s) => expect(s.endpoints[0]).toEqual(endpoint(1)) },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(patched(base, tc.edits));
      const before = JSON.stringify(raw);
      tc.check(validateEndpointSlice(raw, 'item 0'));
      expect(JSON.stringify(raw)).toBe(before);
    });
  }
});
