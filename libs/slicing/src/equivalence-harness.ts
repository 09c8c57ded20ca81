// Test-only harness shared by the fast-path equivalence tests (not exported from the package):
// a seeded generator, a world that evolves sync by sync, and the check that the memoised path
// plans exactly what the memo-free reference path plans.

import { expect } from 'vitest';
import type { EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import { endpointIdentity } from './endpoint-identity.ts';
import { finalizePlan } from './finalize.ts';
import type { ListChanges } from './list-changes.ts';
import { planSlicesWith } from './plan-slices.ts';
import type { PlanSlicesInput } from './plan-slices.ts';

/** Deterministic pseudo-random numbers (LCG) so failures reproduce. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export interface World {
  service: Service;
  pods: Pod[];
  /** Set when `pods` is a list changed in place that reports its changes (the projection's case). */
  podChanges?: ListChanges;
  nodes: Map<string, Node>;
  slices: EndpointSlice[];
  max: number;
}

let uid = 0;
/** Applies a finalized plan the way an API server would: new uids and generations. */
function apply(slices: readonly EndpointSlice[], input: PlanSlicesInput, result: ReturnType<typeof planSlicesWith>): EndpointSlice[] {
  const plan = finalizePlan(result.plan, { service: input.service, existingSlices: slices });
  const gone = new Set([...plan.delete, ...plan.update].map((s) => s.metadata.name));
  const kept = slices.filter((s) => !gone.has(s.metadata.name));
  const written = [...plan.update, ...plan.create].map((s) => deepFreeze({ ...s, metadata: { ...s.metadata, uid: s.metadata.uid ?? `u${++uid}`, generation: (s.metadata.generation ?? 0) + 1 } }));
  return [...kept, ...written];
}

/**
 * One sync of `w`: the memoised ('stamped') plan must equal the reference plan, and endpoint
 * identities must be unique within every written slice; the world then holds the written slices.
 */
export function checkSync(w: World, label: string): void {
  const input: PlanSlicesInput = { service: w.service, pods: w.pods, nodes: w.nodes, existingSlices: w.slices, maxEndpointsPerSlice: w.max, ...(w.podChanges ? { podChanges: w.podChanges } : {}) };
  const ref = planSlicesWith(input, 'reference');
  const fast = planSlicesWith(input, 'stamped');
  expect(fast, label).toEqual(ref);
  for (const s of [...fast.plan.create, ...fast.plan.update]) {
    const ids = s.endpoints.map(endpointIdentity);
    expect(new Set(ids).size, label).toBe(ids.length);
  }
  w.slices = apply(w.slices, input, fast);
}
