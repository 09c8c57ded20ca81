import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Service, SlicePlan } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { deepFreeze, makeService, makeSlice } from '@slicemesh/testing';
import { finalizePlan } from './finalize.ts';
import { newSlice } from './slice-metadata.ts';
import { sliceName } from './slice-name.ts';
import { portMapKey } from './port-map-key.ts';
import { endpointsOf, makePods, names } from './test-fixtures.ts';

const svc = deepFreeze(makeService('web', { uid: 'u-web' }));
const ports = [{ name: 'http', port: 8080, protocol: 'TCP' as const }];

function created(addressType: 'IPv4' | 'IPv6', n: number, from = 0): EndpointSlice {
  return newSlice({ service: svc, addressType, ports, endpoints: endpointsOf(makePods(n, { from }), svc), managedBy: MANAGED_BY_CONTROLLER });
}
function doomed(name: string, o: { addressType?: EndpointSlice['addressType']; owner?: string } = {}): EndpointSlice {
  const base = makeSlice(name, [], { serviceUid: o.owner ?? 'u-web', addressType: o.addressType ?? 'IPv4' });
  return { ...base, metadata: { ...base.metadata, resourceVersion: `rv-${name}`, creationTimestamp: '2026-01-01T00:00:00Z' } };
}
function emptyPlan(p: Partial<SlicePlan>): SlicePlan {
  return deepFreeze({ create: [], update: [], delete: [], unchanged: [], ...p });
}

describe('A.7.6 recycling', () => {
  const cases: { name: string; plan: SlicePlan; service?: Service; update: string[]; delete: string[]; creates: number }[] = [
    { name: 'one create + one owned delete -> one update of that slice', plan: emptyPlan({ create: [created('IPv4', 3)], delete: [doomed('old')] }), update: ['old'], delete: [], creates: 0 },
    { name: 'more deletes than creates -> the rest stay deletes', plan: emptyPlan({ create: [created('IPv4', 3)], delete: [doomed('a'), doomed('b')] }), update: ['a'], delete: ['b'], creates: 0 },
    { name: 'more creates than deletes -> the rest stay creates', plan: emptyPlan({ create: [created('IPv4', 3), created('IPv4', 2, 10)], delete: [doomed('a')] }), update: ['a'], delete: [], creates: 1 },
    { name: 'A.7.5 a foreign-owned slice is never recycled', plan: emptyPlan({ create: [created('IPv4', 3)], delete: [doomed('f', { owner: 'u-old' })] }), update: [], delete: ['f'], creates: 1 },
    { name: 'A.2.3 a deprecated IP slice is never recycled', plan: emptyPlan({ create: [created('IPv4', 3)], delete: [doomed('ip', { addressType: 'IP' })] }), update: [], delete: ['ip'], creates: 1 },
    { name: 'a skipped foreign delete does not block the next owned one', plan: emptyPlan({ create: [created('IPv4', 3)], delete: [doomed('f', { owner: 'x' }), doomed('mine')] }), update: ['mine'], delete: ['f'], creates: 0 },
    {
      name: 'recycling is per address type (dual stack: both recycled)',
      plan: emptyPlan({ create: [created('IPv4', 3), created('IPv6', 0)], delete: [doomed('v4'), doomed('v6', { addressType: 'IPv6' })] }),
      update: ['v4', 'v6'],
      delete: [],
      creates: 0,
    },
    { name: 'no creates -> deletes untouched', plan: emptyPlan({ delete: [doomed('a')] }), update: [], delete: ['a'], creates: 0 },
    { name: 'empty plan stays empty', plan: emptyPlan({}), update: [], delete: [], creates: 0 },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const out = finalizePlan(tc.plan, { service: tc.service ?? svc, existingSlices: [] });
      expect(names(out.update)).toEqual(tc.update);
      expect(names(out.delete)).toEqual(tc.delete);
      expect(out.create).toHaveLength(tc.creates);
    });
  }

  it('the last create takes over the first owned delete, keeping its identity and new content', () => {
    const a = created('IPv4', 3);
    const b = created('IPv4', 2, 10);
    const out = finalizePlan(emptyPlan({ create: [a, b], delete: [doomed('old')] }), { service: svc, existingSlices: [] });
    const u = out.update[0] as EndpointSlice;
    expect(u.endpoints).toBe(b.endpoints);
    expect(u.metadata).toMatchObject({ name: 'old', uid: 'uid-slice-old', resourceVersion: 'rv-old', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
    expect(u.metadata).not.toHaveProperty('generateName');
    expect(u.metadata.labels).toEqual(b.metadata.labels);
    expect(out.create[0]?.endpoints).toBe(a.endpoints);
  });
});

describe('A.7.7 write order and deletion', () => {
  it('creates are dropped while the Service has a deletionTimestamp; updates and deletes stay', () => {
    const dying = deepFreeze({ ...svc, metadata: { ...svc.metadata, deletionTimestamp: '2026-02-01T00:00:00Z' } });
    const upd = makeSlice('u', [], { serviceUid: 'u-web' });
    const plan = emptyPlan({ create: [created('IPv4', 3), created('IPv4', 1, 20)], update: [upd], delete: [doomed('d')] });
    const out = finalizePlan(plan, { service: dying, existingSlices: [] });
    expect(out.create).toEqual([]);
    expect(names(out.update)).toEqual(['d', 'u']);
    expect(out.delete).toEqual([]);
  });
});

describe('deterministic names', () => {
  it('a group\'s first new slice is sliceName(service, uid, "<type>/<portMapKey>"), later ones bump past taken names', () => {
    const plan = emptyPlan({ create: [created('IPv4', 2), created('IPv4', 2, 10)] });
    const out = finalizePlan(plan, { service: svc, existingSlices: [] });
    const first = sliceName('web', 'u-web', `IPv4/${portMapKey(ports)}`, new Set());
    expect(out.create[0]?.metadata.name).toBe(first);
    expect(out.create[1]?.metadata.name).not.toBe(first);
    expect(out.create[1]?.metadata.name.startsWith('web-')).toBe(true);
  });
  it('names avoid every existing slice name given in the context', () => {
    const plan = emptyPlan({ create: [created('IPv4', 2)] });
    const first = sliceName('web', 'u-web', `IPv4/${portMapKey(ports)}`, new Set());
    const out = finalizePlan(plan, { service: svc, existingSlices: [makeSlice(first, [])] });
    expect(out.create[0]?.metadata.name).not.toBe(first);
  });
  it('the same plan always gets the same names, all distinct', () => {
    const plan = emptyPlan({ create: [created('IPv4', 1), created('IPv4', 1, 1), created('IPv4', 1, 2), created('IPv6', 0)] });
    const a = finalizePlan(plan, { service: svc, existingSlices: [] });
    const b = finalizePlan(plan, { service: svc, existingSlices: [] });
    expect(names(a.create)).toEqual(names(b.create));
    expect(new Set(names(a.create)).size).toBe(4);
  });
  it('an already named create keeps its name', () => {
    const c = created('IPv4', 1);
    const named = { ...c, metadata: { ...c.metadata, name: 'fixed' } };
    expect(finalizePlan(emptyPlan({ create: [named] }), { service: svc, existingSlices: [] }).create[0]?.metadata.name).toBe('fixed');
  });
});

describe('A.7.8 trigger time in finalize', () => {
  it('when given, stamps every create and update (including recycled ones); when absent leaves them', () => {
    const upd = makeSlice('u', [], { serviceUid: 'u-web' });
    const plan = emptyPlan({ create: [created('IPv4', 1), created('IPv4', 1, 5)], update: [upd], delete: [doomed('d')] });
    const stamped = finalizePlan(plan, { service: svc, existingSlices: [], triggerTime: '2026-05-05T05:05:05Z' });
    for (const s of [...stamped.create, ...stamped.update]) expect(s.metadata.annotations?.[ANNOTATION_TRIGGER_TIME]).toBe('2026-05-05T05:05:05Z');
    const plain = finalizePlan(plan, { service: svc, existingSlices: [] });
    for (const s of [...plain.create, ...plain.update]) expect(s.metadata.annotations).toBeUndefined();
  });
});
