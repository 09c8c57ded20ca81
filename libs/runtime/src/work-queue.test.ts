import { describe, expect, it } from 'vitest';
import { FakeClock, settle } from './clock.ts';
import { WorkQueue } from './work-queue.ts';
import type { WorkQueueOptions } from './work-queue.ts';

// Resolves with what a get() promise settled to so far ('pending' if not yet).
async function peek<T>(p: Promise<T>): Promise<T | 'pending'> {
  let out: T | 'pending' = 'pending';
  void p.then((v) => (out = v));
  await settle();
  return out;
}

/** Delay of the one timer addRateLimited/addAfter just set, read from the fake clock. */
function nextDelay(clock: FakeClock): number | undefined {
  const at = clock.nextTimerAt();
  return at === undefined ? undefined : at - clock.now();
}

interface Case {
  readonly name: string;
  readonly options?: Omit<WorkQueueOptions, 'clock'>;
  readonly run: (q: WorkQueue, clock: FakeClock) => Promise<unknown> | unknown;
  readonly want: unknown;
}

const cases: readonly Case[] = [
  {
    name: 'add de-duplicates a key that is already queued',
    run: async (q) => {
      q.add('a');
      q.add('a');
      q.add('b');
      return [q.len(), await q.get(), await q.get(), q.len()];
    },
    want: [2, 'a', 'b', 0],
  },
  {
    name: 'hands keys out in the order they were first added',
    run: async (q) => {
      for (const k of ['c', 'a', 'b', 'a']) q.add(k);
      return [await q.get(), await q.get(), await q.get()];
    },
    want: ['c', 'a', 'b'],
  },
  {
    name: 'a key being processed is not handed to a second worker; re-added, it comes back after done',
    run: async (q) => {
      q.add('a');
      const first = await q.get();
      q.add('a');
      const second = q.get();
      const before = [q.len(), await peek(second)];
      q.done('a');
      return [first, ...before, await peek(second)];
    },
    want: ['a', 0, 'pending', 'a'],
  },
  {
    name: 'several adds while processing yield a single re-delivery',
    run: async (q) => {
      q.add('a');
      await q.get();
      q.add('a');
      q.add('a');
      q.done('a');
      const again = await q.get();
      q.done('a');
      return [again, q.len(), await peek(q.get())];
    },
    want: ['a', 0, 'pending'],
  },
  {
    name: 'done without a re-add does not requeue',
    run: async (q) => {
      q.add('a');
      q.done((await q.get()) as string);
      return q.len();
    },
    want: 0,
  },
  {
    name: 'get waits for an add, and waiters are served first come, first served',
    run: async (q) => {
      const w1 = q.get();
      const w2 = q.get();
      const idle = await peek(w1);
      q.add('x');
      q.add('y');
      return [idle, await w1, await w2];
    },
    want: ['pending', 'x', 'y'],
  },
  {
    name: 'addAfter adds the key once its delay has passed',
    run: (q, clock) => {
      q.addAfter('a', 1000);
      clock.advance(999);
      const early = q.len();
      clock.advance(1);
      return [early, q.len()];
    },
    want: [0, 1],
  },
  {
    name: 'A.12.2 addAfter calls within the batching window coalesce into one add at its end',
    run: async (q, clock) => {
      q.addAfter('svc', 1000);
      clock.advance(100);
      q.addAfter('svc', 1000);
      clock.advance(100);
      q.addAfter('svc', 1000);
      clock.advance(800);
      const atWindowEnd = q.len();
      q.done((await q.get()) as string);
      clock.advance(10_000);
      return [atWindowEnd, q.len(), clock.pending()];
    },
    want: [1, 0, 0],
  },
  {
    name: 'a sooner addAfter moves the pending add earlier, and the later one is dropped',
    run: async (q, clock) => {
      q.addAfter('a', 1000);
      q.addAfter('a', 100);
      clock.advance(100);
      const ready = q.len();
      q.done((await q.get()) as string);
      clock.advance(2000);
      return [ready, q.len()];
    },
    want: [1, 0],
  },
  {
    name: 'addAfter with a zero or negative delay adds now',
    run: (q) => {
      q.addAfter('a', 0);
      q.addAfter('b', -5);
      return q.len();
    },
    want: 2,
  },
  {
    name: 'A.12.4 addRateLimited backs off 1s doubling to 1000s and counts requeues',
    options: { overallRateLimit: null },
    run: async (q, clock) => {
      const seen: (number | undefined)[] = [];
      for (let i = 0; i < 12; i++) {
        q.addRateLimited('a');
        seen.push(nextDelay(clock));
        clock.advance(nextDelay(clock) ?? 0);
        q.done((await q.get()) as string);
      }
      return [seen, q.numRequeues('a')];
    },
    want: [[1000, 2000, 4000, 8000, 16_000, 32_000, 64_000, 128_000, 256_000, 512_000, 1_000_000, 1_000_000], 12],
  },
  {
    name: 'forget resets the backoff of that key only',
    options: { overallRateLimit: null },
    run: (q, clock) => {
      q.addRateLimited('a');
      q.addRateLimited('a');
      q.addRateLimited('b');
      q.forget('a');
      const counts = [q.numRequeues('a'), q.numRequeues('b')];
      clock.advance(10_000);
      q.addRateLimited('a');
      return [...counts, nextDelay(clock)];
    },
    want: [0, 1, 1000],
  },
  {
    name: 'custom base and ceiling apply',
    options: { baseDelayMs: 5, maxDelayMs: 12, overallRateLimit: null },
    run: (q, clock) =>
      [0, 1, 2].map(() => {
        q.addRateLimited('k');
        const d = nextDelay(clock);
        clock.advance(d ?? 0);
        return d;
      }),
    want: [5, 10, 12],
  },
  {
    name: 'A.12.4 the overall bucket delays keys once its burst is spent, whichever delay is larger wins',
    options: { baseDelayMs: 10, overallRateLimit: { qps: 1, burst: 2 } },
    run: (q, clock) => {
      for (const k of ['a', 'b', 'c']) q.addRateLimited(k);
      clock.advance(10);
      const afterBase = q.len();
      clock.advance(990);
      return [afterBase, q.len()];
    },
    want: [2, 3],
  },
  {
    name: 'shutDown wakes idle getters with undefined',
    run: async (q) => {
      const w = q.get();
      q.shutDown();
      return [await w, q.isShuttingDown()];
    },
    want: [undefined, true],
  },
  {
    name: 'after shutDown, already queued keys are still handed out, then undefined',
    run: async (q) => {
      q.add('a');
      q.add('b');
      q.shutDown();
      return [await q.get(), await q.get(), await q.get()];
    },
    want: ['a', 'b', undefined],
  },
  {
    name: 'shutDown cancels delayed adds and refuses new adds',
    run: (q, clock) => {
      q.addAfter('a', 100);
      q.addRateLimited('b');
      q.shutDown();
      q.add('c');
      q.addAfter('d', 10);
      clock.advance(5000);
      return [q.len(), clock.pending()];
    },
    want: [0, 0],
  },
];

describe('WorkQueue', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const q = new WorkQueue({ clock, ...tc.options });
      expect(await tc.run(q, clock)).toEqual(tc.want);
    });
  }
});
