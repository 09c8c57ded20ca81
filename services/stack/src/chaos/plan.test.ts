import { describe, expect, it } from 'vitest';
import { NATS_QUIET_MS, planFaults, prng } from './plan.ts';

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

  it('on a NATS cluster: kills the KUBE leader at 20 %, a server drawn from the seed at 60 %, each down for a while, and cuts no agent', () => {
    const plan = planFaults({ ...OPTS, natsServers: 3, natsDownMs: 4000 });
    expect(plan.filter((f) => f.kind !== 'kill').map((f) => [f.kind, f.atMs])).toEqual([['nats-kill', 12_000], ['postgres-restart', 24_000], ['watch-cut', 33_000], ['nats-kill', 36_000]]);
    const [leader, other] = plan.filter((f) => f.kind === 'nats-kill');
    expect(leader).toEqual({ atMs: 12_000, kind: 'nats-kill', server: 'kube-leader', durationMs: 4000 });
    expect([0, 1, 2]).toContain(other?.server);
    const kills = plan.filter((f) => f.kind === 'kill');
    const single = planFaults(OPTS).filter((f) => f.kind === 'kill');
    for (const k of kills) expect(single).toContainEqual(k);
    // No replica dies near a server's loss: the stall measured there is the server's alone.
    for (const k of kills) for (const n of [leader, other]) expect(k.atMs <= (n?.atMs ?? 0) - NATS_QUIET_MS || k.atMs >= (n?.atMs ?? 0) + 4000 + NATS_QUIET_MS, `kill at ${k.atMs}`).toBe(true);
    expect(single.length - kills.length).toBeGreaterThan(0);
    expect(kills.length).toBeGreaterThanOrEqual(6);
  });

  it('needs someone to kill', () => expect(() => planFaults({ ...OPTS, victims: [] })).toThrow(/no replicas/));
});
