import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Pod, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, InvalidArgumentError, LABEL_HEADLESS, LABEL_MANAGED_BY, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makePod, makeService, makeSlice } from '@slicemesh/testing';
import { planSlices } from './plan-slices.ts';
import type { PlanSlicesInput } from './plan-slices.ts';
import { NODES, makePods, podNames, sizes, sliceOf } from './test-fixtures.ts';

const svc = deepFreeze(makeService('web'));

function plan(o: Partial<PlanSlicesInput> & { readonly pods: readonly Pod[] }) {
  return planSlices({ service: svc, nodes: NODES, existingSlices: [], ...deepFreeze(o) });
}

describe('A.1.2 services the controller leaves alone', () => {
  const cases: { name: string; service: Service }[] = [
    { name: 'ExternalName', service: makeService('web', { spec: { type: 'ExternalName', externalName: 'example.com' } }) },
    { name: 'nil selector', service: makeService('web', { selector: null }) },
    { name: 'empty selector', service: makeService('web', { selector: {} }) },
  ];
  for (const tc of cases) {
    it(`${tc.name}: skipped, nothing planned, not even a placeholder or deletes`, () => {
      const existing = [sliceOf('a', makePods(2), svc)];
      const r = plan({ service: tc.service, pods: makePods(3), existingSlices: existing });
      expect(r.skipped).toBe(true);
      expect(r.plan).toEqual({ create: [], update: [], delete: [], unchanged: [] });
    });
  }
});

describe('A.8.1 maxEndpointsPerSlice validation', () => {
  const bad = [0, 1001, -5, 2.5, Number.NaN];
  for (const max of bad) {
    it(`throws InvalidArgumentError for ${max}`, () => {
      expect(() => plan({ pods: [], maxEndpointsPerSlice: max })).toThrow(InvalidArgumentError);
    });
  }
  for (const max of [1, 1000]) {
    it(`accepts ${max}`, () => {
      expect(plan({ pods: makePods(2), maxEndpointsPerSlice: max }).plan.create.length).toBe(max === 1 ? 2 : 1);
    });
  }
});

describe('A.2 address types', () => {
  it('A.2.4 dual-stack service and pods: one slice per address type with that family only', () => {
    const service = makeService('web', { ipFamilies: ['IPv4', 'IPv6'] });
    const pods = [makePod('a', { ips: ['10.0.0.1', 'fd00::1'] }), makePod('b', { ips: ['10.0.0.2', 'fd00::2'] })];
    const r = plan({ service, pods });
    expect(r.plan.create.map((s) => [s.addressType, s.endpoints.flatMap((e) => e.addresses)])).toEqual([
      ['IPv4', ['10.0.0.1', '10.0.0.2']],
      ['IPv6', ['fd00::1', 'fd00::2']],
    ]);
  });
  it('A.2.5 single-stack IPv4 pods give the IPv6 address type only a placeholder', () => {
    const service = makeService('web', { ipFamilies: ['IPv4', 'IPv6'] });
    const r = plan({ service, pods: makePods(3) });
    expect(r.plan.create.map((s) => [s.addressType, s.endpoints.length])).toEqual([
      ['IPv4', 3],
      ['IPv6', 0],
    ]);
  });
  it('A.2.4 IPv6 addresses are canonicalised', () => {
    const service = makeService('web', { ipFamilies: ['IPv6'], clusterIP: 'fd00::10' });
    const r = plan({ service, pods: [makePod('a', { ips: ['1234::5678:0000:0000:9abc:def1'] })] });
    expect(r.plan.create[0]?.endpoints[0]?.addresses).toEqual(['1234::5678:0:0:9abc:def1']);
  });
  it('A.2.2 headless service without ipFamilies plans both address types', () => {
    const service = makeService('web', { ipFamilies: [], clusterIP: 'None' });
    expect(plan({ service, pods: makePods(1) }).plan.create.map((s) => s.addressType)).toEqual(['IPv4', 'IPv6']);
  });
  it('A.2.3 slices of unsupported address types are deleted and reported as dropped', () => {
    const existing = [sliceOf('v6', [], svc, { addressType: 'IPv6' }), sliceOf('ip', makePods(2), svc, { addressType: 'IP' })];
    const r = plan({ pods: makePods(2), existingSlices: existing });
    expect(r.plan.delete.map((s) => s.metadata.name)).toEqual(['ip', 'v6']);
    expect(r.droppedAddressTypes).toEqual(['IP', 'IPv6']);
    expect(r.plan.create.map((s) => s.addressType)).toEqual(['IPv4']);
  });
});

describe('A.3 which pods become endpoints', () => {
  it('A.3.1 terminal pods are removed, terminating pods stay', () => {
    const pods = [
      makePod('ok', { ips: ['10.0.0.1'] }),
      makePod('done', { ips: ['10.0.0.2'], phase: 'Succeeded' }),
      makePod('failed', { ips: ['10.0.0.3'], phase: 'Failed' }),
      makePod('leaving', { ips: ['10.0.0.4'], terminating: true }),
    ];
    expect(podNames(plan({ pods }).plan.create[0])).toEqual(['leaving', 'ok']);
  });
  it('A.3.1 terminal pods are removed even with publishNotReadyAddresses', () => {
    const service = makeService('web', { publishNotReadyAddresses: true });
    const pods = [makePod('done', { phase: 'Failed' })];
    expect(plan({ service, pods }).plan.create[0]?.endpoints).toEqual([]);
  });
  it('A.3.2 pods without IPs are excluded', () => {
    expect(plan({ pods: [makePod('noip', { ips: [] })] }).plan.create[0]?.endpoints).toEqual([]);
  });
  it('A.3.4 unknown node without publishNotReadyAddresses: pod skipped, error reported, the rest still planned', () => {
    const pods = [makePod('a', { ips: ['10.0.0.1'] }), makePod('lost', { ips: ['10.0.0.2'], nodeName: 'gone' })];
    const r = plan({ pods });
    expect(podNames(r.plan.create[0])).toEqual(['a']);
    expect(r.errors).toEqual(['skipping Pod lost for Service default/web: Node gone Not Found']);
  });
  it('A.3.4 unknown node with publishNotReadyAddresses: included without zone, no error', () => {
    const service = makeService('web', { publishNotReadyAddresses: true });
    const r = plan({ service, pods: [makePod('lost', { nodeName: 'gone' })] });
    expect(r.errors).toEqual([]);
    expect(r.plan.create[0]?.endpoints[0]).toMatchObject({ nodeName: 'gone', conditions: { ready: true } });
    expect(r.plan.create[0]?.endpoints[0]).not.toHaveProperty('zone');
  });
  it('A.3.4 a known node contributes its zone', () => {
    const r = plan({ pods: [makePod('a', { nodeName: 'node-2' })] });
    expect(r.plan.create[0]?.endpoints[0]?.zone).toBe('zone-b');
  });
  it('A.3.5 two pods sharing one IP are both kept (ready and unready)', () => {
    const pods = [makePod('a', { ips: ['10.0.0.1'] }), makePod('b', { ips: ['10.0.0.1'], ready: false })];
    const eps = plan({ pods }).plan.create[0]?.endpoints ?? [];
    expect(eps.map((e) => [e.targetRef?.name, e.addresses[0], e.conditions.ready])).toEqual([
      ['a', '10.0.0.1', true],
      ['b', '10.0.0.1', false],
    ]);
  });
  it('A.4.7 hostname only with matching subdomain', () => {
    const pods = [makePod('a', { ips: ['10.0.0.1'], hostname: 'ha', subdomain: 'web' }), makePod('b', { ips: ['10.0.0.2'], hostname: 'hb' })];
    const eps = plan({ pods }).plan.create[0]?.endpoints ?? [];
    expect(eps.map((e) => e.hostname)).toEqual(['ha', undefined]);
  });
});

describe('A.5 ports and port-mapping groups', () => {
  it('A.5.4 300 pods with 5 distinct container ports -> 5 slices of 60, one port each', () => {
    const pods = makePods(300, { opts: (i) => ({ containerPorts: [{ name: 'http', containerPort: 8000 + (i % 5), protocol: 'TCP' }] }) });
    const service = makeService('web', { ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] });
    const r = plan({ service, pods });
    expect(sizes(r.plan.create)).toEqual([60, 60, 60, 60, 60]);
    expect(r.plan.create.map((s) => s.ports[0]?.port).sort()).toEqual([8000, 8001, 8002, 8003, 8004]);
  });
  it('A.5.1 a sidecar port resolves the named target port', () => {
    const sidecar = { name: 'proxy', restartPolicy: 'Always', ports: [{ name: 'mesh', containerPort: 15001, protocol: 'TCP' as const }] };
    const service = makeService('web', { ports: [{ name: 'mesh', port: 80, targetPort: 'mesh', protocol: 'TCP' }] });
    const r = plan({ service, pods: [makePod('a', { initContainers: [sidecar] })] });
    expect(r.plan.create[0]?.ports).toEqual([{ name: 'mesh', port: 15001, protocol: 'TCP' }]);
  });
  it('A.5.1 a pod whose named port does not resolve lands in a group without that port', () => {
    const service = makeService('web', { ports: [{ name: 'm', port: 9, targetPort: 'metrics' }] });
    const r = plan({ service, pods: [makePod('a')] });
    expect(r.plan.create).toHaveLength(1);
    expect(r.plan.create[0]?.ports).toEqual([]);
    expect(r.plan.create[0]?.endpoints).toHaveLength(1);
  });
  it('A.5.3 headless service without ports: endpoints with an empty port list', () => {
    const service = makeService('web', { clusterIP: 'None', ports: [] });
    const r = plan({ service, pods: makePods(2) });
    expect(r.plan.create.map((s) => [s.ports, s.endpoints.length])).toEqual([[[], 2]]);
  });
  it('A.5.4 multiple service ports are sorted into a stable order', () => {
    const a = makeService('web', { ports: [{ name: 'b', port: 2 }, { name: 'a', port: 1 }] });
    const b = makeService('web', { ports: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] });
    expect(plan({ service: a, pods: makePods(1) }).plan.create[0]?.ports).toEqual(plan({ service: b, pods: makePods(1) }).plan.create[0]?.ports);
  });
  it('A.5.5 slices of a group no longer desired are deleted (before recycling)', () => {
    const old = sliceOf('old', makePods(2), svc, { ports: [{ name: 'http', port: 7000, protocol: 'TCP' }] });
    const r = plan({ pods: makePods(2), existingSlices: [old] });
    expect(r.plan.delete.map((s) => s.metadata.name)).toEqual(['old']);
    expect(sizes(r.plan.create)).toEqual([2]);
  });
  it('A.5.4 an existing slice with nil ports matches a headless no-port group', () => {
    const service = makeService('web', { clusterIP: 'None', ports: [] });
    const existing = { ...sliceOf('a', makePods(2), service, { labels: { [LABEL_HEADLESS]: '' } }), ports: null as unknown as [] };
    const r = plan({ service, pods: makePods(2), existingSlices: [existing] });
    expect(r.plan.unchanged.map((s) => s.metadata.name)).toEqual(['a']);
  });
});

describe('A.6 in-place changes', () => {
  it('A.6.1 a condition change updates the slice in place (no create/delete)', () => {
    const before = makePods(3);
    const after = makePods(3, { opts: (i) => (i === 1 ? { ready: false } : {}) });
    const r = plan({ pods: after, existingSlices: [sliceOf('a', before, svc)] });
    expect(r.plan.create).toEqual([]);
    expect(r.plan.update.map((s) => s.metadata.name)).toEqual(['a']);
    expect(r.plan.update[0]?.endpoints[1]?.conditions.ready).toBe(false);
  });
  it('A.6.1 an IP change is a new identity: old endpoint removed, new one added', () => {
    const before = [makePod('a', { ips: ['10.0.0.1'] })];
    const after = [makePod('a', { ips: ['10.0.0.9'] })];
    const r = plan({ pods: after, existingSlices: [sliceOf('s', before, svc)] });
    expect(r.plan.delete.map((s) => s.metadata.name)).toEqual(['s']);
    expect(r.plan.create[0]?.endpoints[0]?.addresses).toEqual(['10.0.0.9']);
  });
  it('A.6.2 nothing relevant changed: unchanged, nothing written', () => {
    const pods = makePods(3);
    const r = plan({ pods, existingSlices: [sliceOf('a', pods, svc)] });
    expect(r.plan).toEqual({ create: [], update: [], delete: [], unchanged: [expect.objectContaining({ metadata: expect.objectContaining({ name: 'a' }) })] });
  });
});

describe('A.7.4 placeholder', () => {
  it('an identical existing placeholder is left alone (no write)', () => {
    const ph = makeSlice('web-ph', [], { ports: [] });
    const r = plan({ pods: [], existingSlices: [ph] });
    expect(r.plan).toEqual({ create: [], update: [], delete: [], unchanged: [ph] });
  });
  it('a placeholder with outdated labels is replaced (create + delete before recycling)', () => {
    const service = makeService('web', { labels: { team: 'x' } });
    const ph = makeSlice('web-ph', [], { ports: [] });
    const r = plan({ service, pods: [], existingSlices: [ph] });
    expect(r.plan.delete).toEqual([ph]);
    expect(r.plan.create.map((s) => [s.endpoints.length, s.metadata.labels?.team])).toEqual([[0, 'x']]);
  });
  it('the last endpoints going away turn into a placeholder', () => {
    const existing = [sliceOf('a', makePods(2), svc), sliceOf('b', makePods(1, { from: 5 }), svc)];
    const r = plan({ pods: [], existingSlices: existing });
    expect(r.plan.delete.map((s) => s.metadata.name)).toEqual(['a', 'b']);
    expect(sizes(r.plan.create)).toEqual([0]);
  });
  it('no placeholder while some endpoint exists', () => {
    const r = plan({ pods: makePods(1) });
    expect(sizes(r.plan.create)).toEqual([1]);
  });
  it('pods that are all skipped (unknown node) still leave a placeholder', () => {
    const r = plan({ pods: [makePod('lost', { nodeName: 'gone' })] });
    expect(sizes(r.plan.create)).toEqual([0]);
    expect(r.errors).toHaveLength(1);
  });
});

describe('A.7.5 slices owned by another Service object', () => {
  it('are deleted and replaced, even if their endpoints are current', () => {
    const pods = makePods(2);
    const foreign = sliceOf('old', pods, svc, { serviceUid: 'uid-of-deleted-service' });
    const r = plan({ pods, existingSlices: [foreign] });
    expect(r.plan.delete).toEqual([foreign]);
    expect(sizes(r.plan.create)).toEqual([2]);
  });
});

describe('A.7.8 trigger time', () => {
  it('creates and updates carry the annotation; unchanged slices are not touched', () => {
    const pods = makePods(3);
    const existing = [sliceOf('a', pods.slice(0, 1), svc), sliceOf('b', pods.slice(1, 2), svc)];
    const after = [pods[0] as Pod, makePod('web-1', { ips: ['10.0.0.1'], ready: false }), ...makePods(10, { from: 10 })];
    const r = plan({ pods: after, existingSlices: existing, triggerTime: '2026-03-01T10:00:00.5Z' });
    expect(r.plan.update.map((s) => s.metadata.annotations?.[ANNOTATION_TRIGGER_TIME])).toEqual(['2026-03-01T10:00:00.5Z']);
    const created = plan({ pods: makePods(1), triggerTime: '2026-03-01T10:00:00.5Z' }).plan.create;
    expect(created.map((s) => s.metadata.annotations)).toEqual([{ [ANNOTATION_TRIGGER_TIME]: '2026-03-01T10:00:00.5Z' }]);
    expect(r.plan.unchanged.map((s) => s.metadata.annotations)).toEqual([undefined]);
  });
  it('without a trigger time the annotation is removed from written slices', () => {
    const pods = makePods(2);
    const s = sliceOf('a', pods, svc);
    const annotated = { ...s, metadata: { ...s.metadata, annotations: { [ANNOTATION_TRIGGER_TIME]: 'old', other: 'kept' } } };
    const r = plan({ pods: pods.slice(0, 1), existingSlices: [annotated], triggerTime: null });
    expect(r.plan.update[0]?.metadata.annotations).toEqual({ other: 'kept' });
  });
});

describe('A.9 metadata of written slices', () => {
  it('A.9.1-A.9.3 creates: generateName, ownerReference, labels, apiVersion and kind', () => {
    const service = makeService('web', { labels: { team: 'a' }, uid: 'u-1' });
    const s = plan({ service, pods: makePods(1) }).plan.create[0] as EndpointSlice;
    expect(s.apiVersion).toBe('discovery.k8s.io/v1');
    expect(s.kind).toBe('EndpointSlice');
    expect(s.metadata).toMatchObject({ name: '', generateName: 'web-', namespace: 'default' });
    expect(s.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'u-1', controller: true, blockOwnerDeletion: true }]);
    expect(s.metadata.labels).toEqual({ team: 'a', 'kubernetes.io/service-name': 'web', [LABEL_MANAGED_BY]: 'endpointslice-controller.k8s.io' });
  });
  it('A.9.3 a changed ordinary Service label updates every slice', () => {
    const service = makeService('web', { labels: { team: 'b' } });
    const pods = makePods(150);
    const existing = [sliceOf('a', pods.slice(0, 100), svc, { labels: { team: 'a' } }), sliceOf('b', pods.slice(100), svc, { labels: { team: 'a' } })];
    const r = plan({ service, pods, existingSlices: existing });
    expect(r.plan.update.map((s) => [s.metadata.name, s.metadata.labels?.team])).toEqual([
      ['a', 'b'],
      ['b', 'b'],
    ]);
  });
  it('A.9.4 converting to headless alone writes nothing', () => {
    const service = makeService('web', { clusterIP: 'None' });
    const pods = makePods(2);
    const r = plan({ service, pods, existingSlices: [sliceOf('a', pods, svc)] });
    expect(r.plan.update).toEqual([]);
    expect(r.plan.unchanged).toHaveLength(1);
  });
  it('A.9.4 the headless label is corrected when the slice is written for another reason', () => {
    const service = makeService('web', { clusterIP: 'None' });
    const pods = makePods(2);
    const r = plan({ service, pods: pods.slice(0, 1), existingSlices: [sliceOf('a', pods, svc)] });
    expect(r.plan.update[0]?.metadata.labels?.[LABEL_HEADLESS]).toBe('');
  });
  it('managedBy option: only slices with that manager are considered and written', () => {
    const pods = makePods(2);
    const mine = sliceOf('mine', pods, svc, { managedBy: 'custom' });
    const other = sliceOf('other', pods, svc);
    const r = plan({ pods, existingSlices: [mine, other], managedBy: 'custom' });
    expect(r.plan.unchanged.map((s) => s.metadata.name)).toEqual(['mine']);
    expect(r.plan.delete).toEqual([]);
  });
});

describe('A.1.1 inputs outside the Service are ignored', () => {
  const pods = makePods(2);
  const cases: { name: string; slice: EndpointSlice }[] = [
    { name: 'another manager (mirroring)', slice: sliceOf('m', pods, svc, { managedBy: MANAGED_BY_MIRRORING }) },
    { name: 'another service name', slice: sliceOf('x', pods, svc, { service: 'other' }) },
    { name: 'another namespace', slice: sliceOf('n', pods, svc, { namespace: 'elsewhere' }) },
    { name: 'already being deleted', slice: { ...sliceOf('d', pods, svc), metadata: { ...sliceOf('d', pods, svc).metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } } },
  ];
  for (const tc of cases) {
    it(`a slice of ${tc.name} is neither used nor deleted`, () => {
      const r = plan({ pods, existingSlices: [tc.slice] });
      expect(r.plan.delete).toEqual([]);
      expect(r.plan.unchanged).toEqual([]);
      expect(sizes(r.plan.create)).toEqual([2]);
    });
  }
});

describe('determinism', () => {
  it('the plan does not depend on the order of pods or existing slices', () => {
    const pods = makePods(230);
    const existing = [sliceOf('a', pods.slice(0, 40), svc), sliceOf('b', pods.slice(40, 70), svc), sliceOf('c', pods.slice(70, 75), svc)];
    const shuffled = [...pods].reverse().sort((x, y) => (x.metadata.name.length % 3) - (y.metadata.name.length % 3));
    const a = plan({ pods, existingSlices: existing });
    const b = plan({ pods: shuffled, existingSlices: [...existing].reverse() });
    expect(b).toEqual(a);
  });
  it('planning twice gives equal results (memoisation never changes output)', () => {
    const pods = deepFreeze(makePods(120));
    const first = plan({ pods });
    const second = plan({ pods });
    expect(second).toEqual(first);
    const changed = plan({ service: makeService('web', { publishNotReadyAddresses: true }), pods: makePods(120, { opts: () => ({ ready: false }) }) });
    expect(changed.plan.create[0]?.endpoints[0]?.conditions.ready).toBe(true);
  });
});
