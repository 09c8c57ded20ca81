import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Pod, Service } from '@slicemesh/model';
import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER, MANAGED_BY_MIRRORING } from '@slicemesh/model';
import { deepFreeze, makeEndpoints, makeService, makeSlice, makeSubset } from '@slicemesh/testing';
import { NODES, endpointsOf, makePods, names } from '../../slicing/src/test-fixtures.ts';
import type { ServiceView } from './plan-service.ts';
import { planService } from './plan-service.ts';

const svc = makeService('web', { uid: 'u-web' });
const view = (o: Partial<ServiceView> & { service: Service | undefined }): ServiceView =>
  deepFreeze({ namespace: 'default', name: 'web', endpoints: undefined, pods: [] as Pod[], nodes: NODES, slices: [] as EndpointSlice[], takenNames: [] as string[], ...o });
const opts = { managedBy: MANAGED_BY_CONTROLLER, maxEndpointsPerSlice: 100, triggerTime: () => null };

describe('planService', () => {
  it('A.1.2 a Service without a selector gets no slices of the controller', () => {
    const r = planService(view({ service: makeService('web', { selector: null }) }), opts);
    expect(r.mode).toBe('mirroring');
    expect(r.plan).toMatchObject({ create: [], update: [], delete: [] });
  });
  it('A.7.4 + A.7.6 all pods gone: the last slice becomes the placeholder in place (1 update, 0 creates/deletes)', () => {
    const s = makeSlice('web-a', endpointsOf(makePods(3), svc), { serviceUid: 'u-web' });
    const r = planService(view({ service: svc, slices: [s] }), opts);
    expect(r.plan.create).toEqual([]);
    expect(r.plan.delete).toEqual([]);
    expect(r.plan.update.map((u) => [u.metadata.name, u.endpoints.length, u.ports.length])).toEqual([['web-a', 0, 0]]);
  });
  it('A.7.5 a recreated Service (new uid) gets a new slice and the old one is deleted, not recycled', () => {
    const pods = makePods(2);
    const s = makeSlice('web-a', endpointsOf(pods, svc), { serviceUid: 'u-previous' });
    const r = planService(view({ service: svc, pods, slices: [s] }), opts);
    expect(r.plan.create).toHaveLength(1);
    expect(names(r.plan.delete)).toEqual(['web-a']);
    expect(r.plan.update).toEqual([]);
  });
  it('A.1.3 a Service that is gone loses the slices of its manager and its mirrored ones, not others', () => {
    const mine = makeSlice('web-a', [], { managedBy: MANAGED_BY_CONTROLLER });
    const mirrored = makeSlice('web-m', [], { managedBy: MANAGED_BY_MIRRORING });
    const foreign = makeSlice('web-x', [], { managedBy: 'other.example.com' });
    const r = planService(view({ service: undefined, slices: [mine, mirrored, foreign] }), opts);
    expect(r.mode).toBe('absent');
    expect(names(r.plan.delete).sort()).toEqual(['web-a', 'web-m']);
  });
  it('B a selectorless Service with Endpoints is mirrored', () => {
    const r = planService(view({ service: makeService('web', { selector: null }), endpoints: makeEndpoints('web', { subsets: [makeSubset([{ port: 80 }], ['10.1.0.1'])] }) }), opts);
    expect(r.plan.create.map((s) => s.metadata.labels?.[LABEL_MANAGED_BY])).toEqual([MANAGED_BY_MIRRORING]);
  });
  it('new names avoid the names other Services hold in the namespace', () => {
    const a = planService(view({ service: svc, pods: makePods(1) }), opts);
    const name = a.plan.create[0]?.metadata.name ?? '';
    const b = planService(view({ service: svc, pods: makePods(1), takenNames: [name] }), opts);
    expect(b.plan.create[0]?.metadata.name).not.toBe(name);
  });
});
