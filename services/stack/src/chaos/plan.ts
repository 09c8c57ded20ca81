// The fault schedule of a campaign, decided up front from a seed so that a failing run can be
// played again: a kill -9 of a random replica every few seconds, and one each of the one-off
// faults at fixed points of the fault phase. On a NATS cluster (nats_cluster mode) the NATS fault is
// a kill -9 of one server of the cluster, twice: first the leader of the KUBE stream, then a
// server drawn from the seed; each is started again after a pause.

export type OneOffFault = 'nats-restart' | 'nats-kill' | 'postgres-restart' | 'watch-cut' | 'agent-cut';

/** Which server a `nats-kill` takes down: the KUBE stream's leader when it happens, or the n-th server (0-based). */
export type NatsKillTarget = 'kube-leader' | number;

export interface PlannedFault {
  readonly atMs: number;
  /** `kill`: SIGKILL of one replica, restarted under its name after `pauseMs`. */
  readonly kind: 'kill' | OneOffFault;
  /** The replica killed (kills only). */
  readonly target?: string;
  /** Kill and nats-kill: the pause before its restart; agent-cut: how long the agent stays cut off. */
  readonly durationMs?: number;
  /** nats-kill only. */
  readonly server?: NatsKillTarget;
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
  /**
   * Servers of the campaign's NATS cluster; 1 or absent: one server (restarted once). With a
   * cluster, the NATS faults are two nats-kills and there is no agent cut: a client learns every
   * server of a cluster from the servers themselves, so a proxy in front of one cannot cut it off.
   */
  readonly natsServers?: number;
  /** nats-kill: how long the server stays down, ms. Defaults to 5000. */
  readonly natsDownMs?: number;
}

/** nats_cluster mode: no replica is killed this close to a nats-kill (before it, or after the server's restart). */
export const NATS_QUIET_MS = 5000;

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
 * (agent cut, which must end before the phase does); sorted by time. On a NATS cluster: a
 * nats-kill of the KUBE leader at 20 %, one of a server drawn from the seed at 60 %, no agent cut,
 * and no replica kill within NATS_QUIET_MS of a server's loss.
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
  const servers = o.natsServers ?? 1;
  if (servers > 1) {
    const down = o.natsDownMs ?? 5000;
    const natsKills: PlannedFault[] = [
      { atMs: at(0.2), kind: 'nats-kill', server: 'kube-leader', durationMs: down },
      { atMs: at(0.6), kind: 'nats-kill', server: Math.floor(rnd() * servers), durationMs: down },
    ];
    // No replica kill from NATS_QUIET_MS before a server's loss until NATS_QUIET_MS after its
    // restart: the stall measured across it is the server's, not two watchers down at once.
    const quiet = (t: number): boolean => natsKills.some((n) => t > n.atMs - NATS_QUIET_MS && t < n.atMs + down + NATS_QUIET_MS);
    out.splice(0, out.length, ...out.filter((f) => !quiet(f.atMs)), ...natsKills);
  } else {
    out.push({ atMs: at(0.2), kind: 'nats-restart' });
  }
  out.push({ atMs: at(0.4), kind: 'postgres-restart' });
  out.push({ atMs: at(0.55), kind: 'watch-cut' });
  if (servers <= 1) out.push({ atMs: Math.min(at(0.65), Math.max(0, o.durationMs - o.agentCutMs)), kind: 'agent-cut', durationMs: o.agentCutMs });
  return out.sort((a, b) => a.atMs - b.atMs);
}
