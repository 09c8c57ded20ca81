// The fault schedule of a campaign, decided up front from a seed so that a failing run can be
// played again: a kill -9 of a random replica every few seconds, and one each of the one-off
// faults at fixed points of the fault phase.

export type OneOffFault = 'nats-restart' | 'postgres-restart' | 'watch-cut' | 'agent-cut';

export interface PlannedFault {
  readonly atMs: number;
  /** `kill`: SIGKILL of one replica, restarted under its name after `pauseMs`. */
  readonly kind: 'kill' | OneOffFault;
  /** The replica killed (kills only). */
  readonly target?: string;
  /** Kill: the pause before its restart; agent-cut: how long the agent stays cut off. */
  readonly durationMs?: number;
}

export interface PlanOptions {
  readonly seed: string;
  /** Length of the fault phase, ms. */
  readonly durationMs: number;
  /** One kill every this many ms (jittered ±25 %). */
  readonly killEveryMs: number;
  /** Pause before the killed replica is restarted, ms. */
  readonly restartPauseMs: number;
  /** The replicas that may be killed (component names). */
  readonly victims: readonly string[];
  /** How long the cut agent stays cut off, ms. */
  readonly agentCutMs: number;
}

/** A small deterministic PRNG (mulberry32) seeded by a string. */
export function prng(seed: string): () => number {
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Kills spread over the phase (never the same replica twice in a row, none in its last
 * restart pause), the one-off faults at 20 % (NATS), 40 % (Postgres), 55 % (watch cut) and 65 %
 * (agent cut, which must end before the phase does); sorted by time.
 */
export function planFaults(o: PlanOptions): PlannedFault[] {
  if (o.victims.length === 0) throw new Error('no replicas to kill');
  const rnd = prng(o.seed);
  const out: PlannedFault[] = [];
  let last: string | undefined;
  for (let t = o.killEveryMs; t < o.durationMs - o.restartPauseMs; t += Math.round(o.killEveryMs * (0.75 + rnd() * 0.5))) {
    const choices = o.victims.length > 1 ? o.victims.filter((v) => v !== last) : o.victims;
    const target = choices[Math.floor(rnd() * choices.length)] as string;
    out.push({ atMs: t, kind: 'kill', target, durationMs: o.restartPauseMs });
    last = target;
  }
  const at = (f: number): number => Math.round(o.durationMs * f);
  out.push({ atMs: at(0.2), kind: 'nats-restart' });
  out.push({ atMs: at(0.4), kind: 'postgres-restart' });
  out.push({ atMs: at(0.55), kind: 'watch-cut' });
  out.push({ atMs: Math.min(at(0.65), Math.max(0, o.durationMs - o.agentCutMs)), kind: 'agent-cut', durationMs: o.agentCutMs });
  return out.sort((a, b) => a.atMs - b.atMs);
}
