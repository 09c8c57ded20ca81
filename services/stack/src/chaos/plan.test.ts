import { describe, expect, it } from 'vitest';
import { planFaults, prng } from './plan.ts';

const OPTS = { seed: 's', durationMs: 60_000, killEveryMs: 4000, restartPauseMs: 1500, victims: ['slicer-0', 'slicer-1', 'slicer-2', 'hints', 'watcher-0', 'watcher-1'], agentCutMs: 10_000 };

describe('the fault plan', () => {
  it('is the same for the same seed, and differs for another', () => {
    expect(planFaults(OPTS)).toEqual(planFaults(OPTS));
    expect(planFaults({ ...OPTS, seed: 't' })).not.toEqual(planFaults(OPTS));
    expect(prng('x')()).toBe(prng('x')());
  });

  it('kills every few seconds within the phase, never the same replica twice in a row, and each one-off fault once', () => {
    const plan = planFaults(OPTS);
    const kills = plan.filter((f) => f.kind === 'kill');
    expect(kills.length).toBeGreaterThanOrEqual(10);
    for (const [i, k] of kills.entries()) {
      expect(OPTS.victims).toContain(k.target);
      expect(k.atMs).toBeLessThan(OPTS.durationMs - OPTS.restartPauseMs);
      if (i > 0) {
        expect(k.target).not.toBe(kills[i - 1]?.target);
        expect(k.atMs - (kills[i - 1]?.atMs ?? 0)).toBeGreaterThanOrEqual(3000);
        expect(k.atMs - (kills[i - 1]?.atMs ?? 0)).toBeLessThanOrEqual(5000);
      }
    }
    expect(plan.filter((f) => f.kind !== 'kill').map((f) => [f.kind, f.atMs])).toEqual([['nats-restart', 12_000], ['postgres-restart', 24_000], ['watch-cut', 33_000], ['agent-cut', 39_000]]);
    expect(plan.map((f) => f.atMs)).toEqual([...plan.map((f) => f.atMs)].sort((a, b) => a - b));
  });

  it('an agent cut ends before the phase does', () => {
    const cut = planFaults({ ...OPTS, durationMs: 40_000, agentCutMs: 30_000 }).find((f) => f.kind === 'agent-cut');
    expect(cut).toEqual({ atMs: 10_000, kind: 'agent-cut', durationMs: 30_000 });
  });

  it('needs someone to kill', () => expect(() => planFaults({ ...OPTS, victims: [] })).toThrow(/no replicas/));
});
