// The fault campaign (issue 9.6): the whole stack as child processes — several slicers, hints
// services and watchers, the publisher writing to cluster-sim, dry-run agents — on a churning
// simulated cluster, against a nats-server and a Postgres of its own, while replicas are killed
// with SIGKILL and restarted, NATS and Postgres are restarted, every watch is cut and one agent
// is cut off from NATS. Then churn stops, the stack settles, and chaosVerdict (checks.ts) judges:
// nothing lost, nothing duplicated, the three --verify checks clean, every agent resynced.

import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { LeaseState } from '@slicemesh/db';
import { readLeases, readOutboxBatch } from '@slicemesh/db';
import { toDomain, WATCHED_KINDS } from '@slicemesh/kube';
import type { WatchedObject } from '@slicemesh/kube';
import { isOwnSlice, jetstream, kubeSubjectOf, ownManagers, readStreamRange } from '@slicemesh/nats';
import { hintsLeaseGroup } from '@slicemesh/hints';
import { slicerLeaseGroup } from '@slicemesh/slicer';
import type { Component } from '../component.ts';
import type { ReplicaCounts } from '../replicas.ts';
import { replicaKindOf } from '../replicas.ts';
import { freshRunNames, newRunId } from '../run-names.ts';
import type { Stack } from '../start-stack.ts';
import { startStack } from '../start-stack.ts';
import { verifyAll } from '../verify-all.ts';
import type { ChaosReport, ChaosVerdict, FaultRecord, KubeLogEntry, OutboxEntry, SlicesEntry } from './checks.ts';
import { chaosVerdict, compareEffects, heldBy, lostEvents, takenOver } from './checks.ts';
import type { PlannedFault } from './plan.ts';
import { planFaults } from './plan.ts';
import { chaosScenario } from './scenario.ts';
import type { OwnServer } from './servers.ts';
import { startOwnNats, startOwnPostgres } from './servers.ts';
import type { TcpProxy } from './tcp-proxy.ts';
import { startTcpProxy } from './tcp-proxy.ts';

export interface CampaignOptions {
  readonly seed: string;
  /** Wall time of churn under faults, ms. */
  readonly faultPhaseMs: number;
  /** Scenario speed and churn (pods replaced per second of cluster time). */
  readonly speed: number;
  readonly podsPerSecond: number;
  readonly killEveryMs: number;
  readonly restartPauseMs: number;
  /** How long the chosen agent is cut off from NATS, ms. */
  readonly agentCutMs: number;
  /** Replicas per service. */
  readonly replicas: ReplicaCounts;
  readonly partitions: number;
  /** The run fails below this many KUBE events. */
  readonly minEvents: number;
  /** How long the stack may take to settle after churn stops, ms. */
  readonly settleTimeoutMs: number;
  /** Keep the temporary directory (logs, data) even when the campaign passes. */
  readonly keepDir?: boolean;
  /** Child processes run the bundles in <builtRoot>/dist (npm run chaos builds first); default: this process's own form. */
  readonly builtRoot?: string;
  /** Progress lines (stderr in the CLI). */
  readonly log: (line: string) => void;
}

/** The full campaign of `npm run chaos`: ≥ 10k KUBE events, a kill every 4 s, a 30 s agent cut. */
export const FULL_CAMPAIGN: Omit<CampaignOptions, 'log'> = {
  seed: 'chaos',
  faultPhaseMs: 200_000,
  speed: 4,
  podsPerSecond: 6,
  killEveryMs: 4000,
  restartPauseMs: 1500,
  agentCutMs: 30_000,
  replicas: { slicer: 3, hints: 2, watcher: 2 },
  partitions: 6,
  minEvents: 10_000,
  settleTimeoutMs: 180_000,
};

/** The CI version (the e2e test): shorter, the same faults. */
export const CI_CAMPAIGN: Omit<CampaignOptions, 'log'> = {
  ...FULL_CAMPAIGN,
  seed: 'chaos-ci',
  faultPhaseMs: 50_000,
  podsPerSecond: 3,
  killEveryMs: 4000,
  agentCutMs: 10_000,
  minEvents: 1500,
  settleTimeoutMs: 90_000,
};

export interface CampaignResult {
  readonly verdict: ChaosVerdict;
  readonly report: ChaosReport;
  /** The temporary directory (logs of every component, the servers' data); removed when the campaign passed unless keepDir. */
  readonly dir: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The REPLICA_ID behind a component name (slicerEnv, hintsEnv: <kind>-<n>; one replica is named `slicer`, id slicer-0). */
export function replicaIdOf(component: string): string {
  return component === 'slicer' || component === 'hints' ? `${component}-0` : component;
}

async function readKubeLog(stack: Stack): Promise<KubeLogEntry[]> {
  const out: KubeLogEntry[] = [];
  for await (const m of readStreamRange(jetstream(stack.nc), stack.run.names.kube, { batch: 2000 })) {
    const body = m.data as { type?: string; object?: { metadata?: { uid?: string; resourceVersion?: string } } } | undefined;
    const meta = body?.object?.metadata;
    if (body === undefined || meta === undefined) continue;
    out.push({ seq: m.seq, subject: m.subject, deleted: body.type === 'Deleted.v1', uid: meta.uid ?? '', resourceVersion: meta.resourceVersion ?? '' });
  }
  return out;
}

/** subject → `<uid>@<rv>` of every object the API holds that the watcher publishes (our own slices left out). */
function apiState(sim: ClusterSim, stack: Stack): Map<string, string> {
  const out = new Map<string, string>();
  const layout = { partitions: stack.layout.partitions, prefix: stack.run.names.prefix };
  for (const kind of WATCHED_KINDS) {
    for (const raw of sim.store.list(kind)) {
      if (kind === 'EndpointSlice' && isOwnSlice(raw.metadata.labels, ownManagers())) continue;
      const obj: WatchedObject = toDomain(kind, raw, { maxObjectBytes: Number.MAX_SAFE_INTEGER });
      out.set(kubeSubjectOf(stack.layout.cluster, obj, layout), `${obj.metadata.uid}@${obj.metadata.resourceVersion}`);
    }
  }
  return out;
}

async function readOutbox(stack: Stack): Promise<OutboxEntry[]> {
  const out: OutboxEntry[] = [];
  let after: { txid: string; id: number } | null = null;
  for (;;) {
    const rows = await readOutboxBatch(stack.db, { after, limit: 2000 });
    for (const r of rows) out.push({ msgId: r.msgId, subject: r.subject });
    const last = rows[rows.length - 1];
    if (last === undefined) return out;
    after = { txid: last.txid, id: last.id };
  }
}

async function readSlices(stack: Stack): Promise<SlicesEntry[]> {
  const stream = stack.run.names.slices;
  const info = await stack.jsm.streams.info(stream);
  const seqs: number[] = [];
  for (let s = info.state.first_seq; info.state.messages > 0 && s <= info.state.last_seq; s++) seqs.push(s);
  const out: SlicesEntry[] = [];
  for (let i = 0; i < seqs.length; i += 64) {
    const chunk = await Promise.all(seqs.slice(i, i + 64).map((seq) => stack.jsm.streams.getMessage(stream, { seq }).catch(() => null)));
    for (const m of chunk) {
      if (m === null) continue;
      let reconcileID = '';
      try {
        reconcileID = String((m.json<{ reconcileID?: string }>()).reconcileID ?? '');
      } catch {
        reconcileID = `(not JSON, seq ${m.seq})`;
      }
      out.push({ seq: m.seq, msgId: m.header?.get('Nats-Msg-Id') ?? '', subject: m.subject, reconcileID });
    }
  }
  return out;
}

async function kubeSeq(stack: Stack): Promise<number> {
  for (let i = 0; ; i++) {
    try {
      return (await stack.jsm.streams.info(stack.run.names.kube)).state.last_seq;
    } catch (e) {
      if (i >= 50) throw e;
      await sleep(200);
    }
  }
}

/** Runs one campaign. Never throws for a failed check: the verdict says what failed. */
export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const dir = mkdtempSync(join(tmpdir(), 'slicemesh-chaos-'));
  chmodSync(dir, 0o755); // Postgres runs as the postgres user under it
  const errors: string[] = [];
  const faults: FaultRecord[] = [];
  const takeovers: number[] = [];
  const hintsTakeovers: number[] = [];
  const crashes: FaultRecord[] = [];
  let takeoversMissing = 0;
  let nats: OwnServer | undefined;
  let pg: OwnServer | undefined;
  let proxy: TcpProxy | undefined;
  let stack: Stack | undefined;
  let report: ChaosReport | undefined;
  try {
    nats = await startOwnNats(join(dir, 'nats-server'), o.log);
    pg = await startOwnPostgres(join(dir, 'postgres'), o.log);
    proxy = await startTcpProxy(nats.port);
    const scenarioFile = join(dir, 'scenario.yaml');
    // Long enough never to end by itself: the campaign stops the churn when the fault phase ends.
    writeFileSync(scenarioFile, chaosScenario({ seed: o.seed, durationSeconds: Math.ceil(((o.faultPhaseMs + 600_000) * o.speed) / 1000), podsPerSecond: o.podsPerSecond }));
    const run = freshRunNames(newRunId(Date.now()));
    const cutAgentPort = proxy.port;
    let cutAgent: string | undefined;
    const s = await startStack({
      natsUrl: nats.url,
      databaseUrl: pg.url,
      run,
      cluster: 'chaos',
      partitions: o.partitions,
      scenario: scenarioFile,
      speed: o.speed,
      agents: 'zone',
      publisherMode: 'write',
      processes: true,
      ...(o.builtRoot !== undefined ? { builtRoot: o.builtRoot } : {}),
      replicas: o.replicas,
      runDir: join(dir, 'run'),
      logDir: join(dir, 'logs'),
      logLevel: 'info',
      // The first agent talks to NATS through the proxy that cuts it off.
      envOverrides: (name) => {
        if (!name.startsWith('agent/')) return undefined;
        cutAgent ??= name;
        return name === cutAgent ? { NATS_URL: `nats://127.0.0.1:${cutAgentPort}` } : undefined;
      },
    });
    stack = s;
    o.log(`stack starting: ${s.components().map((c) => c.name).join(' ')} (logs in ${join(dir, 'logs')})`);
    await s.ready;
    const sim = s.sim as ClusterSim;
    const victims = s.components().filter((c) => replicaKindOf(c.name) !== undefined).map((c) => c.name);
    const plan = planFaults({ seed: o.seed, durationMs: o.faultPhaseMs, killEveryMs: o.killEveryMs, restartPauseMs: o.restartPauseMs, victims, agentCutMs: o.agentCutMs });
    o.log(`ready; fault phase of ${o.faultPhaseMs / 1000} s: ${plan.filter((f) => f.kind === 'kill').length} kills among ${victims.join(', ')}, then ${plan.filter((f) => f.kind !== 'kill').map((f) => `${f.kind} at ${f.atMs / 1000} s`).join(', ')}`);

    const seq0 = await kubeSeq(s);
    const t0 = Date.now();
    const busy = new Set<string>(); // replicas down or restarting
    const background: Promise<void>[] = [];
    const groups = { slicer: slicerLeaseGroup(s.layout.cluster), hints: hintsLeaseGroup(s.layout.cluster) };
    // Like a container runtime's restart policy: try again until the replica is up (a start while
    // NATS or Postgres is down fails fast by design).
    const restartLater = (c: Component, pauseMs: number): Promise<void> =>
      (async () => {
        await sleep(pauseMs);
        try {
          for (let attempt = 1; ; attempt++) {
            try {
              await c.restart();
              return;
            } catch (e) {
              if (attempt >= 20) {
                errors.push(`restart of ${c.name} failed ${attempt} times: ${message(e)}`);
                return;
              }
              o.log(`  restart of ${c.name} failed (${message(e).slice(0, 160)}); again in 1 s`);
              await sleep(1000);
            }
          }
        } finally {
          busy.delete(c.name);
        }
      })();
    // A child that exited by itself crashed: recorded, and restarted as a supervisor would.
    let supervising = true;
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const supervisor = (async () => {
      while (supervising) {
        for (const c of s.components()) {
          const pid = c.pid();
          if (busy.has(c.name) || c.isStopped() || pid === undefined || alive(pid)) continue;
          busy.add(c.name);
          crashes.push({ atMs: Date.now() - t0, kind: 'crash', target: c.name });
          o.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s] ${c.name} exited by itself (crash, see its log): restarting it`);
          background.push(restartLater(c, 1000));
        }
        await sleep(500);
      }
    })();
    const measureTakeover = (kind: 'slicer' | 'hints', victim: string, before: readonly LeaseState[], killedAt: number): Promise<void> =>
      (async () => {
        const deadline = killedAt + 60_000;
        while (Date.now() < deadline) {
          try {
            const now = await readLeases(s.db, groups[kind]);
            if (takenOver(before, victim, now)) {
              const secs = (Date.now() - killedAt) / 1000;
              (kind === 'slicer' ? takeovers : hintsTakeovers).push(secs);
              const by = [...new Set(now.filter((l) => before.some((b) => b.partition === l.partition)).map((l) => (l.holder === victim ? `${victim} (restarted)` : l.holder)))];
              o.log(`  takeover of ${victim}'s partitions ${before.map((b) => b.partition).join(',')} in ${secs.toFixed(2)} s by ${by.join(', ')}`);
              return;
            }
          } catch {
            // Postgres restarting: read again
          }
          await sleep(100);
        }
        takeoversMissing++;
        o.log(`  no takeover of ${victim}'s partitions within 60 s`);
      })();

    const execute = async (f: PlannedFault): Promise<void> => {
      const at = Date.now() - t0;
      switch (f.kind) {
        case 'kill': {
          // The planned replica, or the first other one that is up.
          const name = [f.target as string, ...victims].find((v) => !busy.has(v));
          if (name === undefined) return;
          const c = s.component(name);
          busy.add(name);
          const kind = replicaKindOf(name);
          let before: LeaseState[] = [];
          if (kind === 'slicer' || kind === 'hints') before = heldBy(await readLeases(s.db, groups[kind]).catch(() => []), replicaIdOf(name));
          const killedAt = Date.now();
          await c.kill('SIGKILL');
          faults.push({ atMs: at, kind: 'kill', target: name, ...(before.length > 0 ? { detail: `held partitions ${before.map((b) => b.partition).join(',')}` } : {}) });
          o.log(`[${(at / 1000).toFixed(1)}s] kill -9 ${name}${before.length > 0 ? ` (held partitions ${before.map((b) => b.partition).join(',')})` : ''}`);
          if (before.length > 0 && (kind === 'slicer' || kind === 'hints')) background.push(measureTakeover(kind, replicaIdOf(name), before, killedAt));
          background.push(restartLater(c, f.durationMs ?? o.restartPauseMs));
          return;
        }
        case 'nats-restart':
          o.log(`[${(at / 1000).toFixed(1)}s] kill -9 nats-server, start it again`);
          await (nats as OwnServer).restart(1000);
          faults.push({ atMs: at, kind: 'nats-restart', target: 'nats-server' });
          return;
        case 'postgres-restart':
          o.log(`[${(at / 1000).toFixed(1)}s] Postgres: immediate shutdown, start again`);
          await (pg as OwnServer).restart(1000);
          faults.push({ atMs: at, kind: 'postgres-restart', target: 'postgres' });
          return;
        case 'watch-cut': {
          o.log(`[${(at / 1000).toFixed(1)}s] POST /sim/compact: every watch gets 410`);
          const res = await fetch(`${sim.url}/sim/compact`, { method: 'POST' });
          if (!res.ok) errors.push(`POST /sim/compact answered ${res.status}`);
          await res.arrayBuffer();
          faults.push({ atMs: at, kind: 'watch-cut', target: 'cluster-sim' });
          return;
        }
        case 'agent-cut': {
          const ms = f.durationMs ?? o.agentCutMs;
          o.log(`[${(at / 1000).toFixed(1)}s] ${cutAgent ?? 'agent'} cut off from NATS for ${ms / 1000} s (TCP proxy drops and refuses its connections)`);
          faults.push({ atMs: at, kind: 'agent-cut', target: cutAgent ?? '?', detail: `${ms} ms` });
          background.push((proxy as TcpProxy).cut(ms).then(() => o.log(`  ${cutAgent ?? 'agent'} reconnected to NATS`)));
          return;
        }
      }
    };

    let lastStatus = 0;
    for (const f of plan) {
      while (Date.now() - t0 < f.atMs) {
        await sleep(Math.min(250, f.atMs - (Date.now() - t0)));
        if (Date.now() - lastStatus > 10_000) {
          lastStatus = Date.now();
          void kubeSeq(s).then((n) => o.log(`  … ${n} KUBE events`)).catch(() => {});
        }
      }
      try {
        await execute(f);
      } catch (e) {
        errors.push(`${f.kind}${f.target ? ` ${f.target}` : ''} failed: ${message(e)}`);
      }
    }
    while (Date.now() - t0 < o.faultPhaseMs) await sleep(250);
    sim.driver.stop(); // churn stops: nothing changes any more
    const faultPhaseMs = Date.now() - t0;
    const seq1 = await kubeSeq(s);
    o.log(`churn stopped after ${(faultPhaseMs / 1000).toFixed(1)} s: ${seq1} KUBE events (${seq1 - seq0} under faults); waiting for restarts and the settle`);

    // Until every restart is through (a restart may be waiting for NATS or Postgres).
    while (busy.size > 0) await sleep(250);
    supervising = false;
    await supervisor;
    await Promise.all(background);
    const readyBy = Date.now() + 90_000;
    for (const c of s.components()) {
      const left = readyBy - Date.now();
      const ok = await Promise.race([c.ready().then(() => true, () => false), sleep(Math.max(0, left)).then(() => false)]);
      if (!ok || !c.isReady()) errors.push(`${c.name} is not ready after the fault phase`);
    }
    try {
      await s.settled({ timeoutMs: o.settleTimeoutMs });
    } catch (e) {
      errors.push(`did not settle: ${message(e)}`);
    }
    const notSynced = s.components().filter((c) => c.name.startsWith('agent/') && !c.isReady()).map((c) => c.name);
    if (notSynced.length > 0) errors.push(`agents not resynced: ${notSynced.join(', ')}`);

    o.log('checking: the log against the API, the outbox against SLICES, replay, truth, agents');
    const [log, outbox, slices] = [await readKubeLog(s), await readOutbox(s), await readSlices(s)];
    const lost = lostEvents(log, apiState(sim, s));
    const effects = compareEffects(outbox, slices);
    const v = await verifyAll(s);
    for (const line of v.summary) o.log(`  ${line}`);
    report = {
      events: await kubeSeq(s),
      eventsUnderFaults: seq1 - seq0,
      faultPhaseMs,
      faults,
      crashes,
      takeoversS: takeovers,
      hintsTakeoversS: hintsTakeovers,
      takeoversMissing,
      lost: [...lost, ...effects.lost],
      duplicated: effects.duplicated,
      verify: { replay: v.replay, truth: v.truth, agents: v.agents, problems: v.problems },
      minEvents: o.minEvents,
      errors,
    };
  } catch (e) {
    errors.push(`aborted: ${message(e)}`);
  } finally {
    await stack?.close().catch((e: unknown) => errors.push(`closing the stack: ${message(e)}`));
    await proxy?.close().catch(() => {});
    await nats?.stop().catch(() => {});
    await pg?.stop().catch(() => {});
  }
  report ??= {
    events: 0, eventsUnderFaults: 0, faultPhaseMs: 0, faults, crashes, takeoversS: takeovers, hintsTakeoversS: hintsTakeovers, takeoversMissing, lost: [], duplicated: [],
    verify: { replay: false, truth: false, agents: false, problems: [] }, minEvents: o.minEvents, errors,
  };
  const verdict = chaosVerdict(report);
  if (verdict.ok && o.keepDir !== true) rmSync(dir, { recursive: true, force: true });
  return { verdict, report, dir };
}
