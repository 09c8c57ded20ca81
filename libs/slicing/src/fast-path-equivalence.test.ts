// The stamped desired set (no identity maps, memoised endpoints) must plan exactly what the
// reference Map version plans, including across syncs where memoised objects go stale.

import { describe, expect, it } from 'vitest';
import type { EndpointSlice, Node, Pod } from '@slicemesh/model';
import { deepFreeze, makeNode, makePod, makeService } from '@slicemesh/testing';
import type { World } from './equivalence-harness.ts';
import { planSlicesWith } from './plan-slices.ts';
import { checkSync, rng } from './equivalence-harness.ts';
import { ipv4 } from './test-fixtures.ts';
import type { ListChanges } from './list-changes.ts';
import { TriggerTimeTracker } from './trigger-time.ts';
import { replacementSyncs } from './desired-incremental.ts';

function pod(i: number, r: () => number, gen: number): Pod {
  return deepFreeze(
    makePod(`p-${i}`, {
      ips: r() < 0.1 ? [ipv4(i), `fd00::${i.toString(16)}`] : [ipv4(i + (gen % 3 === 0 && r() < 0.05 ? 50_000 : 0))],
      ready: r() > 0.2,
      terminating: r() < 0.05,
      nodeName: r() < 0.03 ? 'missing' : `n-${Math.floor(r() * 3)}`,
      hostname: r() < 0.1 ? `h${i}` : undefined,
      subdomain: 'svc',
      containerPorts: [{ name: 'http', containerPort: r() < 0.15 ? 9000 : 8080, protocol: 'TCP' }],
    }),
  );
}

describe('stamped fast path == reference path', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`random evolution, seed ${seed}`, () => {
      const r = rng(seed);
      const nodes = new Map<string, Node>([0, 1, 2].map((i) => [`n-${i}`, deepFreeze(makeNode(`n-${i}`, { zone: `z${i}` }))]));
      const w: World = {
        service: deepFreeze(makeService('svc', { ipFamilies: seed % 2 === 0 ? ['IPv4', 'IPv6'] : ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] })),
        pods: Array.from({ length: 40 + seed * 20 }, (_, i) => pod(i, r, 0)),
        nodes,
        slices: [],
        max: [7, 20, 100][seed % 3] ?? 100,
      };
      const history: Pod[][] = [];
      for (let step = 0; step < 25; step++) {
        checkSync(w, `seed ${seed} step ${step}`);
        history.push(w.pods);
        const kind = r();
        const pods = [...w.pods];
        if (kind < 0.5) {
          // Replace a few pods by new versions (ready flips, IP changes, moves).
          for (let k = 0; k < 3; k++) {
            const i = Math.floor(r() * pods.length);
            pods[i] = pod(Number(pods[i]?.metadata.name.slice(2)), r, step);
          }
        } else if (kind < 0.6) {
          pods.splice(Math.floor(r() * pods.length), Math.floor(r() * 15)); // pods go away
        } else if (kind < 0.7) {
          const start = 1000 + step * 100;
          for (let k = 0; k < Math.floor(r() * 30); k++) pods.push(pod(start + k, r, step)); // scale up
        } else if (kind < 0.75) {
          w.pods = history[Math.floor(r() * history.length)] ?? pods; // roll back to older pod objects
          continue;
        } else if (kind < 0.8 && pods.length > 2) {
          pods.push(pod(Number(pods[0]?.metadata.name.slice(2)), r, step + 1)); // duplicate pod name
        } else if (kind < 0.85) {
          const n = `n-${Math.floor(r() * 3)}`;
          w.nodes = new Map(w.nodes).set(n, deepFreeze(makeNode(n, { zone: `z${Math.floor(r() * 5)}` }))); // zone relabel
        } else if (kind < 0.9) {
          w.service = deepFreeze(makeService('svc', { ...w.service.spec, ipFamilies: w.service.spec.ipFamilies, ports: w.service.spec.ports, publishNotReadyAddresses: r() < 0.5, labels: { v: String(step) } }));
        } else {
          w.slices = w.slices.map((s) => JSON.parse(JSON.stringify(s)) as EndpointSlice); // slices re-read from storage
        }
        w.pods = pods;
      }
    });
  }

  it('a duplicate pod identity falls back to Map semantics: the later pod wins', () => {
    const svc = deepFreeze(makeService('dup'));
    const nodes = new Map([['node-1', deepFreeze(makeNode('node-1'))]]);
    const a = deepFreeze(makePod('same', { labels: { app: 'dup' }, uid: 'first' }));
    const b = deepFreeze(makePod('same', { labels: { app: 'dup' }, uid: 'second' }));
    const input = { service: svc, pods: [a, b], nodes, existingSlices: [] };
    const fast = planSlicesWith(input, 'stamped');
    expect(fast).toEqual(planSlicesWith(input, 'reference'));
    expect(fast.plan.create[0]?.endpoints.map((e) => e.targetRef?.uid)).toEqual(['second']);
  });

  it('the same pod object listed twice counts once', () => {
    const svc = deepFreeze(makeService('twice'));
    const nodes = new Map([['node-1', deepFreeze(makeNode('node-1'))]]);
    const a = deepFreeze(makePod('a', { labels: { app: 'twice' } }));
    const input = { service: svc, pods: [a, a], nodes, existingSlices: [] };
    expect(planSlicesWith(input, 'stamped')).toEqual(planSlicesWith(input, 'reference'));
    expect(planSlicesWith(input, 'stamped').plan.create[0]?.endpoints).toHaveLength(1);
  });
});

describe('memo safety', () => {
  it('a caller reusing and modifying its pods array is still planned correctly', () => {
    const svc = deepFreeze(makeService('reuse'));
    const nodes = new Map([['node-1', deepFreeze(makeNode('node-1'))]]);
    const pods = [deepFreeze(makePod('a', { labels: { app: 'reuse' } })), deepFreeze(makePod('b', { labels: { app: 'reuse' }, ips: ['10.0.0.2'] }))];
    planSlicesWith({ service: svc, pods, nodes, existingSlices: [] }, 'stamped');
    pods[1] = deepFreeze(makePod('b', { labels: { app: 'reuse' }, ips: ['10.0.0.2'], ready: false }));
    const r = planSlicesWith({ service: svc, pods, nodes, existingSlices: [] }, 'stamped');
    expect(r.plan.create[0]?.endpoints.map((e) => e.conditions.ready)).toEqual([true, false]);
  });
});

describe('existing-slice oddities', () => {
  it('an endpoint listed in two existing slices is kept once (first slice), in both modes', () => {
    const svc = deepFreeze(makeService('dups'));
    const nodes = new Map([['node-1', deepFreeze(makeNode('node-1'))]]);
    const pods = [deepFreeze(makePod('a', { labels: { app: 'dups' } })), deepFreeze(makePod('b', { labels: { app: 'dups' }, ips: ['10.0.0.2'] }))];
    const created = planSlicesWith({ service: svc, pods, nodes, existingSlices: [] }, 'stamped').plan.create[0];
    if (!created) throw new Error('no slice');
    const s1 = deepFreeze({ ...created, metadata: { ...created.metadata, name: 's1' } });
    const s2 = deepFreeze({ ...created, metadata: { ...created.metadata, name: 's2' }, endpoints: created.endpoints.slice(1) });
    const input = { service: svc, pods, nodes, existingSlices: [s2, s1] };
    const fast = planSlicesWith(input, 'stamped');
    expect(fast).toEqual(planSlicesWith(input, 'reference'));
    expect(fast.plan.unchanged.map((s) => s.metadata.name)).toEqual(['s1']);
    expect(fast.plan.delete.map((s) => s.metadata.name)).toEqual(['s2']);
  });
});

/** A pod list changed in place that reports its replaced positions, as the projection's lists do. */
class InPlaceList implements ListChanges {
  readonly items: Pod[];
  version = 0;
  #replaced: number[] = [];
  #base = 0;

  constructor(items: Pod[]) {
    this.items = items;
  }

  replacedSince(version: number): readonly number[] | null {
    return version < this.#base || version > this.version ? null : this.#replaced.slice(version - this.#base);
  }

  replace(i: number, pod: Pod): void {
    this.items[i] = pod;
    this.#replaced.push(i);
    this.version++;
  }

  /** Inserts or removes: earlier positions are no longer valid. */
  splice(start: number, remove: number, ...add: Pod[]): void {
    this.items.splice(start, remove, ...add);
    this.version++;
    this.#base = this.version;
    this.#replaced = [];
  }
}

/** A pod whose Ready transition time moves with `step` (what the trigger time is made of). */
function timedPod(i: number, r: () => number, step: number): Pod {
  const p = pod(i, r, step);
  const at = `2026-01-${String(1 + (step % 28)).padStart(2, '0')}T00:00:${String(Math.floor(r() * 60)).padStart(2, '0')}Z`;
  return deepFreeze({ ...p, status: { ...p.status, conditions: [{ type: 'Ready', status: p.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'True', lastTransitionTime: at }] } });
}

describe('with a changes feed (the projection hands its list and its replaced positions)', () => {
  for (const seed of [11, 12, 13, 14]) {
    it(`plans and trigger times equal the reference's through replacements, inserts and removals, seed ${seed}`, () => {
      const before = { ...replacementSyncs };
      const r = rng(seed);
      const nodes = new Map<string, Node>([0, 1, 2].map((i) => [`n-${i}`, deepFreeze(makeNode(`n-${i}`, { zone: `z${i}` }))]));
      const list = new InPlaceList(Array.from({ length: 60 + seed * 10 }, (_, i) => timedPod(i, r, 0)));
      const w: World = {
        service: deepFreeze(makeService(`svc-feed-${seed}`, { ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] })),
        pods: list.items,
        podChanges: list,
        nodes,
        slices: [],
        max: [7, 20, 100][seed % 3] ?? 100,
      };
      const fed = new TriggerTimeTracker();
      const walked = new TriggerTimeTracker();
      let next = 5000;
      for (let step = 0; step < 40; step++) {
        checkSync(w, `seed ${seed} step ${step}`);
        expect(fed.computeTriggerTime(w.service, list.items, list), `seed ${seed} step ${step}`).toBe(walked.computeTriggerTime(w.service, list.items.slice()));
        const kind = r();
        if (kind < 0.6) {
          for (let k = 0; k < 1 + Math.floor(r() * 3); k++) {
            const i = Math.floor(r() * list.items.length);
            list.replace(i, timedPod(Number(list.items[i]?.metadata.name.slice(2)), r, step + 1));
          }
        } else if (kind < 0.7) {
          list.splice(Math.floor(r() * list.items.length), 1 + Math.floor(r() * 4));
        } else if (kind < 0.8) {
          list.splice(Math.floor(r() * list.items.length), 0, timedPod(next++, r, step));
        } else if (kind < 0.9) {
          const n = `n-${Math.floor(r() * 3)}`;
          w.nodes = new Map(w.nodes).set(n, deepFreeze(makeNode(n, { zone: `z${Math.floor(r() * 5)}` })));
        }
        // else: nothing changed; the next sync must plan nothing new
      }
      // Most steps replace pods only: those syncs took the replacement path, none had to be redone.
      expect(replacementSyncs.done - before.done).toBeGreaterThan(5);
      expect(replacementSyncs.redone - before.redone).toBe(0);
    });
  }
});

describe('replacement syncs, case by case (each planned as the reference plans it)', () => {
  let caseNo = 0;
  const nodes = new Map<string, Node>([0, 1, 2].map((i) => [`n-${i}`, deepFreeze(makeNode(`n-${i}`, { zone: `z${i}` }))]));
  const base = (i: number, o: { ip?: number; ready?: boolean; node?: string; port?: number } = {}): Pod =>
    deepFreeze(makePod(`p-${String(i).padStart(3, '0')}`, { ips: [ipv4(o.ip ?? i)], ready: o.ready ?? true, nodeName: o.node ?? `n-${i % 3}`, containerPorts: [{ name: 'http', containerPort: o.port ?? 8080, protocol: 'TCP' }] }));

  it.each([
    { name: 'a pod turns unready', change: (i: number) => base(i, { ready: false }), fast: true },
    { name: "a pod's address changes (its endpoint leaves one slice, the new one is placed)", change: (i: number) => base(i, { ip: i + 70_000 }), fast: true },
    { name: 'a pod moves to another node', change: (i: number) => base(i, { node: `n-${(i + 1) % 3}` }), fast: true },
    { name: "a pod takes another pod's address (identities name the pod: still two endpoints)", change: (i: number) => base(i, { ip: i + 1 }), fast: true },
    { name: 'a pod lands on an unknown node (an A.3.4 error: a full sync)', change: (i: number) => base(i, { node: 'missing' }), fast: false },
    { name: 'a pod changes port group (a full sync)', change: (i: number) => base(i, { port: 9090 }), fast: false },
  ])('$name', ({ change, fast }) => replacementCase(change, fast, 'http'));

  it.each([
    { name: 'numeric target port (one group for every pod): a pod turns unready', change: (i: number) => base(i, { ready: false }), fast: true },
    { name: "numeric target port: a pod's address changes", change: (i: number) => base(i, { ip: i + 70_000 }), fast: true },
  ])('$name', ({ change, fast }) => replacementCase(change, fast, 8080));

  /** 250 pods of a Service of its own, in a list that reports its changes, synced once. */
  function syncedCase(targetPort: string | number): { list: InPlaceList; w: World } {
    const list = new InPlaceList(Array.from({ length: 250 }, (_, i) => base(i)));
    const w: World = {
      service: deepFreeze(makeService(`svc-case-${caseNo++}`, { ports: [{ name: 'http', port: 80, targetPort, protocol: 'TCP' }] })),
      pods: list.items,
      podChanges: list,
      nodes,
      slices: [],
      max: 100,
    };
    checkSync(w, 'first sync');
    return { list, w };
  }

  function replacementCase(change: (i: number) => Pod, fast: boolean, targetPort: string | number): void {
    const { list, w } = syncedCase(targetPort);
    const before = replacementSyncs.done;
    for (const i of [7, 130]) list.replace(i, change(i));
    checkSync(w, 'after the change');
    expect(replacementSyncs.done - before).toBe(fast ? 1 : 0);
    checkSync(w, 'nothing changed since');
  }

  it.each([
    { name: 'an address change whose plan was never written (its commit failed, memory was put back)', change: (i: number) => base(i, { ip: i + 80_000 }) },
    { name: 'a readiness flip whose plan was never written', change: (i: number) => base(i, { ready: false }) },
  ])('$name: the next sync still plans as the reference', ({ change }) => {
    const { list, w } = syncedCase('http');
    list.replace(7, change(7));
    // Planned (the memo moves on) but not applied: the slices stay as the first sync left them.
    planSlicesWith({ service: w.service, pods: w.pods, nodes: w.nodes, existingSlices: w.slices, maxEndpointsPerSlice: w.max, podChanges: list }, 'stamped');
    list.replace(131, change(131));
    checkSync(w, 'the sync after the unwritten one');
    checkSync(w, 'and the one after that');
  });
});
