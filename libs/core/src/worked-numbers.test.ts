// The worked numbers of A.7 (upstream reconciler tests), end to end through planService: the one
// composition the slicer, the replay and the CLI run.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Pod, Service } from '@slicemesh/model';
import { deepFreeze, makeService } from '@slicemesh/testing';
import { NODES, makePods, podNames, sizes, sliceOf } from '../../slicing/src/test-fixtures.ts';
import { planServiceObjects } from './plan-service.ts';

/** One sync of `service` (selected `pods`, `existingSlices`) with no trigger time. */
function reconcileService(i: { service: Service; pods: readonly Pod[]; nodes: typeof NODES; existingSlices: readonly EndpointSlice[]; maxEndpointsPerSlice?: number }) {
  return planServiceObjects(i);
}

interface Case {
  readonly name: string;
  readonly service?: Service;
  readonly pods: readonly Pod[];
  readonly existing?: (svc: Service, pods: readonly Pod[]) => EndpointSlice[];
  readonly max?: number;
  readonly create: number[];
  readonly update: number[];
  readonly delete: number;
  readonly unchanged: number[];
}

const svc = makeService('web');
const ports9090 = makeService('web', { ports: [{ name: 'http', port: 80, targetPort: 9090, protocol: 'TCP' }] });
const pods250 = makePods(250);
const pods300 = makePods(300);

const cases: Case[] = [
  { name: 'A.7.4 0 pods -> one empty placeholder create', pods: [], create: [0], update: [], delete: 0, unchanged: [] },
  { name: 'A.7.3 250 pods, no slices -> creates of 100, 100, 50', pods: pods250, create: [100, 100, 50], update: [], delete: 0, unchanged: [] },
  {
    name: 'A.7.3 250 pods over existing 62 + 61 -> 1 create (100) + the 62-slice updated to 89, 61 untouched',
    pods: pods250,
    existing: (s, p) => [sliceOf('a', p.slice(0, 62), s), sliceOf('b', p.slice(62, 123), s)],
    create: [100],
    update: [89],
    delete: 0,
    unchanged: [61],
  },
  {
    name: 'A.7.3 300 pods over existing 74 + 74 -> creates of 100 and 52, no split into unchanged slices',
    pods: pods300,
    existing: (s, p) => [sliceOf('a', p.slice(0, 74), s), sliceOf('b', p.slice(74, 148), s)],
    create: [100, 52],
    update: [],
    delete: 0,
    unchanged: [74, 74],
  },
  {
    name: 'A.7.2 80 + 20 with changes in both and 15 new pods -> both updated, the fuller takes the 15: 95, 20',
    pods: makePods(115, { opts: (i) => (i === 0 || i === 80 ? { ready: false } : {}) }),
    existing: (s) => {
      const before = makePods(100);
      return [sliceOf('a', before.slice(0, 80), s), sliceOf('b', before.slice(80, 100), s)];
    },
    create: [],
    update: [95, 20],
    delete: 0,
    unchanged: [],
  },
  { name: 'A.7.3 250 pods with max 50 -> 5 x 50', pods: pods250, max: 50, create: [50, 50, 50, 50, 50], update: [], delete: 0, unchanged: [] },
  { name: 'A.7.3 250 pods with max 80 -> 80, 80, 80, 10', pods: pods250, max: 80, create: [80, 80, 80, 10], update: [], delete: 0, unchanged: [] },
  { name: 'A.7.3 250 pods with max 150 -> 150, 100', pods: pods250, max: 150, create: [150, 100], update: [], delete: 0, unchanged: [] },
  { name: 'A.7.3 250 pods with max 250 -> 250', pods: pods250, max: 250, create: [250], update: [], delete: 0, unchanged: [] },
  { name: 'A.7.3 250 pods with max 500 -> 250', pods: pods250, max: 500, create: [250], update: [], delete: 0, unchanged: [] },
  {
    name: 'A.2.3 deprecated IP slices of 80 and 50 -> 2 deletes + 2 IPv4 creates of 100 and 30 (never recycled)',
    pods: makePods(130),
    existing: (s, p) => [sliceOf('ip-a', p.slice(0, 80), s, { addressType: 'IP' }), sliceOf('ip-b', p.slice(80), s, { addressType: 'IP' })],
    create: [100, 30],
    update: [],
    delete: 2,
    unchanged: [],
  },
  {
    name: 'A.7.6 service port change on 250 pods -> 3 updates, 0 creates, 0 deletes',
    service: ports9090,
    pods: pods250,
    existing: (_s, p) => [sliceOf('a', p.slice(0, 100), svc), sliceOf('b', p.slice(100, 200), svc), sliceOf('c', p.slice(200), svc)],
    create: [],
    update: [100, 100, 50],
    delete: 0,
    unchanged: [],
  },
  {
    name: 'A.7.6 port change on 10 slices x 30 -> repacked into 3 full slices: 3 updates + 7 deletes',
    service: ports9090,
    pods: pods300,
    existing: (_s, p) => Array.from({ length: 10 }, (_, i) => sliceOf(`s${i}`, p.slice(i * 30, i * 30 + 30), svc)),
    create: [],
    update: [100, 100, 100],
    delete: 7,
    unchanged: [],
  },
];

describe('worked numbers (A.7, max 100 unless noted)', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const service = deepFreeze(tc.service ?? svc);
      const pods = deepFreeze(tc.pods);
      const existingSlices = deepFreeze(tc.existing?.(svc, tc.pods) ?? []);
      const { plan, errors } = reconcileService({ service, pods, nodes: NODES, existingSlices, maxEndpointsPerSlice: tc.max });
      expect(errors).toEqual([]);
      expect(sizes(plan.create)).toEqual(tc.create);
      expect(sizes(plan.update)).toEqual(tc.update);
      expect(plan.delete).toHaveLength(tc.delete);
      expect(sizes(plan.unchanged)).toEqual(tc.unchanged);
      // Every desired pod is published exactly once across the resulting slices.
      const published = [...plan.create, ...plan.update, ...plan.unchanged].flatMap((s) => podNames(s));
      expect(new Set(published).size).toBe(published.length);
      expect(published).toHaveLength(tc.pods.length);
    });
  }

  it('A.7.3 the 27 leftovers go into the 62-slice (named a), which ends closest to full', () => {
    const pods = deepFreeze(pods250);
    const existingSlices = deepFreeze([sliceOf('a', pods.slice(0, 62), svc), sliceOf('b', pods.slice(62, 123), svc)]);
    const { plan } = reconcileService({ service: svc, pods, nodes: NODES, existingSlices });
    expect(plan.update.map((s) => s.metadata.name)).toEqual(['a']);
    expect(plan.unchanged.map((s) => s.metadata.name)).toEqual(['b']);
  });

  it('A.7.6 recycled port-change updates keep the old names and carry the new ports', () => {
    const pods = deepFreeze(pods250);
    const existingSlices = deepFreeze([sliceOf('a', pods.slice(0, 100), svc), sliceOf('b', pods.slice(100, 200), svc), sliceOf('c', pods.slice(200), svc)]);
    const { plan } = reconcileService({ service: deepFreeze(ports9090), pods, nodes: NODES, existingSlices });
    expect(plan.update.map((s) => s.metadata.name).sort()).toEqual(['a', 'b', 'c']);
    for (const s of plan.update) expect(s.ports).toEqual([{ name: 'http', port: 9090, protocol: 'TCP' }]);
  });
});
