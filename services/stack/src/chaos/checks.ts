// The fault campaign's verdict, as pure functions of what it read at the end: the KUBE log
// against the API's final state (lost events), the outbox against SLICES (duplicated or lost
// effects), partition leases over time (takeover), and the report line and JSON.

import { supersedes } from '@slicemesh/model';
import type { LeaseState } from '@slicemesh/db';
import type { NatsKillFigures } from './nats-figures.ts';
import { RECONNECT_LINES_BAR, summarizeNatsKills } from './nats-figures.ts';

/** One KUBE message as the lost-events check needs it. */
export interface KubeLogEntry {
  readonly seq: number;
  readonly subject: string;
  readonly deleted: boolean;
  readonly uid: string;
  readonly resourceVersion: string;
  /** When the stream stored it (server time, ms). */
  readonly timeMs?: number;
}

/**
 * subject → `<uid>@<resourceVersion>` of every object the log says exists, folded as every
 * consumer folds KUBE (by resourceVersion: a newer version wins, a delete at the live version
 * wins, whatever arrives later and older is stale) — so a lagging watcher replica's late, older
 * copy does not count as the subject's state.
 */
export function foldByVersion(log: readonly KubeLogEntry[]): Map<string, string> {
  const top = new Map<string, KubeLogEntry>();
  for (const m of log) {
    const held = top.get(m.subject);
    if (held === undefined || supersedes({ resourceVersion: m.resourceVersion, deleted: m.deleted }, { resourceVersion: held.resourceVersion, deleted: held.deleted })) top.set(m.subject, m);
  }
  const out = new Map<string, string>();
  for (const [subject, m] of top) if (!m.deleted) out.set(subject, `${m.uid}@${m.resourceVersion}`);
  return out;
}

/**
 * Lost events: every object the API holds must be in the log at its final version, and every
 * object the log says exists must still be in the API. `api` maps subject → `<uid>@<rv>`.
 */
export function lostEvents(log: readonly KubeLogEntry[], api: ReadonlyMap<string, string>): string[] {
  const folded = foldByVersion(log);
  const problems: string[] = [];
  for (const [subject, want] of [...api].sort()) {
    const got = folded.get(subject);
    if (got !== want) problems.push(`${subject}: the API holds ${want}, the log ${got === undefined ? 'has no live version' : `ends at ${got}`}`);
  }
  for (const [subject, got] of [...folded].sort()) if (!api.has(subject)) problems.push(`${subject}: deleted in the API, the log still holds ${got}`);
  return problems;
}

/** One outbox row (the slicer's committed intent to publish). */
export interface OutboxEntry {
  readonly msgId: string;
  readonly subject: string;
}

/** One SLICES message with its de-duplication id and the reconcile it carries. */
export interface SlicesEntry {
  readonly seq: number;
  readonly msgId: string;
  readonly subject: string;
  readonly reconcileID: string;
  /** When the stream stored it (server time, ms). */
  readonly timeMs?: number;
}

export interface EffectsCheck {
  /** SLICES messages beyond one per outbox row: a repeated msg id, a repeated reconcile, one no row asked for. */
  readonly duplicated: string[];
  /** Outbox rows with no SLICES message. */
  readonly lost: string[];
}

/** Outbox rows and SLICES messages must match one to one (by msg id), each reconcile published once. */
export function compareEffects(outbox: readonly OutboxEntry[], slices: readonly SlicesEntry[]): EffectsCheck {
  const duplicated: string[] = [];
  const lost: string[] = [];
  const rows = new Map(outbox.map((r) => [r.msgId, r]));
  const byId = new Map<string, SlicesEntry>();
  const byReconcile = new Map<string, SlicesEntry>();
  for (const m of slices) {
    const first = byId.get(m.msgId);
    if (first !== undefined) duplicated.push(`SLICES seq ${m.seq}: msg id ${m.msgId} already stored at seq ${first.seq}`);
    else byId.set(m.msgId, m);
    const same = byReconcile.get(m.reconcileID);
    if (same !== undefined && first === undefined) duplicated.push(`SLICES seq ${m.seq}: reconcile ${m.reconcileID} already published at seq ${same.seq} (msg id ${same.msgId})`);
    else if (same === undefined) byReconcile.set(m.reconcileID, m);
    if (!rows.has(m.msgId)) duplicated.push(`SLICES seq ${m.seq}: msg id ${m.msgId} has no outbox row`);
  }
  for (const r of outbox) if (!byId.has(r.msgId)) lost.push(`outbox row ${r.msgId} (${r.subject}) never reached SLICES`);
  if (outbox.length !== rows.size) duplicated.push(`${outbox.length - rows.size} outbox rows share a msg id`);
  return { duplicated, lost };
}

/**
 * After `victim` was killed holding `before` (its live leases then): true once every one of those
 * partitions is live again under a new acquisition — another holder, or the victim restarted
 * (same name, a higher token).
 */
export function takenOver(before: readonly LeaseState[], victim: string, now: readonly LeaseState[]): boolean {
  return before.every((b) => {
    const n = now.find((x) => x.partition === b.partition);
    return n !== undefined && n.live && (n.holder !== victim || n.token > b.token);
  });
}

/** The partitions `victim` holds in `leases`. */
export function heldBy(leases: readonly LeaseState[], victim: string): LeaseState[] {
  return leases.filter((l) => l.live && l.holder === victim);
}

/** A fault the campaign injected. */
export interface FaultRecord {
  readonly atMs: number;
  readonly kind: 'kill' | 'nats-restart' | 'nats-kill' | 'postgres-restart' | 'watch-cut' | 'agent-cut' | 'crash';
  readonly target: string;
  readonly detail?: string;
}

export interface ChaosReport {
  /** KUBE messages stored (all of them; the last sequence). */
  readonly events: number;
  /** KUBE messages stored while faults were injected, and how long that phase lasted. */
  readonly eventsUnderFaults: number;
  readonly faultPhaseMs: number;
  readonly faults: readonly FaultRecord[];
  /** Components that exited by themselves (restarted by the campaign, as a supervisor would). */
  readonly crashes: readonly FaultRecord[];
  /** Slicer takeovers measured, seconds each. */
  readonly takeoversS: readonly number[];
  /** The same for the hints service's partitions (lease group hints/<cluster>). */
  readonly hintsTakeoversS: readonly number[];
  /** Slicer or hints kills whose takeover was never seen. */
  readonly takeoversMissing: number;
  readonly lost: readonly string[];
  readonly duplicated: readonly string[];
  readonly verify: { readonly replay: boolean; readonly truth: boolean; readonly agents: boolean; readonly problems: readonly string[] };
  /** Below this many KUBE events the run did not load the pipeline enough to count. */
  readonly minEvents: number;
  /** Errors of the campaign itself (a restart that failed, a settle that timed out). */
  readonly errors: readonly string[];
  /** How far KUBE was compacted (absent when the campaign ended before it could be read). */
  readonly boundedLog?: BoundedLogFigures;
  /** What the locked-down NATS refused a service, `<component>: <refusal>` once each (absent when the logs were not read). */
  readonly permissionViolations?: readonly string[];
  /** nats_cluster mode: the servers of the campaign's NATS cluster, what each nats-kill did, and the longest stall allowed (s). */
  readonly natsCluster?: {
    readonly servers: number;
    readonly kills: readonly NatsKillFigures[];
    readonly stallBarS: number;
    /** When set, a kill of the KUBE leader may also stall up to its election time plus this (the CI version: the election is the server's, not ours). */
    readonly beyondElectionS?: number;
  };
}

/** The bounded log at the end of a campaign. */
export interface BoundedLogFigures {
  /** The slicers' SNAPSHOT_EVERY when the campaign set it: then a log of one replica must have been compacted. */
  readonly snapshotEvery?: number;
  /** KUBE's replicas: a replicated log must never be purged (libs/nats streamShape). */
  readonly replicas: number;
  readonly partitions: number;
  /** The first sequence kept of each partition that was compacted. */
  readonly firstKept: readonly number[];
  readonly kubeMessages: number;
  readonly kubeSequences: number;
}

/** `bounded log: 3 of 6 partitions compacted (first kept sequences …); KUBE holds 1767 messages of 4954 sequences`. */
export function boundedLogLine(b: BoundedLogFigures): string {
  const cut = b.firstKept;
  return `bounded log: ${cut.length} of ${b.partitions} partitions compacted${cut.length > 0 ? ` (first kept sequences ${cut.join(', ')})` : ''}; KUBE holds ${b.kubeMessages} messages of ${b.kubeSequences} sequences`;
}

export interface ChaosVerdict {
  readonly ok: boolean;
  /** Why not ok, one reason per line. */
  readonly failures: string[];
  readonly line: string;
  readonly json: ChaosJson;
}

export interface ChaosJson {
  readonly events: number;
  readonly kills: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly verify_replay: boolean;
  readonly verify_truth: boolean;
  readonly verify_agents: boolean;
  readonly max_takeover_s: number | null;
  readonly max_hints_takeover_s: number | null;
  readonly events_per_s: number;
  readonly faults: Readonly<Record<string, number>>;
  /** Components that crashed by themselves, per component name. */
  readonly crashes: Readonly<Record<string, number>>;
  /** nats_cluster mode only: servers of the cluster, the longest stall across a nats-kill, the services' reconnects (max, median, count), most reconnect lines of one service per kill, the new KUBE leader, the restart absorbed. */
  readonly nats_servers?: number;
  readonly max_stall_s?: number | null;
  readonly reconnect_s?: number | null;
  readonly reconnect_median_s?: number | null;
  readonly reconnects?: number;
  readonly reconnect_lines_max?: number;
  /** Most lines at warn or above one service wrote for one nats-kill, and which service. */
  readonly warn_lines_max?: number;
  readonly warn_lines_by?: string;
  readonly leader_elected_s?: number | null;
  readonly absorbed_s?: number | null;
  /** Partitions whose KUBE subjects were compacted, and the messages KUBE still held of all it was sent. */
  readonly compacted_partitions?: number;
  readonly kube_messages?: number;
  /** Distinct refusals of the locked-down NATS in the services' logs (0 expected). */
  readonly permission_violations?: number;
  readonly ok: boolean;
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** The verdict: every count 0, every check clean, every takeover seen, enough events, no campaign error. */
export function chaosVerdict(r: ChaosReport): ChaosVerdict {
  const failures: string[] = [];
  if (r.lost.length > 0) failures.push(`${r.lost.length} lost: ${r.lost.slice(0, 5).join('; ')}`);
  if (r.duplicated.length > 0) failures.push(`${r.duplicated.length} duplicated: ${r.duplicated.slice(0, 5).join('; ')}`);
  for (const check of ['replay', 'truth', 'agents'] as const) {
    if (!r.verify[check]) failures.push(`verify ${check} failed: ${r.verify.problems.filter((p) => p.startsWith(`${check}:`)).slice(0, 5).join('; ') || '(no detail)'}`);
  }
  if (r.takeoversMissing > 0) failures.push(`${r.takeoversMissing} slicer or hints kills without a takeover`);
  if (r.events < r.minEvents) failures.push(`only ${r.events} KUBE events (at least ${r.minEvents} wanted)`);
  for (const e of r.errors) failures.push(`campaign: ${e}`);
  const refused = r.permissionViolations ?? [];
  if (refused.length > 0) failures.push(`NATS refused ${refused.length} thing(s) a service does: ${refused.slice(0, 5).join('; ')}`);
  const b = r.boundedLog;
  if (b !== undefined && b.replicas > 1 && b.firstKept.length > 0) failures.push(`KUBE has ${b.replicas} replicas but was purged (partitions' first kept sequences ${b.firstKept.join(', ')})`);
  if (b?.snapshotEvery !== undefined && b.replicas === 1 && b.firstKept.length === 0) failures.push(`KUBE was never compacted (the slicers snapshot every ${b.snapshotEvery} messages of a partition)`);
  const nats = r.natsCluster === undefined ? undefined : { ...r.natsCluster, summary: summarizeNatsKills(r.natsCluster.kills) };
  if (nats !== undefined) {
    if (!nats.kills.some((k) => k.wasKubeLeader)) failures.push('no nats-kill took down the leader of KUBE');
    for (const k of nats.kills) {
      const [stream, worst] = Object.entries(k.stallS).sort((a, b) => b[1] - a[1])[0] ?? ['-', 0];
      const election = nats.beyondElectionS !== undefined && k.wasKubeLeader && k.leaderElectedS !== undefined ? k.leaderElectedS + nats.beyondElectionS : 0;
      const allowed = Math.max(nats.stallBarS, election);
      const why = election > nats.stallBarS ? `its new leader's election ${(k.leaderElectedS ?? 0).toFixed(2)} s + ${nats.beyondElectionS ?? 0} s` : 'one summary interval';
      if (worst > allowed) failures.push(`nats-kill of ${k.server}${k.wasKubeLeader ? ' (KUBE leader)' : ''}: ${stream} stored nothing for ${worst.toFixed(2)} s (at most ${Number(allowed.toFixed(2))} s, ${why})`);
      if (k.absorbedS === undefined) failures.push(`nats-kill of ${k.server}: its restart was never absorbed (KUBE and SLICES replicas not all current)`);
      for (const sv of k.services) {
        const lines = Math.max(sv.disconnectLines, sv.reconnectLines);
        if (lines > RECONNECT_LINES_BAR) failures.push(`nats-kill of ${k.server}: ${sv.component} logged ${sv.disconnectLines} disconnects and ${sv.reconnectLines} reconnects (once per connection expected, not per message)`);
      }
    }
  }
  const kills = r.faults.filter((f) => f.kind === 'kill').length;
  const faults: Record<string, number> = {};
  for (const f of r.faults) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
  const crashes: Record<string, number> = {};
  for (const c of r.crashes) crashes[c.target] = (crashes[c.target] ?? 0) + 1;
  const maxOf = (xs: readonly number[]): number | null => (xs.length === 0 ? null : round(Math.max(...xs)));
  const maxTakeover = maxOf(r.takeoversS);
  const maxHints = maxOf(r.hintsTakeoversS);
  const eps = r.faultPhaseMs > 0 ? round((r.eventsUnderFaults * 1000) / r.faultPhaseMs, 1) : 0;
  const ok = failures.length === 0;
  const json: ChaosJson = {
    events: r.events, kills, lost: r.lost.length, duplicated: r.duplicated.length,
    verify_replay: r.verify.replay, verify_truth: r.verify.truth, verify_agents: r.verify.agents,
    max_takeover_s: maxTakeover, max_hints_takeover_s: maxHints, events_per_s: eps, faults, crashes,
    ...(nats === undefined
      ? {}
      : {
          nats_servers: nats.servers, max_stall_s: nats.summary.maxStallS, reconnect_s: nats.summary.maxReconnectS, reconnect_median_s: nats.summary.medianReconnectS,
          reconnects: nats.summary.reconnects, reconnect_lines_max: nats.summary.maxReconnectLines,
          warn_lines_max: nats.summary.maxWarnLines, ...(nats.summary.noisiest !== undefined ? { warn_lines_by: nats.summary.noisiest } : {}), leader_elected_s: nats.summary.maxLeaderElectedS, absorbed_s: nats.summary.maxAbsorbedS,
        }),
    ...(b === undefined ? {} : { compacted_partitions: b.firstKept.length, kube_messages: b.kubeMessages }),
    ...(r.permissionViolations === undefined ? {} : { permission_violations: refused.length }),
    ok,
  };
  const natsPart =
    nats === undefined
      ? ''
      : `; NATS cluster of ${nats.servers}: max stall ${nats.summary.maxStallS ?? '-'} s (bar ${nats.stallBarS} s), reconnects ${nats.summary.reconnects} (max ${nats.summary.maxReconnectS ?? '-'} s, median ${nats.summary.medianReconnectS ?? '-'} s, ≤ ${nats.summary.maxReconnectLines} lines per service per kill; warnings ≤ ${nats.summary.maxWarnLines}${nats.summary.noisiest !== undefined ? ` (${nats.summary.noisiest})` : ''}), new KUBE leader ${nats.summary.maxLeaderElectedS ?? '-'} s, restart absorbed ${nats.summary.maxAbsorbedS ?? '-'} s`;
  const others = Object.entries(faults).filter(([k]) => k !== 'kill').map(([k, n]) => `${n} ${k}`).join(', ');
  const line = `chaos: ${ok ? 'PASS' : 'FAIL'} — ${r.events} KUBE events (${eps}/s under faults), ${kills} kills${others ? `, ${others}` : ''}; lost ${r.lost.length}, duplicated ${r.duplicated.length}; verify replay ${r.verify.replay ? 'ok' : 'FAIL'}, truth ${r.verify.truth ? 'ok' : 'FAIL'}, agents ${r.verify.agents ? 'ok' : 'FAIL'}; max takeover ${maxTakeover === null ? '-' : `${maxTakeover} s`}${maxHints === null ? '' : ` (hints ${maxHints} s)`}${natsPart}${b === undefined ? '' : `; log compacted in ${b.firstKept.length}/${b.partitions} partitions, ${b.kubeMessages} of ${b.kubeSequences} messages kept`}${r.permissionViolations === undefined ? '' : `; NATS locked down, ${refused.length} refusals`}${r.crashes.length > 0 ? `; ${r.crashes.length} crashes (${Object.entries(crashes).map(([k, n]) => `${k} ×${n}`).join(', ')})` : ''}`;
  return { ok, failures, line, json };
}
