import { describe, expect, it } from 'vitest';
import { FakeClock, settle } from './clock.ts';
import { TerminalError } from './errors.ts';
import { runWorkers } from './run-workers.ts';
import type { ReconcileErrorReport, ReconcileResult } from './run-workers.ts';
import { WorkQueue } from './work-queue.ts';

type Behaviour = (attempt: number) => ReconcileResult | void | Error;

interface Case {
  readonly name: string;
  readonly behaviour: Behaviour;
  readonly maxRetries?: number;
  readonly runForMs: number;
  /** Clock times at which reconcile('default/web') was called. */
  readonly calls: readonly number[];
  readonly reports: readonly Pick<ReconcileErrorReport<string>, 'outcome' | 'retries'>[];
  readonly requeuesAfter: number;
}

const fail = new Error('postgres unavailable');

const cases: readonly Case[] = [
  { name: 'habit 3: success forgets the key and does not requeue', behaviour: () => undefined, runForMs: 100_000, calls: [0], reports: [], requeuesAfter: 0 },
  {
    name: 'habit 3: requeueAfterMs reconciles again after that delay',
    behaviour: (n) => (n === 0 ? { requeueAfterMs: 5000 } : undefined),
    runForMs: 100_000, calls: [0, 5000], reports: [], requeuesAfter: 0,
  },
  { name: 'requeueAfterMs of 0 counts as plain success', behaviour: () => ({ requeueAfterMs: 0 }), runForMs: 100_000, calls: [0], reports: [], requeuesAfter: 0 },
  {
    name: 'habit 3: an error retries with backoff and success then forgets the backoff',
    behaviour: (n) => (n < 2 ? fail : undefined),
    runForMs: 100_000, calls: [0, 1000, 3000],
    reports: [{ outcome: 'requeued', retries: 0 }, { outcome: 'requeued', retries: 1 }], requeuesAfter: 0,
  },
  {
    name: 'habit 3: a TerminalError is forgotten and reported, never retried',
    behaviour: () => new TerminalError('spec.ports[0].port: must be 1..65535'),
    runForMs: 100_000, calls: [0], reports: [{ outcome: 'terminal', retries: 0 }], requeuesAfter: 0,
  },
  {
    name: 'a TerminalError wrapped as a cause is still terminal',
    behaviour: (n) => (n === 0 ? fail : new Error('reconcile default/web', { cause: new TerminalError('bad') })),
    runForMs: 100_000, calls: [0, 1000],
    reports: [{ outcome: 'requeued', retries: 0 }, { outcome: 'terminal', retries: 1 }], requeuesAfter: 0,
  },
  {
    name: 'A.12.4 after maxRetries requeues the key is dropped and reported',
    behaviour: () => fail, maxRetries: 3,
    runForMs: 1_000_000, calls: [0, 1000, 3000, 7000],
    reports: [{ outcome: 'requeued', retries: 0 }, { outcome: 'requeued', retries: 1 }, { outcome: 'requeued', retries: 2 }, { outcome: 'dropped', retries: 3 }],
    requeuesAfter: 0,
  },
  {
    name: 'A.12.4 the default maxRetries is 15 (16 attempts)',
    behaviour: () => fail,
    runForMs: 20_000_000,
    calls: [0, 1000, 3000, 7000, 15_000, 31_000, 63_000, 127_000, 255_000, 511_000, 1_023_000, 2_023_000, 3_023_000, 4_023_000, 5_023_000, 6_023_000],
    reports: [...Array.from({ length: 15 }, (_, i) => ({ outcome: 'requeued' as const, retries: i })), { outcome: 'dropped', retries: 15 }],
    requeuesAfter: 0,
  },
];

describe('runWorkers', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const queue = new WorkQueue({ clock, overallRateLimit: null });
      const calls: number[] = [];
      const reports: ReconcileErrorReport<string>[] = [];
      const workers = runWorkers(
        queue,
        2,
        async (key) => {
          expect(key).toBe('default/web');
          const out = tc.behaviour(calls.length);
          calls.push(clock.now());
          if (out instanceof Error) throw out;
          return out;
        },
        { ...(tc.maxRetries === undefined ? {} : { maxRetries: tc.maxRetries }), onError: (r) => reports.push(r) },
      );
      queue.add('default/web');
      await clock.advanceAsync(tc.runForMs);
      expect(calls).toEqual(tc.calls);
      expect(reports.map(({ outcome, retries }) => ({ outcome, retries }))).toEqual(tc.reports);
      for (const r of reports) expect(r.key).toBe('default/web');
      expect(queue.numRequeues('default/web')).toBe(tc.requeuesAfter);
      queue.shutDown();
      await expect(workers).resolves.toBeUndefined();
    });
  }

  it('never reconciles one key on two workers at once, and reprocesses a key added meanwhile', async () => {
    const clock = new FakeClock(0);
    const queue = new WorkQueue({ clock });
    const active = new Set<string>();
    const log: string[] = [];
    const gates: Array<() => void> = [];
    const workers = runWorkers(queue, 3, async (key) => {
      expect(active.has(key)).toBe(false);
      active.add(key);
      log.push(`start ${key}`);
      await new Promise<void>((release) => gates.push(release));
      active.delete(key);
      log.push(`end ${key}`);
    });
    queue.add('a');
    queue.add('b');
    await settle();
    queue.add('a'); // while a is processing
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    gates.shift()?.(); // finish first a
    await settle();
    expect(log).toEqual(['start a', 'start b', 'end a', 'start a']);
    for (const release of gates.splice(0)) release();
    await settle();
    for (const release of gates.splice(0)) release();
    queue.shutDown();
    await workers;
    expect(log.filter((l) => l === 'end a')).toHaveLength(2);
  });

  const batching: readonly { name: string; periodMs: number; eventsAt: readonly number[]; wantReconciles: number }[] = [
    { name: 'A.12.6 with a 1s batch period, three pod events 100ms apart cause one reconcile', periodMs: 1000, eventsAt: [0, 100, 200], wantReconciles: 1 },
    { name: 'A.12.6 with batch period 0, three pod events 100ms apart cause three reconciles', periodMs: 0, eventsAt: [0, 100, 200], wantReconciles: 3 },
    { name: 'A.12.6 an event 1s after the batch fired starts a second batch', periodMs: 1000, eventsAt: [0, 100, 200, 1200], wantReconciles: 2 },
  ];
  for (const tc of batching) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const queue = new WorkQueue({ clock });
      let reconciles = 0;
      const workers = runWorkers(queue, 5, async () => {
        reconciles++;
      });
      for (const at of tc.eventsAt) {
        await clock.advanceAsync(at - clock.now());
        queue.addAfter('default/web', tc.periodMs);
      }
      await clock.advanceAsync(10_000);
      expect(reconciles).toBe(tc.wantReconciles);
      queue.shutDown();
      await workers;
    });
  }

  it('resolves at once with no workers', async () => {
    await expect(runWorkers(new WorkQueue({ clock: new FakeClock() }), 0, async () => {})).resolves.toBeUndefined();
  });
});
