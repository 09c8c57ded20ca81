// A slicer restarted at any point (projection restored from its store's snapshot, then the rest
// of the log) must end where one that never stopped ends: same objects held, same slices.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice } from '@slicemesh/model';
import { makeEndpoints, makeNode, makePod, makeService, makeSubset, prng } from '@slicemesh/testing';
import { comparableSlice } from './replay.ts';
import { Harness } from './testing/harness.ts';
import type { WatchedObject } from './testing/kube-events.ts';

interface Step {
  readonly obj: WatchedObject;
  readonly deleted: boolean;
}

// A random cluster history: nodes in zones, Services with and without selectors, Endpoints,
// pods that come, change readiness or labels, move nodes and go.
function history(seed: number, length: number): Step[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const steps: Step[] = [];
  for (let i = 0; i < 3; i++) steps.push({ obj: makeNode(`n${i}`, { zone: `z${i}` }), deleted: false });
  for (let i = 0; i < length; i++) {
    const r = rnd();
    if (r < 0.1) steps.push({ obj: makeService(pick(['web', 'api']), { selector: { app: pick(['web', 'api', 'db']) } }), deleted: rnd() < 0.15 });
    else if (r < 0.15) steps.push({ obj: makeService('legacy', { selector: null }), deleted: false });
    else if (r < 0.2) steps.push({ obj: makeEndpoints('legacy', { subsets: [makeSubset([{ port: 80 }], [`10.9.0.${1 + Math.floor(rnd() * 5)}`])] }), deleted: false });
    else if (r < 0.25) steps.push({ obj: makeNode(`n${Math.floor(rnd() * 3)}`, { zone: pick(['z0', 'z1', 'z2']) }), deleted: false });
    else {
      const n = Math.floor(rnd() * 30);
      steps.push({
        obj: makePod(`p${n}`, { labels: { app: pick(['web', 'api']) }, ips: [`10.0.${n}.${1 + Math.floor(rnd() * 3)}`], nodeName: `n${Math.floor(rnd() * 3)}`, ready: rnd() < 0.8 }),
        deleted: rnd() < 0.2,
      });
    }
  }
  return steps;
}

async function play(h: Harness, steps: readonly Step[]): Promise<void> {
  for (const s of steps) {
    await h.put(s.obj, s.deleted ? 'Deleted.v1' : 'Upserted.v1');
    if (Math.abs(h.seq * 2654435761) % 3 === 0) await h.reconcileDirty();
  }
  await h.reconcileDirty();
}

const comparable = (slices: readonly EndpointSlice[]): string[] => slices.map(comparableSlice);

describe('projection restored from a snapshot plus the tail equals the projection from the start', () => {
  for (const seed of [11, 12, 13, 14, 15, 16]) {
    it(`same objects and slices after a restart mid-history (seed ${seed})`, async () => {
      const steps = history(seed, 120);
      const cut = 20 + (seed * 7) % 90;
      const straight = new Harness({ max: 4 });
      await play(straight, steps);

      const restarted = new Harness({ max: 4 });
      await play(restarted, steps.slice(0, cut));
      await restarted.restart();
      await restarted.reconcileDirty(); // the startup pass over every known Service
      await play(restarted, steps.slice(cut));

      expect(restarted.state.counts()).toEqual(straight.state.counts());
      expect(restarted.state.reconcilableKeys()).toEqual(straight.state.reconcilableKeys());
      expect(comparable(restarted.slices())).toEqual(comparable(straight.slices()));
      expect(restarted.store.objects.length).toBe(straight.store.objects.length);
    });
  }
});
