import { describe, expect, it } from 'vitest';
import { BoundedFrequencyRunner } from './bounded-frequency-runner.ts';
import type { BoundedFrequencyRunnerOptions } from './bounded-frequency-runner.ts';
import { FakeClock } from './clock.ts';

type Action = { readonly at: number; readonly do: 'run' | 'start' | 'stop' } | { readonly at: number; readonly do: 'retry'; readonly ms: number };

interface Case {
  readonly name: string;
  readonly minIntervalMs?: number;
  readonly maxIntervalMs?: number;
  readonly burst?: number;
  /** How long each run takes (an async fn completing on the fake clock); 0 = synchronous. */
  readonly fnDurationMs?: number;
  /** fn calls retryAfter(ms) during its n-th run (0-based). */
  readonly retryInside?: { readonly run: number; readonly ms: number };
  /** Unless false, start() is called at time 0 before the script. */
  readonly autoStart?: boolean;
  readonly script: readonly Action[];
  readonly until: number;
  /** Clock times at which fn started. */
  readonly want: readonly number[];
}

// Defaults: minInterval 1s, maxInterval 10s, burst 1 (so burst cases opt in explicitly).
const cases: readonly Case[] = [
  { name: 'guarantee 3: runs every maxInterval without any request', script: [], until: 25_000, want: [10_000, 20_000] },
  { name: 'guarantee 3: maxInterval counts from the end of the previous run', fnDurationMs: 500, script: [], until: 21_000, want: [10_000, 20_500] },
  { name: 'a request runs at once when allowed, and resets the periodic timer', script: [{ at: 3000, do: 'run' }], until: 13_000, want: [3000, 13_000] },
  {
    name: 'guarantee 2: requests within the min interval coalesce into one deferred run',
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'run' }, { at: 200, do: 'run' }, { at: 300, do: 'run' }],
    until: 5000, want: [0, 1000],
  },
  {
    name: 'guarantee 1: the next run waits minInterval after the previous one',
    script: [{ at: 0, do: 'run' }, { at: 500, do: 'run' }],
    until: 5000, want: [0, 1000],
  },
  {
    name: 'guarantee 1: minInterval counts from completion of an async run; requests during it wait',
    fnDurationMs: 500,
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'run' }],
    until: 5000, want: [0, 1500],
  },
  {
    name: 'guarantee 1: runs never overlap, even with no min interval',
    minIntervalMs: 0, fnDurationMs: 3000,
    script: [{ at: 0, do: 'run' }, { at: 1000, do: 'run' }, { at: 2000, do: 'run' }],
    until: 5000, want: [0, 3000],
  },
  {
    name: 'D.4.14 burst 2: two runs back to back, the third waits minInterval',
    burst: 2,
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'run' }, { at: 200, do: 'run' }],
    until: 5000, want: [0, 100, 1100],
  },
  {
    name: 'burst credit comes back at one run per minInterval',
    burst: 2,
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'run' }, { at: 1100, do: 'run' }, { at: 1200, do: 'run' }, { at: 5000, do: 'run' }, { at: 5001, do: 'run' }],
    until: 6000, want: [0, 100, 1100, 2100, 5000, 5001],
  },
  {
    name: 'burst lets a request made during an async run go right after it',
    burst: 2, fnDurationMs: 500,
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'run' }],
    until: 1000, want: [0, 500],
  },
  {
    name: 'minInterval 0 disables rate limiting',
    minIntervalMs: 0,
    script: [{ at: 0, do: 'run' }, { at: 0, do: 'run' }, { at: 1, do: 'run' }],
    until: 100, want: [0, 0, 1],
  },
  {
    name: 'retryAfter brings the next run forward',
    script: [{ at: 0, do: 'run' }, { at: 0, do: 'retry', ms: 3000 }],
    until: 13_000, want: [0, 3000, 13_000],
  },
  {
    name: 'retryAfter later than the next scheduled run has no effect',
    script: [{ at: 0, do: 'retry', ms: 15_000 }],
    until: 20_000, want: [10_000, 20_000],
  },
  {
    name: 'retryAfter sooner than the min interval still respects it',
    script: [{ at: 0, do: 'run' }, { at: 0, do: 'retry', ms: 200 }],
    until: 5000, want: [0, 1000],
  },
  {
    name: 'retryAfter called inside fn schedules the retry from the call',
    retryInside: { run: 0, ms: 2000 },
    script: [{ at: 0, do: 'run' }],
    until: 12_000, want: [0, 2000, 12_000],
  },
  {
    name: 'retryAfter inside an async fn counts from the call, not from completion',
    fnDurationMs: 500, minIntervalMs: 100, retryInside: { run: 0, ms: 2000 },
    script: [{ at: 0, do: 'run' }],
    until: 3000, want: [0, 2000],
  },
  {
    name: 'a request made before start runs at start',
    autoStart: false,
    script: [{ at: 0, do: 'run' }, { at: 500, do: 'start' }],
    until: 1000, want: [500],
  },
  {
    name: 'nothing runs while stopped',
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'stop' }, { at: 200, do: 'run' }],
    until: 50_000, want: [0],
  },
  {
    name: 'restarting serves a request made while stopped, within the min interval rules',
    script: [{ at: 0, do: 'run' }, { at: 100, do: 'stop' }, { at: 200, do: 'run' }, { at: 300, do: 'start' }],
    until: 5000, want: [0, 1000],
  },
];

describe('BoundedFrequencyRunner', () => {
  for (const tc of cases) {
    it(tc.name, async () => {
      const clock = new FakeClock(0);
      const started: number[] = [];
      const runner: BoundedFrequencyRunner = new BoundedFrequencyRunner({
        name: 'sync',
        clock,
        minIntervalMs: tc.minIntervalMs ?? 1000,
        maxIntervalMs: tc.maxIntervalMs ?? 10_000,
        burst: tc.burst ?? 1,
        fn: () => {
          if (tc.retryInside?.run === started.length) runner.retryAfter(tc.retryInside.ms);
          started.push(clock.now());
          const d = tc.fnDurationMs ?? 0;
          return d > 0 ? new Promise<void>((done) => clock.setTimer(done, d)) : undefined;
        },
      });
      if (tc.autoStart !== false) runner.start();
      for (const a of tc.script) {
        await clock.advanceAsync(a.at - clock.now());
        if (a.do === 'retry') runner.retryAfter(a.ms);
        else runner[a.do]();
      }
      await clock.advanceAsync(tc.until - clock.now());
      expect(started).toEqual(tc.want);
      runner.stop();
    });
  }

  it('reports a failing run and keeps its periodic schedule', async () => {
    const clock = new FakeClock(0);
    const errors: unknown[] = [];
    let n = 0;
    const runner = new BoundedFrequencyRunner({
      name: 'sync',
      clock,
      minIntervalMs: 1000,
      maxIntervalMs: 10_000,
      fn: async () => {
        n++;
        if (n === 1) throw new Error('iptables-restore failed');
      },
      onError: (e) => errors.push(e),
    });
    runner.start();
    runner.run();
    await clock.advanceAsync(10_000);
    expect(errors).toEqual([new Error('iptables-restore failed')]);
    expect(n).toBe(2);
    runner.stop();
    expect(clock.pending()).toBe(0);
  });

  it('reports a synchronous throw too', () => {
    const errors: unknown[] = [];
    const runner = new BoundedFrequencyRunner({ name: 's', clock: new FakeClock(), minIntervalMs: 0, maxIntervalMs: 1, fn: () => { throw new Error('x'); }, onError: (e) => errors.push(e) });
    runner.start();
    runner.run();
    expect(errors).toHaveLength(1);
  });

  const invalid: readonly { name: string; options: Partial<BoundedFrequencyRunnerOptions>; message: RegExp }[] = [
    { name: 'rejects maxInterval below minInterval', options: { minIntervalMs: 2000, maxIntervalMs: 1000 }, message: /maxIntervalMs \(1000\) must be >= minIntervalMs \(2000\)/ },
    { name: 'rejects a negative minInterval', options: { minIntervalMs: -1 }, message: /minIntervalMs must be >= 0/ },
    { name: 'rejects a burst below 1', options: { burst: 0 }, message: /burst must be >= 1/ },
  ];
  for (const tc of invalid) {
    it(tc.name, () => {
      expect(() => new BoundedFrequencyRunner({ name: 'sync', fn: () => {}, minIntervalMs: 1000, maxIntervalMs: 10_000, clock: new FakeClock(), ...tc.options })).toThrow(tc.message);
    });
  }
});
