import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { InvalidObjectError } from '../errors.ts';
import { validatePod } from './pod.ts';
import type { RejectCase } from './test-support.ts';
import { patched, thrownBy } from './test-support.ts';

const base = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-7d9f8-abcde',
    namespace: 'shop',
    uid: 'b0f0c7a2-1111-4c4c-9d9d-000000000001',
    labels: { app: 'web', 'pod-template-hash': '7d9f8' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d9f8', uid: 'rs-1', controller: true, blockOwnerDeletion: true }],
    managedFields: [{ manager: 'kube-controller-manager' }],
  },
  spec: {
    nodeName: 'node-a1',
    hostname: 'web-0',
    subdomain: 'web',
    containers: [{ name: 'app', image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }, { containerPort: 9090 }] }],
    initContainers: [{ name: 'proxy', restartPolicy: 'Always', ports: [{ name: 'admin', containerPort: 15000 }] }],
    dnsPolicy: 'ClusterFirst',
  },
  status: {
    phase: 'Running',
    podIP: '10.244.1.5',
    podIPs: [{ ip: '10.244.1.5' }, { ip: 'fd00:10:244:1::5' }],
    hostIP: '192.168.0.11',
    conditions: [
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-03-01T10:00:05Z', lastProbeTime: null },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-03-01T10:00:00Z' },
    ],
    containerStatuses: [{ name: 'app', ready: true }],
  },
};

const O = 'Pod shop/web-7d9f8-abcde';

const rejects: RejectCase[] = [
  { name: 'name must be a DNS-1123 subdomain: no underscore', edits: { 'metadata.name': 'web_1' }, object: 'Pod shop/web_1', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'name must not have empty dot-parts', edits: { 'metadata.name': 'web..1' }, object: 'Pod shop/web..1', field: 'metadata.name', reason: /DNS-1123 subdomain/ },
  { name: 'name at most 253 characters', edits: { 'metadata.name': 'p'.repeat(254) }, object: 'item 0 (kind Pod)', field: 'metadata.name', reason: /at most 253/ },
  { name: 'spec is required', edits: { spec: undefined }, field: 'spec', reason: /required/ },
  { name: 'containers are required', edits: { 'spec.containers': undefined }, field: 'spec.containers', reason: /required/ },
  { name: 'at least one container', edits: { 'spec.containers': [] }, field: 'spec.containers', reason: /at least one/ },
  { name: 'container names are DNS-1123 labels', edits: { 'spec.containers[0].name': 'App' }, field: 'spec.containers[0].name', reason: /DNS-1123 label/ },
  { name: 'container port names are IANA service names', edits: { 'spec.containers[0].ports[0].name': 'http-management1' }, field: 'spec.containers[0].ports[0].name', reason: /at most 15/ },
  { name: 'containerPort range', edits: { 'spec.containers[0].ports[1].containerPort': 0 }, field: 'spec.containers[0].ports[1].containerPort', reason: /between 1 and 65535/ },
  { name: 'containerPort required', edits: { 'spec.containers[0].ports[1].containerPort': undefined }, field: 'spec.containers[0].ports[1].containerPort', reason: /required/ },
  { name: 'container port protocol', edits: { 'spec.containers[0].ports[0].protocol': 'HTTP' }, field: 'spec.containers[0].ports[0].protocol', reason: /TCP, UDP, SCTP/ },
  { name: 'init container ports are checked too', edits: { 'spec.initContainers[0].ports[0].containerPort': 65536 }, field: 'spec.initContainers[0].ports[0].containerPort', reason: /between 1 and 65535/ },
  { name: 'nodeName is a DNS-1123 subdomain', edits: { 'spec.nodeName': 'Node_A' }, field: 'spec.nodeName', reason: /DNS-1123 subdomain/ },
  { name: 'hostname is a DNS-1123 label', edits: { 'spec.hostname': 'web.0' }, field: 'spec.hostname', reason: /DNS-1123 label/ },
  { name: 'subdomain is a DNS-1123 label', edits: { 'spec.subdomain': 's'.repeat(64) }, field: 'spec.subdomain', reason: /at most 63/ },
  { name: 'podIP must be an IP', edits: { 'status.podIP': '10.244.1' }, field: 'status.podIP', reason: /valid IP/ },
  { name: 'podIPs entries must be IPs', edits: { 'status.podIPs[1].ip': 'fd00::g' }, field: 'status.podIPs[1].ip', reason: /valid IP/ },
  { name: 'podIPs entries are objects', edits: { 'status.podIPs': ['10.244.1.5'] }, field: 'status.podIPs[0]', reason: /object \(got string\)/ },
  { name: 'podIPs at most two', edits: { 'status.podIPs': [{ ip: '10.244.1.5' }, { ip: 'fd00::5' }, { ip: 'fd00::6' }] }, field: 'status.podIPs', reason: /at most 2/ },
  { name: 'podIPs one per family', edits: { 'status.podIPs[1].ip': '10.244.1.6' }, field: 'status.podIPs', reason: /one address per IP family/ },
  { name: 'podIPs[0] equals podIP', edits: { 'status.podIP': '10.244.1.6' }, field: 'status.podIPs[0].ip', reason: /must equal status.podIP/ },
  { name: 'phase is an enum', edits: { 'status.phase': 'Done' }, field: 'status.phase', reason: /one of Pending/ },
  { name: 'condition status is True, False or Unknown', edits: { 'status.conditions[0].status': 'Yes' }, field: 'status.conditions[0].status', reason: /True, False, Unknown/ },
  { name: 'condition type is required', edits: { 'status.conditions[1].type': undefined }, field: 'status.conditions[1].type', reason: /required/ },
  { name: 'condition lastTransitionTime is RFC 3339', edits: { 'status.conditions[0].lastTransitionTime': '01/03/2026' }, field: 'status.conditions[0].lastTransitionTime', reason: /RFC 3339/ },
  { name: 'deletionTimestamp is RFC 3339', edits: { 'metadata.deletionTimestamp': 1700000000 }, field: 'metadata.deletionTimestamp', reason: /string/ },
  { name: 'a namespace with "*" is rejected', edits: { 'metadata.namespace': 'shop*' }, object: 'Pod shop*/web-7d9f8-abcde', field: 'metadata.namespace', reason: /DNS-1123 label/ },
];

describe('validatePod rejects', () => {
  for (const tc of rejects) {
    it(tc.name, () => {
      const err = thrownBy(() => validatePod(deepFreeze(patched(base, tc.edits)), 'item 0'));
      expect(err).toBeInstanceOf(InvalidObjectError);
      const e = err as InvalidObjectError;
      expect({ object: e.object, field: e.field }).toEqual({ object: tc.object ?? O, field: tc.field });
      expect(e.reason).toMatch(tc.reason);
    });
  }
});

describe('validatePod normalises', () => {
  const cases: { name: string; edits: Record<string, unknown>; check: (p: ReturnType<typeof validatePod>) => void }[] = [
    { name: 'container ports default to TCP', edits: {}, check: (p) => expect(p.spec.containers[0]?.ports?.[1]).toEqual({ containerPort: 9090, protocol: 'TCP' }) },
    { name: 'sidecar restartPolicy is kept (A.5.1)', edits: {}, check: (p) => expect(p.spec.initContainers?.[0]?.restartPolicy).toBe('Always') },
    { name: 'dual-stack podIPs are kept in order', edits: {}, check: (p) => expect(p.status?.podIPs).toEqual([{ ip: '10.244.1.5' }, { ip: 'fd00:10:244:1::5' }]) },
    { name: 'an empty podIP (not yet assigned) is unset (F.13)', edits: { 'status.podIP': '', 'status.podIPs': undefined }, check: (p) => expect('podIP' in (p.status ?? {})).toBe(false) },
    { name: 'an empty nodeName (not yet scheduled) is unset (F.13)', edits: { 'spec.nodeName': '' }, check: (p) => expect('nodeName' in p.spec).toBe(false) },
    { name: 'a pod without status is accepted', edits: { status: undefined }, check: (p) => expect(p.status).toBeUndefined() },
    { name: 'unknown fields are dropped', edits: {}, check: (p) => expect(JSON.stringify(p)).not.toMatch(/image|hostIP|containerStatuses|lastProbeTime|managedFields|dnsPolicy/) },
    { name: 'terminating pods keep their deletionTimestamp', edits: { 'metadata.deletionTimestamp': '2026-03-01T11:00:00.123456Z' }, check: (p) => expect(p.metadata.deletionTimestamp).toBe('2026-03-01T11:00:00.123456Z') },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const raw = deepFreeze(patched(base, tc.edits));
      const before = JSON.stringify(raw);
      tc.check(validatePod(raw, 'item 0'));
      expect(JSON.stringify(raw)).toBe(before);
    });
  }
});
