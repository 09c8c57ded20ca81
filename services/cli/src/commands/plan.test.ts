import type { Endpoints, EndpointSlice, KubeObject } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../cli-error.ts';
import type { PlanOptions, PlanResult } from './plan.ts';
import { planCluster, planCommand, planOptions } from './plan.ts';

const OPTS: PlanOptions = { maxEndpointsPerSlice: 100, managedBy: MANAGED_BY_CONTROLLER, output: 'slices' };
const nodes = [makeNode('node-a', { zone: 'zone-a' }), makeNode('node-b', { zone: 'zone-b' }), makeNode('node-c', { zone: 'zone-c' })];
const webPods = (n: number): KubeObject[] =>
  Array.from({ length: n }, (_, i) => makePod(`web-${i}`, { labels: { app: 'web' }, ips: [`10.0.0.${i + 1}`], nodeName: `node-${'abc'[i % 3]}` }));
const endpoints = (name: string, ips: string[], ns = 'default'): Endpoints => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: ns, uid: `uid-ep-${name}` },
  subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: [{ name: 'db', port: 5432, protocol: 'TCP' }] }],
});
const mirrored = (name: string): EndpointSlice =>
  makeSlice(`${name}-m1`, [{ addresses: ['192.168.9.9'], conditions: { ready: true } }], { service: name, managedBy: MANAGED_BY_MIRRORING });
const names = (slices: readonly EndpointSlice[]): string[] => slices.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
const managers = (slices: readonly EndpointSlice[]): (string | undefined)[] => slices.map((s) => s.metadata.labels?.[LABEL_MANAGED_BY]);

describe('planCluster', () => {
  const cases: { name: string; objects: KubeObject[]; opts?: Partial<PlanOptions>; check: (r: PlanResult, warnings: string[]) => void }[] = [
    {
      name: 'A.1.1 a slice with another managed-by value is not one of the Service\'s slices',
      objects: [makeService('web'), ...webPods(2), ...nodes, makeSlice('web-foreign', [], { managedBy: 'someone-else' })],
      check: (r) => {
        expect(r.create).toHaveLength(1);
        expect([r.update, r.delete, r.unchanged]).toEqual([[], [], []]);
      },
    },
    {
      name: 'A.1.1 a slice with a deletionTimestamp is not one of the Service\'s slices',
      objects: [makeService('web'), ...webPods(1), ...nodes, { ...makeSlice('web-going', []), metadata: { ...makeSlice('web-going', []).metadata, deletionTimestamp: '2026-01-02T00:00:00Z' } }],
      check: (r) => expect([r.create.length, r.delete.length, r.update.length]).toEqual([1, 0, 0]),
    },
    {
      name: '--managed-by labels and selects the slices of that manager',
      objects: [makeService('web'), ...webPods(1), ...nodes, makeSlice('web-default', [])],
      opts: { managedBy: 'mesh.example.com' },
      check: (r) => {
        expect(managers(r.create)).toEqual(['mesh.example.com']);
        expect(r.delete).toEqual([]);
      },
    },
    {
      name: 'A.10.1 first sight: written slices carry the Service creationTimestamp as trigger time',
      objects: [makeService('web', { creationTimestamp: '2026-02-03T04:05:06Z' }), ...webPods(1), ...nodes],
      check: (r) => expect(r.create[0]?.metadata.annotations?.[ANNOTATION_TRIGGER_TIME]).toBe('2026-02-03T04:05:06Z'),
    },
    {
      name: 'A.7.4 a selector Service without pods gets one placeholder slice',
      objects: [makeService('web'), ...nodes],
      check: (r) => expect(r.create.map((s) => [s.endpoints.length, s.ports.length])).toEqual([[0, 0]]),
    },
    {
      name: 'A.8.1 --max-endpoints-per-slice caps each slice',
      objects: [makeService('web'), ...webPods(5), ...nodes],
      opts: { maxEndpointsPerSlice: 2 },
      check: (r) => expect(r.create.map((s) => s.endpoints.length).sort()).toEqual([1, 2, 2]),
    },
    {
      name: 'A.1.2 an ExternalName Service gets nothing',
      objects: [makeService('ext', { selector: { app: 'web' }, spec: { type: 'ExternalName', externalName: 'example.com' } }), ...webPods(1), ...nodes],
      check: (r) => expect([r.create, r.update, r.delete, r.unchanged]).toEqual([[], [], [], []]),
    },
    {
      name: 'A.1.2 a selectorless Service without Endpoints gets nothing',
      objects: [makeService('db', { selector: null }), ...nodes],
      check: (r) => expect([r.create, r.update, r.delete, r.unchanged]).toEqual([[], [], [], []]),
    },
    {
      name: 'B.1 a selectorless Service with Endpoints is mirrored',
      objects: [makeService('db', { selector: null }), endpoints('db', ['192.168.1.1', '192.168.1.2'])],
      check: (r) => {
        expect(managers(r.create)).toEqual([MANAGED_BY_MIRRORING]);
        expect(r.create[0]?.endpoints.map((e) => e.addresses[0])).toEqual(['192.168.1.1', '192.168.1.2']);
      },
    },
    {
      name: 'B.1.4 Endpoints of a Service with a selector are not mirrored and stale mirrored slices go',
      objects: [makeService('web'), ...webPods(1), ...nodes, endpoints('web', ['10.0.0.1']), mirrored('web')],
      check: (r) => {
        expect(names(r.delete)).toEqual(['default/web-m1']);
        expect(managers(r.create)).toEqual([MANAGED_BY_CONTROLLER]);
      },
    },
    {
      name: 'B.1.3 mirrored slices whose Service is gone are deleted',
      objects: [mirrored('gone'), endpoints('gone', ['192.168.1.1'])],
      check: (r) => expect([names(r.delete), r.create]).toEqual([['default/gone-m1'], []]),
    },
    {
      name: 'B.2.5 a non-IP Endpoints address is skipped with one warning line',
      objects: [makeService('db', { selector: null }), endpoints('db', ['192.168.1.1', 'db.example.com'])],
      check: (r, warnings) => {
        expect(r.create[0]?.endpoints).toHaveLength(1);
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatch(/^Endpoints default\/db: InvalidIPAddress: /);
      },
    },
    {
      name: 'A.3.4 a pod on an unknown node is a warning and the rest is still planned',
      objects: [makeService('web'), makePod('web-x', { nodeName: 'node-x', ips: ['10.0.0.9'] }), ...webPods(1), ...nodes],
      check: (r, warnings) => {
        expect(r.create[0]?.endpoints.map((e) => e.addresses[0])).toEqual(['10.0.0.1']);
        expect(warnings).toEqual([expect.stringMatching(/^Service default\/web: .*web-x.*node-x/)]);
      },
    },
    {
      name: 'C.3 topology-mode Auto over three equal zones hints every endpoint to its own zone',
      objects: [makeService('web', { annotations: { 'service.kubernetes.io/topology-mode': 'Auto' } }), ...webPods(6), ...nodes],
      check: (r) => expect(r.create[0]?.endpoints.map((e) => `${e.zone}:${e.hints?.forZones?.[0]?.name}`)).toEqual(['zone-a:zone-a', 'zone-b:zone-b', 'zone-c:zone-c', 'zone-a:zone-a', 'zone-b:zone-b', 'zone-c:zone-c']),
    },
    {
      name: 'C.3.1 a refused allocation is one warning line with the upstream reason',
      objects: [makeService('web', { annotations: { 'service.kubernetes.io/topology-mode': 'Auto' } }), ...webPods(2), ...nodes],
      check: (r, warnings) => {
        expect(r.create[0]?.endpoints.some((e) => e.hints !== undefined)).toBe(false);
        expect(warnings).toEqual(['Service default/web: TopologyAwareHintsDisabled: Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4']);
      },
    },
    {
      name: 'every list is sorted by namespace and name across services',
      objects: [makeService('zeta', { namespace: 'b' }), makeService('alpha', { namespace: 'b' }), makeService('web', { namespace: 'a' }), ...nodes],
      check: (r) => expect(names(r.create).map((n) => n.split('-')[0])).toEqual(['a/web', 'b/alpha', 'b/zeta']),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const warnings: string[] = [];
      const objects = deepFreeze(tc.objects);
      tc.check(planCluster(objects, { ...OPTS, ...tc.opts }, (w) => warnings.push(w)), warnings);
    });
  }
});

describe('planCommand output', () => {
  const existing = makeSlice('web-old', [], { labels: {} });
  const objects = deepFreeze([makeService('web'), ...webPods(2), ...nodes, existing, makeSlice('other-x', [], { service: 'other', managedBy: 'someone' })]);

  it('slices: the whole cluster after the plan, foreign slices unchanged and in place', () => {
    const out = planCommand(objects, OPTS, () => undefined) as { kind: string; items: EndpointSlice[] };
    expect(out.kind).toBe('List');
    expect(names(out.items)).toEqual(['default/other-x', 'default/web-old']);
    expect(out.items[1]?.endpoints).toHaveLength(2);
    expect(out.items[0]).toEqual(objects[objects.length - 1]);
  });

  const cases: { name: string; objects: KubeObject[]; want: string[] }[] = [
    {
      name: 'slices: a slice being deleted by another manager stays in the output as it is',
      objects: [makeService('web'), ...webPods(1), ...nodes, { ...makeSlice('x-1', [], { service: 'x', managedBy: 'someone' }), metadata: { ...makeSlice('x-1', [], { service: 'x', managedBy: 'someone' }).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }],
      want: ['default/x-1'],
    },
    { name: 'slices: a slice the plan deletes is gone', objects: [makeService('legacy', { selector: null }), mirrored('legacy')], want: [] },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = planCommand(deepFreeze(tc.objects), OPTS, () => undefined) as { items: EndpointSlice[] };
      expect(names(out.items).filter((n) => tc.want.includes(n) || n.startsWith('default/x') || n.startsWith('default/legacy'))).toEqual(tc.want);
    });
  }

  it('changed: only the slices the plan creates or updates', () => {
    const out = planCommand(objects, { ...OPTS, output: 'changed' }, () => undefined) as { kind: string; items: EndpointSlice[] };
    expect(names(out.items)).toEqual(['default/web-old']);
  });

  it('changes: create, update and delete only', () => {
    const out = planCommand(objects, { ...OPTS, output: 'changes' }, () => undefined) as Record<string, EndpointSlice[]>;
    expect(Object.keys(out)).toEqual(['create', 'update', 'delete']);
    // The empty placeholder is recycled into the update that fills it (A.7.6).
    expect(names(out['update'] ?? [])).toEqual(['default/web-old']);
  });
});

describe('planOptions', () => {
  const ok: { name: string; flags: Record<string, string>; want: PlanOptions }[] = [
    { name: 'defaults: 100 per slice, the upstream manager, slices output', flags: {}, want: OPTS },
    { name: 'A.8.1 accepts the bounds 1 and 1000', flags: { 'max-endpoints-per-slice': '1000', output: 'changes', 'managed-by': 'x.io' }, want: { maxEndpointsPerSlice: 1000, managedBy: 'x.io', output: 'changes' } },
  ];
  for (const tc of ok) it(tc.name, () => expect(planOptions(tc.flags)).toEqual(tc.want));

  const bad: { name: string; flags: Record<string, string>; message: RegExp }[] = [
    { name: 'A.8.1 rejects 0', flags: { 'max-endpoints-per-slice': '0' }, message: /between 1 and 1000/ },
    { name: 'A.8.1 rejects 1001', flags: { 'max-endpoints-per-slice': '1001' }, message: /between 1 and 1000/ },
    { name: 'rejects a fraction', flags: { 'max-endpoints-per-slice': '1.5' }, message: /integer/ },
    { name: 'rejects hex', flags: { 'max-endpoints-per-slice': '0x10' }, message: /integer/ },
    { name: 'rejects an empty manager', flags: { 'managed-by': '' }, message: /--managed-by must not be empty/ },
    { name: 'rejects a manager that is not a label value', flags: { 'managed-by': 'a/b' }, message: /label value/ },
    { name: 'rejects an unknown output', flags: { output: 'yaml' }, message: /slices, changed or changes/ },
  ];
  for (const tc of bad) {
    it(tc.name, () => {
      expect(() => planOptions(tc.flags)).toThrow(UsageError);
      expect(() => planOptions(tc.flags)).toThrow(tc.message);
    });
  }
});
