// Slicing section: creating 20k/100k-endpoint services, one pod change, a rolling update —
// time and slice writes, compared with KEP-752's write counts.

import type { EndpointSlice, Node, Pod, SlicePlan } from '@slicemesh/model';
import { performance } from 'node:perf_hooks';
import { planServiceObjects } from '@slicemesh/core';
import { makeBenchPod, makeBenchService, makeNodes } from './cluster-gen.ts';
import { fmtMs, median, medianOf, printTable, sampleMemory, time } from './harness.ts';

const NODES = 300;

function writes(plan: SlicePlan): number {
  return plan.create.length + plan.update.length + plan.delete.length;
}

/** The slices after applying a finalized plan to `current` (what the store would hold). */
function apply(current: readonly EndpointSlice[], plan: SlicePlan): EndpointSlice[] {
  const byName = new Map(current.map((s) => [s.metadata.name, s]));
  for (const s of plan.delete) byName.delete(s.metadata.name);
  for (const s of [...plan.update, ...plan.create]) {
    byName.set(s.metadata.name, { ...s, metadata: { ...s.metadata, generation: (s.metadata.generation ?? 0) + 1 } });
  }
  return [...byName.values()];
}

// One Service object for every reconcile, as an informer cache hands out the same object while
// it is unchanged (the reconciler remembers work per object identity).
const service = makeBenchService('big');

function reconcile(pods: readonly Pod[], nodes: ReadonlyMap<string, Node>, existing: readonly EndpointSlice[]): SlicePlan {
  const r = planServiceObjects({ service, pods, nodes, existingSlices: existing, triggerTime: null });
  return r.plan;
}

export function runSlicingBench(opts: { quick: boolean }): void {
  const nodeList = makeNodes(NODES);
  const nodes = new Map(nodeList.map((n) => [n.metadata.name, n]));
  const rows: [string, string, string?][] = [];
  const results: Record<string, number> = {};

  for (const size of [20_000, 100_000]) {
    // A full reconcile from scratch: fresh pod objects every run, so nothing remembered from an
    // earlier run helps (the reconciler memoises per object identity).
    const fresh = (): Pod[] => Array.from({ length: size }, (_, i) => makeBenchPod('big', i, NODES));
    const create = medianOf(3, fresh, (p) => reconcile(p, nodes, []));
    const pods = fresh();
    rows.push([`create ${size / 1000}k endpoints`, fmtMs(create.ms), `${writes(create.value)} writes (KEP-752: ${size / 100})`]);
    results[`create${size}`] = create.ms;
    const slices = apply([], reconcile(pods, nodes, []));
    sampleMemory();

    // One pod turns unready: expect exactly one slice update.
    const changed = pods.slice();
    changed[size >> 1] = makeBenchPod('big', size >> 1, NODES, 0, false);
    const one = median(5, () => reconcile(changed, nodes, slices));
    rows.push([`one pod change in ${size / 1000}k`, fmtMs(one.ms), `${writes(one.value)} write(s) (KEP-752: 1)`]);
    results[`change${size}`] = one.ms;

    // Full reconcile of an unchanged service (the steady-state cost of a resync).
    const steady = median(3, () => reconcile(pods, nodes, slices));
    rows.push([`no-op reconcile of ${size / 1000}k`, fmtMs(steady.ms), `${writes(steady.value)} writes`]);
    sampleMemory();
  }

  // Rolling update of the 20k service: every pod replaced by a new one (new name and IP), one
  // replacement per reconcile, as a Deployment rollout with maxSurge 1 would look when every
  // change is reconciled on its own.
  const size = opts.quick ? 2_000 : 20_000;
  let pods = Array.from({ length: size }, (_, i) => makeBenchPod('big', i, NODES));
  let slices = apply([], reconcile(pods, nodes, []));
  let total = 0;
  let slowest = 0;
  const started = performance.now();
  const t = time(() => {
    for (let i = 0; i < size; i++) {
      pods = pods.slice();
      pods[i] = makeBenchPod('big', i, NODES, 1);
      const r = time(() => reconcile(pods, nodes, slices));
      slowest = Math.max(slowest, r.ms);
      total += writes(r.value);
      slices = apply(slices, r.value);
      if (i % 1000 === 0) sampleMemory();
      if (i % 5000 === 4999) process.stderr.write(`  rolling update: ${i + 1}/${size} reconciles, ${fmtMs(performance.now() - started)}\n`);
    }
  });
  rows.push([
    `rolling update of ${size / 1000}k (${size} reconciles)`,
    fmtMs(t.ms),
    `${total} writes (KEP-752: ~${size}), ${fmtMs(t.ms / size)}/reconcile, slowest ${fmtMs(slowest)}, ${slices.length} slices after`,
  ]);
  printTable('slicing (max 100 endpoints per slice)', rows);
  const targets = [
    ['full reconcile of 100k endpoints <= 300 ms', results.create100000 ?? Infinity, 300],
    ['one pod change in 100k <= 20 ms', results.change100000 ?? Infinity, 20],
  ] as const;
  for (const [name, got, limit] of targets) process.stdout.write(`  target: ${name}: ${got <= limit ? 'met' : 'MISSED'} (${fmtMs(got)})\n`);
}
