// The fault campaign (issue 9.6): the whole stack as child processes — several slicers, hints
// services and watchers, the publisher writing to cluster-sim, dry-run agents — on a churning
// simulated cluster, against a nats-server and a Postgres of its own, while replicas are killed
// with SIGKILL and restarted, NATS and Postgres are restarted, every watch is cut and one agent
// is cut off from NATS. Then churn stops, the stack settles, and chaosVerdict (checks.ts) judges:
// nothing lost, nothing duplicated, the three --verify checks clean, every agent resynced.
// In nats_cluster mode (`natsCluster`: 3) NATS is a cluster of three servers of its own with every
// stream and bucket replicated 3 times, and the NATS fault is a kill -9 of one server (the KUBE
// leader, then one drawn from the seed among the servers holding service connections:
// nats-victim.ts), started again after a pause; the campaign measures the
// longest stall across each, every service's reconnect, and that the restart is absorbed.

import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { LeaseState } from '@slicemesh/db';
import { loadKubeLogCuts, partitionScope, readLeases, readOutboxBatch } from '@slicemesh/db';
import { toDomain, WATCHED_KINDS } from '@slicemesh/kube';
import type { WatchedObject } from '@slicemesh/kube';
import type { LocalNatsCluster, LocalNatsServer } from '@slicemesh/nats';
import { isOwnSlice, jetstream, jetstreamManager, kubeSubjectOf, ownManagers, readStreamRange, roleSeedFile, startLocalNatsCluster, writeNatsAuth } from '@slicemesh/nats';
import { hintsLeaseGroup } from '@slicemesh/hints';
import { slicerLeaseGroup } from '@slicemesh/slicer';
import type { Component } from '../component.ts';
import type { ReplicaCounts } from '../replicas.ts';
import { replicaKindOf } from '../replicas.ts';
import { freshRunNames, newRunId } from '../run-names.ts';
import type { Env } from '../service-env.ts';
import type { Stack } from '../start-stack.ts';
import { startStack } from '../start-stack.ts';
import { verifyAll } from '../verify-all.ts';
import type { BoundedLogFigures, ChaosReport, ChaosVerdict, FaultRecord, KubeLogEntry, OutboxEntry, SlicesEntry } from './checks.ts';
import { boundedLogLine, chaosVerdict, compareEffects, heldBy, lostEvents, takenOver } from './checks.ts';
import type { NatsKillFigures } from './nats-figures.ts';
import { pickNatsVictim } from './nats-victim.ts';
import { longestGap, natsStatusLines, reconnectOf, warnLineTimes } from './nats-figures.ts';
import type { PlannedFault } from './plan.ts';
import { NATS_QUIET_MS, planFaults } from './plan.ts';
import { chaosScenario } from './scenario.ts';
import type { OwnServer } from './servers.ts';
import { startOwnNats, startOwnPostgres } from './servers.ts';
import type { TcpProxy } from './tcp-proxy.ts';
import { startTcpProxy } from './tcp-proxy.ts';


/** How far the slicers compacted KUBE during the run: the partitions cut and what the stream still holds. */
async function boundedLogFigures(s: Stack, partitions: number, snapshotEvery: number | undefined): Promise<BoundedLogFigures> {
  const cuts = await loadKubeLogCuts(s.db, CHAOS_CLUSTER);
  const info = await (await jetstreamManager(s.nc)).streams.info(s.run.names.kube);
  const firstKept = Array.from({ length: partitions }, (_, p) => cuts.get(partitionScope(p))).filter((x) => x !== undefined);
  return { ...(snapshotEvery !== undefined ? { snapshotEvery } : {}), replicas: info.config.num_replicas ?? 1, partitions, firstKept, kubeMessages: info.state.messages, kubeSequences: info.state.last_seq };
}

export interface CampaignOptions {
  readonly seed: string;
  /** The slicers' SNAPSHOT_EVERY (300 in CI, 1500 in the full run: the log is compacted during the run, and must be); unset: the slicers' default, not reached. */
  readonly snapshotEvery?: number;
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
  /**
   * nats_cluster mode: this many clustered nats-servers (3 or more) instead of one, every stream and
   * bucket with 3 replicas, and kill -9 of one server at a time instead of the NATS restart (no
   * agent cut: the cluster tells a client every server, so a proxy cannot cut it off).
   */
  readonly natsCluster?: number;
  /** nats_cluster mode: how long a killed server stays down, ms. Defaults to 5000. */
  readonly natsDownMs?: number;
  /** nats_cluster mode: the longest stall allowed across a nats-kill, ms (one summary interval). Defaults to 5000. */
  readonly stallBarMs?: number;
  /** nats_cluster mode: a kill of the KUBE leader may also stall up to its election time plus this (unset: the bar alone). */
  readonly stallBeyondElectionMs?: number;
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
  snapshotEvery: 1500,
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
  snapshotEvery: 300,
};

/**
 * The CI version on a 3-server NATS cluster (test/chaos/chaos.nats-cluster.e2e.test.ts). Its stall
 * bar is 12 s, not the issue's 5 s: nats-server 2.9 elects a new stream leader 2 to 5 s after the
 * old one stops sending heartbeats (raft election timeout, not configurable; 4.3-7.7 s seen on a
 * loaded 2-core machine), and the clients' retries add ~1-2 s more. 12 s still fails a stall that
 * is not the election's (a slicer lease rebalance meeting the loss: 16.9 and 22.6 s seen).
 * A kill of the KUBE leader may also stall up to its new leader's election plus 3 s (one
 * election took 12.41 s here): what fails is a stall that outlasts the server's own election.
 * `npm run chaos -- --nats-cluster` keeps 5 s and reports the misses. A 40 s fault phase keeps
 * it within the e2e project's 3 minutes on a loaded machine (the 50 s one ran 170 s and over).
 */
export const CI_NATS_CLUSTER_CAMPAIGN: Omit<CampaignOptions, 'log'> = { ...CI_CAMPAIGN, seed: 'chaos-ci-nats', faultPhaseMs: 40_000, natsCluster: 3, stallBarMs: 12_000, stallBeyondElectionMs: 3000 };

export interface CampaignResult {
  readonly verdict: ChaosVerdict;
  readonly report: ChaosReport;
  /** The temporary directory (logs of every component, the servers' data); removed when the campaign passed unless keepDir. */
  readonly dir: string;
}

/** What the locked-down NATS refused, read from every component's log: `<component>: <refusal>`, once each. */
function refusalsIn(logDir: string): string[] {
  const found = new Set<string>();
  if (!existsSync(logDir)) return [];
  for (const file of readdirSync(logDir)) {
    for (const m of readFileSync(join(logDir, file), 'utf8').matchAll(/(Permissions Violation|Authorization Violation)[^"\\]*(?:\\"[^"\\]*\\")?/g)) found.add(`${file.replace(/\.log$/, '')}: ${m[0]}`);
  }
  return [...found].sort();
}

/** The campaign's cluster id: subjects, keys and the NATS permissions' scope. */
const CHAOS_CLUSTER = 'chaos';
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
    out.push({ seq: m.seq, subject: m.subject, deleted: body.type === 'Deleted.v1', uid: meta.uid ?? '', resourceVersion: meta.resourceVersion ?? '', timeMs: Date.parse(m.time) });
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
      out.push({ seq: m.seq, msgId: m.header?.get('Nats-Msg-Id') ?? '', subject: m.subject, reconcileID, timeMs: m.time.getTime() });
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

/** A nats-kill as it happened: epoch ms of the kill and the restart, and the cluster's answers. */
interface NatsKillRecord {
  readonly server: string;
  readonly wasKubeLeader: boolean;
  readonly atMs: number;
  readonly killedAt: number;
  restartedAt?: number;
  leaderElectedS?: number;
  absorbedS?: number;
}

/** Within `ms`, or rejects: a stream info request to a cluster losing a server may hang until its own timeout. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms`)))]);
}

/** True when the stream has a leader and every replica of its group is current and online. */
async function allCurrent(stack: Stack, stream: string, replicas: number): Promise<boolean> {
  const c = (await within(stack.jsm.streams.info(stream), 2000)).cluster;
  const peers = c?.replicas ?? [];
  return c?.leader !== undefined && peers.length === replicas - 1 && peers.every((p) => p.current && !p.offline);
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
  let cluster: LocalNatsCluster | undefined;
  const natsKills: NatsKillRecord[] = [];
  const natsReplicas = o.natsCluster !== undefined && o.natsCluster > 1 ? 3 : 1;
  let churnStoppedAt = 0;
  let pg: OwnServer | undefined;
  let proxy: TcpProxy | undefined;
  let stack: Stack | undefined;
  let report: ChaosReport | undefined;
  try {
    // NATS locked down as deployed: a key per role, each service connecting with its own.
    const run = freshRunNames(newRunId(Date.now()));
    const keys = writeNatsAuth({ dir: join(dir, 'nats-auth'), scope: { cluster: CHAOS_CLUSTER, names: run.names } });
    const auth = { block: readFileSync(keys.authConf, 'utf8'), seedFile: roleSeedFile(keys.dir, 'admin') };
    let natsUrl: string;
    if (natsReplicas > 1) {
      cluster = await startLocalNatsCluster({ size: o.natsCluster as number, dir: join(dir, 'nats-cluster'), log: o.log, authorization: auth });
      await cluster.waitForMeta(60_000);
      natsUrl = cluster.url;
      o.log(`own NATS cluster of ${cluster.servers.length}: ${natsUrl}, every stream and bucket with ${natsReplicas} replicas`);
    } else {
      nats = await startOwnNats(join(dir, 'nats-server'), o.log, auth);
      proxy = await startTcpProxy(nats.port);
      natsUrl = nats.url;
    }
    pg = await startOwnPostgres(join(dir, 'postgres'), o.log);
    const scenarioFile = join(dir, 'scenario.yaml');
    // Long enough never to end by itself: the campaign stops the churn when the fault phase ends.
    writeFileSync(scenarioFile, chaosScenario({ seed: o.seed, durationSeconds: Math.ceil(((o.faultPhaseMs + 600_000) * o.speed) / 1000), podsPerSecond: o.podsPerSecond }));
    const cutAgentPort = proxy?.port;
    let cutAgent: string | undefined;
    const s = await startStack({
      natsUrl,
      natsAuthDir: keys.dir,
      natsReplicas,
      databaseUrl: pg.url,
      run,
      cluster: CHAOS_CLUSTER,
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
      // The first agent talks to NATS through the proxy that cuts it off. --snapshot-every makes
      // the slicers snapshot and compact the log under the faults: not by default, since the
      // replay from a snapshot does not yet match under replicas and faults (see docs/log.md).
      envOverrides: (name): Env | undefined => {
        if (name.startsWith('slicer') && o.snapshotEvery !== undefined) return { SNAPSHOT_EVERY: String(o.snapshotEvery) };
        if (!name.startsWith('agent/') || cutAgentPort === undefined) return undefined;
        cutAgent ??= name;
        return name === cutAgent ? { NATS_URL: `nats://127.0.0.1:${cutAgentPort}` } : undefined;
      },
    });
    stack = s;
    o.log(`stack starting: ${s.components().map((c) => c.name).join(' ')} (logs in ${join(dir, 'logs')})`);
    await s.ready;
    const sim = s.sim as ClusterSim;
    const victims = s.components().filter((c) => replicaKindOf(c.name) !== undefined).map((c) => c.name);
    const plan = planFaults({
      seed: o.seed, durationMs: o.faultPhaseMs, killEveryMs: o.killEveryMs, restartPauseMs: o.restartPauseMs, victims, agentCutMs: o.agentCutMs,
      ...(cluster !== undefined ? { natsServers: cluster.servers.length, natsDownMs: o.natsDownMs ?? 5000 } : {}),
    });
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

    let natsQuietUntil = 0;
    // kill -9 of one server of the cluster; in the background: the new KUBE leader (when the
    // leader went), the restart after the pause, and the time until every replica is current.
    const natsKill = async (f: PlannedFault, planned: number): Promise<void> => {
      const c = cluster as LocalNatsCluster;
      // No replica down or restarting first (at most 10 s): the stall measured is the server's
      // loss, not a watcher still restarting from an earlier kill.
      const waitFrom = Date.now();
      while (busy.size > 0 && Date.now() - waitFrom < 10_000) await sleep(100);
      const at = Date.now() - t0;
      if (at - planned > 500) o.log(`  (nats-kill ${((at - planned) / 1000).toFixed(1)} s late: waited for ${[...busy].join(', ') || 'the replicas'} to be back)`);
      natsQuietUntil = Date.now() + (f.durationMs ?? 5000) + NATS_QUIET_MS;
      const leader = await within(s.jsm.streams.info(s.run.names.kube), 2000).then((i) => i.cluster?.leader, () => undefined);
      let victim: LocalNatsServer;
      if (f.server === 'kube-leader') victim = c.servers.find((x) => x.name === leader) ?? (c.servers[0] as LocalNatsServer);
      else {
        const clients = await Promise.all(c.servers.map(async (x) => ({ name: x.name, clients: await x.clientNames() })));
        const pick = pickNatsVictim(f.server ?? 0, clients);
        victim = c.servers.find((x) => x.name === pick.name) as LocalNatsServer;
        if (pick.redirected) o.log(`  (the draw named ${c.servers[(f.server ?? 0) % c.servers.length]?.name}, which holds no service connection: killing ${pick.name} instead)`);
      }
      const rec: NatsKillRecord = { server: victim.name, wasKubeLeader: victim.name === leader, atMs: at, killedAt: Date.now() };
      await victim.kill('SIGKILL');
      natsKills.push(rec);
      faults.push({ atMs: at, kind: 'nats-kill', target: victim.name, ...(rec.wasKubeLeader ? { detail: 'KUBE leader' } : {}) });
      o.log(`[${(at / 1000).toFixed(1)}s] kill -9 nats-server ${victim.name}${rec.wasKubeLeader ? ' (leader of KUBE)' : leader === undefined ? ' (KUBE leader unknown)' : ` (KUBE leader: ${leader})`}; start it again in ${(f.durationMs ?? 5000) / 1000} s`);
      background.push(
        (async () => {
          // The new leader: when it was elected (leader_since, where the server tells; else when seen).
          while (rec.wasKubeLeader && Date.now() - rec.killedAt < 30_000) {
            const c = await within(s.jsm.streams.info(s.run.names.kube), 1000).then((i) => i.cluster, () => undefined);
            if (c?.leader !== undefined && c.leader !== victim.name) {
              const since = c.leader_since === undefined ? Number.NaN : Date.parse(c.leader_since);
              rec.leaderElectedS = ((Number.isFinite(since) && since > rec.killedAt ? since : Date.now()) - rec.killedAt) / 1000;
              o.log(`  KUBE has a new leader, ${c.leader}, ${rec.leaderElectedS.toFixed(2)} s after the kill`);
              return;
            }
            await sleep(100);
          }
        })(),
      );
      background.push(
        (async () => {
          const restartAt = rec.killedAt + (f.durationMs ?? 5000);
          await sleep(Math.max(0, restartAt - Date.now()));
          try {
            await victim.start();
          } catch (e) {
            errors.push(`restart of nats-server ${victim.name} failed: ${message(e)}`);
            return;
          }
          rec.restartedAt = Date.now();
          const streams = [s.run.names.kube, s.run.names.slices];
          while (Date.now() - rec.restartedAt < 60_000) {
            const ok = await Promise.all(streams.map((x) => allCurrent(s, x, natsReplicas))).then((xs) => xs.every(Boolean), () => false);
            if (ok) {
              rec.absorbedS = (Date.now() - rec.restartedAt) / 1000;
              o.log(`  nats-server ${victim.name} back; every replica of KUBE and SLICES current ${rec.absorbedS.toFixed(2)} s after its restart`);
              return;
            }
            await sleep(250);
          }
          o.log(`  nats-server ${victim.name}: replicas of KUBE and SLICES not all current 60 s after its restart`);
        })(),
      );
    };

    const execute = async (f: PlannedFault): Promise<void> => {
      const at = Date.now() - t0;
      switch (f.kind) {
        case 'kill': {
          if (Date.now() < natsQuietUntil) {
            o.log(`[${(at / 1000).toFixed(1)}s] (no kill of ${f.target ?? '?'}: a NATS server was lost less than ${NATS_QUIET_MS / 1000} s ago)`);
            return;
          }
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
        case 'nats-kill':
          await natsKill(f, at);
          return;
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
    churnStoppedAt = Date.now();
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
      const settledAt = await s.settled({ timeoutMs: o.settleTimeoutMs });
      // Counts the server could not give leave the settle to the quiet period alone: say so, the checks' failures may trace back to it.
      const unknown = settledAt.backbone.unknown ?? [];
      o.log(`settled${unknown.length > 0 ? ` (not counted by the server: ${unknown.join(', ')}${settledAt.backbone.missingConsumer !== undefined ? `; ${settledAt.backbone.missingConsumer}` : ''})` : ''}`);
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
    const boundedLog = await boundedLogFigures(s, o.partitions, o.snapshotEvery);
    o.log(`  ${boundedLogLine(boundedLog)}`);
    const natsFigures = cluster === undefined ? undefined : natsKillFigures(s, natsKills, log, slices, churnStoppedAt, join(dir, 'logs'));
    for (const k of natsFigures ?? []) {
      const rec = k.services.filter((x) => x.reconnectS !== undefined);
      o.log(`  nats-kill of ${k.server}${k.wasKubeLeader ? ' (KUBE leader)' : ''}: longest stall ${Object.entries(k.stallS).map(([n, x]) => `${n} ${x.toFixed(2)} s`).join(', ')}; ${rec.length} services reconnected (${rec.map((x) => `${x.component} ${(x.reconnectS as number).toFixed(2)} s`).join(', ') || 'none'})`);
    }
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
      boundedLog,
      ...(natsFigures !== undefined && cluster !== undefined ? { natsCluster: { servers: cluster.servers.length, kills: natsFigures, stallBarS: (o.stallBarMs ?? 5000) / 1000, ...(o.stallBeyondElectionMs !== undefined ? { beyondElectionS: o.stallBeyondElectionMs / 1000 } : {}) } } : {}),
    };
  } catch (e) {
    errors.push(`aborted: ${message(e)}`);
  } finally {
    await stack?.close().catch((e: unknown) => errors.push(`closing the stack: ${message(e)}`));
    await proxy?.close().catch(() => {});
    await nats?.stop().catch(() => {});
    await cluster?.stop().catch(() => {});
    await pg?.stop().catch(() => {});
  }
  // After the stack closed: what a service did while stopping counts too.
  if (report !== undefined) report = { ...report, permissionViolations: refusalsIn(join(dir, 'logs')) };
  report ??= {
    events: 0, eventsUnderFaults: 0, faultPhaseMs: 0, faults, crashes, takeoversS: takeovers, hintsTakeoversS: hintsTakeovers, takeoversMissing, lost: [], duplicated: [],
    verify: { replay: false, truth: false, agents: false, problems: [] }, minEvents: o.minEvents, errors,
  };
  const verdict = chaosVerdict(report);
  if (verdict.ok && o.keepDir !== true) rmSync(dir, { recursive: true, force: true });
  return { verdict, report, dir };
}

/**
 * What each nats-kill did: the longest time without a stored message of KUBE and SLICES (the
 * server's timestamps; the KV buckets keep only the last value per key) from the kill until 5 s
 * after the restart, and each
 * service's reconnect from its log until the next kill (at most 60 s).
 */
function natsKillFigures(stack: Stack, kills: readonly NatsKillRecord[], kube: readonly KubeLogEntry[], slices: readonly SlicesEntry[], end: number, logDir: string): NatsKillFigures[] {
  const times: Record<string, number[]> = {
    KUBE: kube.map((m) => m.timeMs ?? 0).sort((a, b) => a - b),
    SLICES: slices.map((m) => m.timeMs ?? 0).sort((a, b) => a - b),
  };
  const logs = stack.components().map((c) => {
    const file = join(logDir, `${c.name.replace(/\//g, '-')}.log`);
    const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    return { component: c.name, status: natsStatusLines(text), warns: warnLineTimes(text) };
  });
  return kills.map((k, i) => {
    const to = (k.restartedAt ?? k.killedAt) + 5000;
    const until = Math.min(kills[i + 1]?.killedAt ?? Number.POSITIVE_INFINITY, k.killedAt + 60_000);
    const stallS = Object.fromEntries(Object.entries(times).map(([name, ts]) => [name, longestGap(ts, k.killedAt, Math.min(to, end), end) / 1000]));
    return {
      server: k.server,
      wasKubeLeader: k.wasKubeLeader,
      atMs: k.atMs,
      ...(k.leaderElectedS !== undefined ? { leaderElectedS: k.leaderElectedS } : {}),
      ...(k.absorbedS !== undefined ? { absorbedS: k.absorbedS } : {}),
      stallS,
      services: logs.map((l) => reconnectOf(l.component, l.status, l.warns, k.killedAt, until)),
    };
  });
}
