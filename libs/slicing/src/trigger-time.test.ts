import { describe, expect, it } from 'vitest';
import type { Pod, Service } from '@slicemesh/model';
import { deepFreeze, makePod, makeService, prng } from '@slicemesh/testing';
import { TriggerTimeTracker } from './trigger-time.ts';

const T0 = '2026-01-01T00:00:00Z';
const svc = (created = T0): Service => deepFreeze(makeService('web', { creationTimestamp: created }));
const pod = (name: string, ready: string): Pod => deepFreeze(makePod(name, { readyTransition: ready }));

interface Step {
  readonly service: Service;
  readonly pods: readonly Pod[];
  readonly want: string | null;
}

const cases: { name: string; steps: Step[] }[] = [
  { name: 'A.10.1 first sight of a Service: its creationTimestamp, whatever the pods say', steps: [{ service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: T0 }] },
  {
    name: 'A.10.2 nothing changed since the last sync -> none',
    steps: [
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: T0 },
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: null },
    ],
  },
  {
    name: 'A.10.2 a pod Ready transition newer than last seen -> that time',
    steps: [
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: T0 },
      { service: svc(), pods: [pod('a', '2026-01-06T00:00:00.25Z')], want: '2026-01-06T00:00:00.25Z' },
    ],
  },
  {
    name: 'A.10.2 the earliest of several changed pods',
    steps: [
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z'), pod('b', '2026-01-05T00:00:00Z')], want: T0 },
      { service: svc(), pods: [pod('a', '2026-01-07T00:00:00Z'), pod('b', '2026-01-06T00:00:00Z'), pod('c', '2026-01-08T00:00:00Z')], want: '2026-01-06T00:00:00Z' },
    ],
  },
  {
    name: 'A.10.2 a new pod counts as changed; an older or equal time does not',
    steps: [
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: T0 },
      { service: svc(), pods: [pod('a', '2026-01-04T00:00:00Z'), pod('new', '2026-01-02T00:00:00Z')], want: '2026-01-02T00:00:00Z' },
    ],
  },
  {
    name: 'A.10.2 a newer Service creationTimestamp (recreated) counts too',
    steps: [
      { service: svc(), pods: [], want: T0 },
      { service: svc('2026-02-01T00:00:00Z'), pods: [], want: '2026-02-01T00:00:00Z' },
    ],
  },
  {
    name: 'A.10.2 a pod that disappeared and came back with its old time counts again',
    steps: [
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: T0 },
      { service: svc(), pods: [], want: null },
      { service: svc(), pods: [pod('a', '2026-01-05T00:00:00Z')], want: '2026-01-05T00:00:00Z' },
    ],
  },
  {
    name: 'pods without a Ready transition time are ignored',
    steps: [
      { service: svc(), pods: [], want: T0 },
      { service: svc(), pods: [deepFreeze({ ...makePod('x'), status: { phase: 'Running' as const } })], want: null },
    ],
  },
];

describe('TriggerTimeTracker', () => {
  for (const tc of cases) {
    it(tc.name, () => {
      const tr = new TriggerTimeTracker();
      for (const [i, s] of tc.steps.entries()) expect(tr.computeTriggerTime(s.service, s.pods), `step ${i}`).toBe(s.want);
    });
  }
  it('A.1.3 forgetting a Service makes the next sync a first sight again', () => {
    const tr = new TriggerTimeTracker();
    tr.computeTriggerTime(svc(), []);
    expect(tr.has('default', 'web')).toBe(true);
    tr.deleteService('default', 'web');
    expect(tr.has('default', 'web')).toBe(false);
    expect(tr.computeTriggerTime(svc(), [pod('a', '2026-01-05T00:00:00Z')])).toBe(T0);
  });
  it('A.10.1 a Service without creationTimestamp yields none at first sight', () => {
    const s = deepFreeze({ ...makeService('web'), metadata: { name: 'web', namespace: 'default' } });
    expect(new TriggerTimeTracker().computeTriggerTime(s, [])).toBeNull();
  });
  it('Services are tracked independently', () => {
    const tr = new TriggerTimeTracker();
    tr.computeTriggerTime(svc(), []);
    expect(tr.computeTriggerTime(deepFreeze(makeService('other', { creationTimestamp: T0 })), [])).toBe(T0);
  });
});

// The rule of A.10.2 stated plainly, pod by pod by name: the reference the tracker's
// identity-walk must agree with.
function referenceTracker(): (service: Service, pods: readonly Pod[]) => string | null {
  let prev: { created: string | undefined; times: Map<string, number> } | undefined;
  return (service, pods) => {
    const times = new Map<string, number>();
    let min: number | undefined;
    for (const p of pods) {
      const at = p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime;
      if (at === undefined) continue;
      const t = Date.parse(at);
      times.set(p.metadata.name, t);
      const before = prev?.times.get(p.metadata.name);
      if ((before === undefined || t > before) && (min === undefined || t < min)) min = t;
    }
    const created = service.metadata.creationTimestamp;
    const first = prev === undefined;
    if (created !== undefined && (prev?.created === undefined || Date.parse(created) > Date.parse(prev.created)) && (min === undefined || Date.parse(created) < min)) min = Date.parse(created);
    prev = { created, times };
    if (first) return created ?? null;
    return min === undefined ? null : new Date(min).toISOString().replace('.000Z', 'Z');
  };
}

describe('TriggerTimeTracker against the plain rule', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`agrees over random pod churn, sorted and unsorted lists (seed ${seed})`, () => {
      const rnd = prng(seed);
      const tracker = new TriggerTimeTracker();
      const reference = referenceTracker();
      const service = svc();
      let pods = new Map<string, Pod>();
      for (let step = 0; step < 60; step++) {
        const next = new Map(pods);
        for (let k = Math.floor(rnd() * 4); k > 0; k--) {
          const name = `p${Math.floor(rnd() * 12)}`;
          if (rnd() < 0.3) next.delete(name);
          else if (rnd() < 0.15) next.set(name, deepFreeze(makePod(name, {}))); // no Ready transition time
          else next.set(name, pod(name, `2026-01-0${1 + Math.floor(rnd() * 9)}T00:00:0${Math.floor(rnd() * 10)}Z`));
        }
        pods = next;
        const list = [...pods.values()].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
        if (rnd() < 0.2) list.reverse();
        expect(tracker.computeTriggerTime(service, list)).toBe(reference(service, list));
      }
    });
  }
});
