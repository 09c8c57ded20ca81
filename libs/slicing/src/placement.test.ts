import { describe, expect, it } from 'vitest';
import type { Endpoint, EndpointSlice } from '@slicemesh/model';
import { deepFreeze, makeSlice } from '@slicemesh/testing';
import { endpointIdentity } from './endpoint-identity.ts';
import { placeEndpoints } from './placement.ts';
import type { Placement } from './placement.ts';
import { ipv4 } from './test-fixtures.ts';

function ep(i: number, ready = true): Endpoint {
  return { addresses: [ipv4(i)], conditions: { ready, serving: ready, terminating: false }, targetRef: { kind: 'Pod', namespace: 'default', name: `p-${i}`, uid: `u${i}` } };
}
function range(from: number, n: number, ready = true): Endpoint[] {
  return Array.from({ length: n }, (_, k) => ep(from + k, ready));
}
function desired(eps: readonly Endpoint[]): Map<string, Endpoint> {
  return new Map(eps.map((e) => [endpointIdentity(e), e]));
}
function slice(name: string, eps: readonly Endpoint[]): EndpointSlice {
  return deepFreeze(makeSlice(name, eps));
}
function shape(p: Placement): { create: number[]; update: [string, number][]; delete: string[]; unchanged: string[] } {
  return {
    create: p.create.map((c) => c.length),
    update: p.update.map((u) => [u.slice.metadata.name, u.endpoints.length]),
    delete: p.delete.map((s) => s.metadata.name),
    unchanged: p.unchanged.map((s) => s.metadata.name),
  };
}

interface Case {
  readonly name: string;
  readonly existing: EndpointSlice[];
  readonly desired: Endpoint[];
  readonly max?: number;
  readonly drifted?: string[];
  readonly want: ReturnType<typeof shape>;
}

const cases: Case[] = [
  { name: 'A.7.1 nothing desired, nothing existing -> nothing', existing: [], desired: [], want: { create: [], update: [], delete: [], unchanged: [] } },
  { name: 'A.7.1 a slice left empty is deleted', existing: [slice('a', range(0, 3))], desired: [], want: { create: [], update: [], delete: ['a'], unchanged: [] } },
  { name: 'A.7.1 a removed endpoint makes the slice an update', existing: [slice('a', range(0, 3))], desired: range(0, 2), want: { create: [], update: [['a', 2]], delete: [], unchanged: [] } },
  { name: 'A.7.1 a changed endpoint (conditions) is updated in place', existing: [slice('a', range(0, 3))], desired: [ep(0, false), ...range(1, 2)], want: { create: [], update: [['a', 3]], delete: [], unchanged: [] } },
  { name: 'A.7.1 all endpoints equal -> unchanged', existing: [slice('a', range(0, 3))], desired: range(0, 3), want: { create: [], update: [], delete: [], unchanged: ['a'] } },
  { name: 'A.7.1 only labels drifted -> update', existing: [slice('a', range(0, 3))], desired: range(0, 3), drifted: ['a'], want: { create: [], update: [['a', 3]], delete: [], unchanged: [] } },
  {
    name: 'A.7.1 a duplicate endpoint across slices is kept once (first slice wins)',
    existing: [slice('a', range(0, 2)), slice('b', [ep(1), ep(2)])],
    desired: range(0, 3),
    want: { create: [], update: [['b', 1]], delete: [], unchanged: ['a'] },
  },
  {
    name: 'A.7.2 leftovers top up slices being updated, fullest first',
    existing: [slice('a', range(0, 40)), slice('b', range(40, 50))],
    desired: [...range(1, 39), ...range(40, 49), ...range(200, 30)],
    max: 60,
    want: { create: [], update: [['a', 58], ['b', 60]], delete: [], unchanged: [] }, // b (49) is topped up to 60 first
  },
  {
    name: 'A.7.2 a label-only update is also topped up',
    existing: [slice('a', range(0, 10)), slice('b', range(10, 40))],
    desired: [...range(0, 50), ...range(100, 5)],
    drifted: ['a'],
    want: { create: [], update: [['a', 15]], delete: [], unchanged: ['b'] },
  },
  {
    name: 'A.7.3 leftovers fit into the unchanged slice that ends closest to full',
    existing: [slice('a', range(0, 30)), slice('b', range(30, 30)), slice('c', range(100, 70))],
    desired: [...range(0, 60), ...range(100, 70), ...range(500, 25)],
    want: { create: [], update: [['c', 95]], delete: [], unchanged: ['a', 'b'] },
  },
  {
    name: 'A.7.3 an exact fit wins',
    existing: [slice('a', range(0, 80)), slice('b', range(100, 90))],
    desired: [...range(0, 80), ...range(100, 90), ...range(500, 10)],
    want: { create: [], update: [['b', 100]], delete: [], unchanged: ['a'] },
  },
  {
    name: 'A.7.3 ties between unchanged slices go to the first by name',
    existing: [slice('a', range(0, 50)), slice('b', range(100, 50))],
    desired: [...range(0, 50), ...range(100, 50), ...range(500, 10)],
    want: { create: [], update: [['a', 60]], delete: [], unchanged: ['b'] },
  },
  {
    name: 'A.7.3 leftovers are never split across unchanged slices: a new slice instead',
    existing: [slice('a', range(0, 60)), slice('b', range(100, 60))],
    desired: [...range(0, 60), ...range(100, 60), ...range(500, 50)],
    want: { create: [50], update: [], delete: [], unchanged: ['a', 'b'] },
  },
  {
    name: 'A.7.3 full multiples of max always go to new slices',
    existing: [slice('a', range(0, 10))],
    desired: [...range(0, 10), ...range(500, 250)],
    want: { create: [100, 100], update: [['a', 60]], delete: [], unchanged: [] },
  },
  { name: 'A.7.3 with max 1 every endpoint gets its own slice', existing: [], desired: range(0, 3), max: 1, want: { create: [1, 1, 1], update: [], delete: [], unchanged: [] } },
];

describe('placeEndpoints', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const drifted = new Set(tc.drifted ?? []);
      const d = desired(deepFreeze(tc.desired));
      const got = placeEndpoints({ existing: tc.existing, desired: d, maxEndpointsPerSlice: tc.max ?? 100, labelsDrifted: (s) => drifted.has(s.metadata.name) });
      expect(shape(got)).toEqual(tc.want);
    });
  }

  it('A.7.1 kept endpoints stay in place, replaced by the desired version; new ones are appended in identity order', () => {
    const existing = [slice('a', [ep(1), ep(2), ep(3)])];
    const want2 = ep(2, false);
    const got = placeEndpoints({ existing, desired: desired([ep(9), want2, ep(3), ep(1), ep(4)]), maxEndpointsPerSlice: 100, labelsDrifted: () => false });
    expect(got.update[0]?.endpoints.map((e) => e.targetRef?.name)).toEqual(['p-1', 'p-2', 'p-3', 'p-4', 'p-9']);
    expect(got.update[0]?.endpoints[1]).toBe(want2);
  });

  it('A.7.1 an unchanged slice keeps its stored endpoints (hints included)', () => {
    const hinted = { ...ep(1), hints: { forZones: [{ name: 'z' }] } };
    const existing = [slice('a', [hinted])];
    const got = placeEndpoints({ existing, desired: desired([ep(1)]), maxEndpointsPerSlice: 100, labelsDrifted: () => true });
    expect(got.update[0]?.endpoints[0]).toEqual(hinted);
  });

  it('A.7.3 new slices are filled in identity order, independent of desired insertion order', () => {
    const a = placeEndpoints({ existing: [], desired: desired(range(0, 5)), maxEndpointsPerSlice: 2, labelsDrifted: () => false });
    const b = placeEndpoints({ existing: [], desired: desired(range(0, 5).reverse()), maxEndpointsPerSlice: 2, labelsDrifted: () => false });
    expect(a.create).toEqual(b.create);
  });
});
