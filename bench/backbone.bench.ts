// Backbone section: the event pipeline cluster-sim → watcher → slicer → hints → KV views on
// this machine, next to the raw rates of what it is built on, measured in the same run:
// JetStream publish (async and one ack at a time, 300-byte messages) and Postgres (batched
// multi-row inserts of 500-byte JSONB rows, and one-row transactions).
//
// The services run as deployed: startStack (services/stack) starts the watcher, the slicer and
// the hints service each as its own child process (`node dist/<svc>.js`, as built for production,
// configured through environment variables), on fresh streams, buckets and schema
// (freshRunNames). cluster-sim and the measuring code stay in this process: the bench writes to
// cluster-sim's store, and reads only what an operator sees from outside: NATS (KUBE and SLICES
// subjects, the views bucket), each service's /metrics, and /proc/<pid>/status of its process.
// The services' logs go to files in a temporary directory (printed on stderr, kept afterwards).
//
// Figures, each with its target where it has one (see summary.ts):
// - a 100k-endpoint Service (20k with --quick): the services start on a cluster without its pods,
//   then the pods are created and flow through the watch into KV views (RSS of the three service
//   processes before and after, per 100k pods); then one pod change at a time: the slicer's and
//   the hints service's reconcile time (deltas of the _sum/_count of their duration histograms,
//   scraped from /metrics), then a slicer restart (stopped, pods changed, started again) timed
//   to ready with all of it behind it;
// - a cluster of many small services: cold start, a burst of 5000 pod changes (store write →
//   KV view p99; KUBE events/s, the pipeline's rate at saturation, against raw JetStream async
//   publish), paced changes at 25/50/100/s and a sustained 500/s for 60 s.
// Every run uses isolated streams, buckets and a fresh schema, all removed afterwards; every
// child process is stopped at the end, when a phase fails, and on SIGINT/SIGTERM.
// Needs NATS_URL / DATABASE_URL (local defaults). BENCH_LOG_LEVEL sets the services' log level
// (default info); BENCH_LARGE_PODS=N sizes the large Service; BENCH_BACKBONE_PHASES=large (or
// many) runs that phase only, its figures alone (the others are reported missing). Long waits
// print a progress line on stderr.

import { mkdtemp, readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { createDb } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_ZONE } from '@slicemesh/model';
import { connectNats, kvWatchJson, openKv, pendingCount, sumCounts, zoneViewsFilter } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { kubeKindFilter, slicesFilter } from '@slicemesh/contracts';
import { endpointsOfText } from './endpoints-scan.ts';
import { LOG_LEVELS, REPO_ROOT, consumersOf, deleteRunState, freshRunNames, newRunId, startStack } from '@slicemesh/stack';
import type { LogLevel, Stack } from '@slicemesh/stack';
import { buildDist } from '../scripts/build.ts';
import { fmtMs, printTable, sampleMemory } from './harness.ts';
import type { FloorMode, FloorRun } from './ingest-floor-run.ts';
import { FLOOR_SIM, floorPercentiles, runIngestFloor } from './ingest-floor-run.ts';
import type { CpuSample } from './proc-cpu.ts';
import { cpuMsOf, cpuSpent, natsServerPid, ownCpuMs, postgresCpuMs } from './proc-cpu.ts';
import type { FigureKey, Figures, HistogramTotals, MetricValue, Target } from './summary.ts';
import {
  TARGETS, censoredPercentile, emptyFigures, histogramDelta, histogramTotals, median, mibPer100kPods, parseExposition, percentile, phasesWanted, ratio, verdict, vmRssBytes,
} from './summary.ts';

const CLUSTER = 'bench';
const NAMESPACES = 8;
const PARTITIONS = 4;
const NODES = 30;
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const DEFAULT_NATS = 'nats://127.0.0.1:4222';
const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const SLICER_RECONCILE = 'slicemesh_slicer_reconcile_duration_seconds';
const SLICER_RECONCILES = 'slicemesh_slicer_reconciles_total';
const SLICER_OUTBOX_LAG = 'slicemesh_slicer_outbox_lag_rows';
const HINTS_RECONCILE = 'slicemesh_hints_reconcile_duration_seconds';
/** Rate of the sustained run, changes/s. */
const SUSTAINED_RATE = 500;

type Row = [string, string, string?];
/** The services run as deployed: the bundles `npm run build` writes, built once per bench run. */
let distBuilt: Promise<string> | undefined;
const built = (): Promise<string> => (distBuilt ??= buildDist().then(() => REPO_ROOT));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const perSecond = (n: number, ms: number) => (n * 1000) / ms;
const fmtRate = (r: number | null) => (r == null || !Number.isFinite(r) ? 'n/a' : `${Math.round(r).toLocaleString('en-US')}/s`);
const rate = (n: number, ms: number) => fmtRate(perSecond(n, ms));
const pct = (r: number | null) => (r == null || !Number.isFinite(r) ? 'n/a' : `${(r * 100).toFixed(r < 0.1 ? 2 : 1)}%`);
const times = (r: number | null) => (r == null ? 'n/a' : `${r.toFixed(2)}x`);
const fmtMiB = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const errText = (err: unknown): string => (err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));
const progress = (line: string) => process.stderr.write(`backbone: ${line}\n`);

/** What one run of the section found: the figures, why some are missing, and the printed rows. */
class Results {
  readonly figures: Figures = emptyFigures();
  readonly reasons: Partial<Record<FigureKey, string>> = {};
  /** Exact (false) or only a lower bound (true), for percentiles over changes that never arrived. */
  readonly lowerBound: Partial<Record<FigureKey, boolean>> = {};
  readonly raw = { jsAsync: null as number | null, jsAck: null as number | null, pgBatch: null as number | null, pgTx: null as number | null };
  /** Labels of the figures (sizes differ with --quick). */
  readonly labels: Partial<Record<FigureKey, string>> = {};
  /** The burst through the ingest floor's bare clients (ingestFloor), by mode. */
  readonly floor = new Map<FloorMode, FloorRun>();
  readonly rows: Row[] = [];

  set(key: FigureKey, value: number | null, reason?: string): void {
    this.figures[key] = value != null && Number.isFinite(value) ? value : null;
    if (this.figures[key] === null) this.missing(key, reason ?? 'not measured');
  }

  /** Records why `key` is missing, unless it has a value or an earlier reason. */
  missing(key: FigureKey, reason: string): void {
    if (this.figures[key] === null && this.reasons[key] === undefined) this.reasons[key] = reason;
  }
}

// ---- process memory -----------------------------------------------------------------------

/** V8's collector, reachable without --expose-gc on the command line (npm run bench cannot pass it). */
const gc = ((): (() => void) | undefined => {
  try {
    setFlagsFromString('--expose_gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
})();

/** RSS and heap after a full collection, so deltas measure what is held, not garbage. */
async function settledMemory(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    gc?.();
    await sleep(50);
  }
  sampleMemory();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}

// ---- raw rates --------------------------------------------------------------------------

async function unreachable(natsUrl: string, pgUrl: string): Promise<string | null> {
  try {
    await (await connectNats({ url: natsUrl, name: 'bench-probe', timeoutMs: 2000 })).close();
  } catch (err) {
    return `NATS unreachable at ${natsUrl} (${errText(err)})`;
  }
  try {
    await (await createDb({ url: pgUrl, max: 1 })).close();
  } catch (err) {
    return `Postgres unreachable at ${pgUrl} (${errText(err)})`;
  }
  return null;
}

async function rawJetStream(js: JetStreamFixture, quick: boolean, res: Results): Promise<Row[]> {
  const stream = `BENCHRAW_${js.id}`;
  const subject = `braw${js.id}.m`;
  await js.jsm.streams.add({ name: stream, subjects: [`braw${js.id}.>`] });
  try {
    const payload = new TextEncoder().encode('x'.repeat(300));
    const n = quick ? 5000 : 20_000;
    let t = performance.now();
    await Promise.all(Array.from({ length: n }, () => js.js.publish(subject, payload)));
    const asyncMs = performance.now() - t;
    const m = quick ? 1000 : 3000;
    t = performance.now();
    for (let i = 0; i < m; i++) await js.js.publish(subject, payload);
    const ackMs = performance.now() - t;
    res.raw.jsAsync = perSecond(n, asyncMs);
    res.raw.jsAck = perSecond(m, ackMs);
    res.set('raw_publish_per_s', res.raw.jsAsync);
    return [
      [`JetStream async publish, ${n} x 300 B`, rate(n, asyncMs), `${fmtMs(asyncMs)} (file storage, all in flight)`],
      [`JetStream publish awaiting each ack, ${m} x 300 B`, rate(m, ackMs), fmtMs(ackMs)],
    ];
  } finally {
    await js.jsm.streams.delete(stream);
  }
}

async function rawPostgres(db: TestDb, quick: boolean, res: Results): Promise<Row[]> {
  await sql`create table bench_rows (id bigint primary key, body jsonb not null)`.execute(db.db);
  const body = (i: number) => JSON.stringify({ id: i, kind: 'Pod', note: 'y'.repeat(460) });
  const n = quick ? 5000 : 20_000;
  const batch = 1000;
  let t = performance.now();
  for (let from = 0; from < n; from += batch) {
    const values = Array.from({ length: batch }, (_, k) => sql`(${from + k}, ${body(from + k)}::jsonb)`);
    await sql`insert into bench_rows (id, body) values ${sql.join(values)}`.execute(db.db);
  }
  const batchMs = performance.now() - t;
  const m = quick ? 500 : 2000;
  t = performance.now();
  for (let i = 0; i < m; i++) {
    await db.db.transaction().execute(async (tx) => {
      await sql`insert into bench_rows (id, body) values (${n + i}, ${body(i)}::jsonb) on conflict (id) do update set body = excluded.body`.execute(tx);
    });
  }
  const txMs = performance.now() - t;
  res.raw.pgBatch = perSecond(n, batchMs);
  res.raw.pgTx = perSecond(m, txMs);
  return [
    [`Postgres multi-row insert, ${n} x ~500 B JSONB (batches of ${batch})`, rate(n, batchMs), fmtMs(batchMs)],
    [`Postgres one upsert per transaction, ${m} sequential`, rate(m, txMs), fmtMs(txMs)],
  ];
}

// ---- the cluster --------------------------------------------------------------------------

interface BenchPod {
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
}

function conditions(ready: boolean, at: string) {
  const s = ready ? 'True' : 'False';
  return [{ type: 'ContainersReady', status: s, lastTransitionTime: at }, { type: 'Ready', status: s, lastTransitionTime: at }];
}

interface SeedOptions {
  readonly services: number;
  /** Services with topology-mode Auto. */
  readonly auto: (service: number) => boolean;
}

interface BenchService {
  readonly namespace: string;
  readonly app: string;
}

/** Writes nodes, namespaces and the services (no pods yet) straight into the store. */
function seedServices(sim: ClusterSim, o: SeedOptions): BenchService[] {
  for (let i = 0; i < NODES; i++) {
    const zone = ZONES[i % ZONES.length] ?? 'zone-a';
    sim.store.create('Node', {
      apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}`, labels: { [LABEL_ZONE]: zone } },
      status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `172.18.0.${10 + i}` }] },
    });
  }
  for (let n = 0; n < NAMESPACES; n++) sim.store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  const services: BenchService[] = [];
  for (let s = 0; s < o.services; s++) {
    const namespace = `ns-${s % NAMESPACES}`;
    const app = `svc-${s}`;
    sim.store.create('Service', {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: app, namespace, ...(o.auto(s) ? { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } } : {}) },
      spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    services.push({ namespace, app });
  }
  return services;
}

/** Writes `podsPerService` ready pods of each service straight into the store (once per cluster: IPs start at 10.64.0.1); returns them in service-major order. */
function seedPods(sim: ClusterSim, services: readonly BenchService[], podsPerService: number): BenchPod[][] {
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const pods: BenchPod[][] = [];
  let ipIndex = 0;
  for (const { namespace, app } of services) {
    const mine: BenchPod[] = [];
    for (let p = 0; p < podsPerService; p++) {
      const i = ++ipIndex;
      const ip = `10.${64 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
      const node = `node-${i % NODES}`;
      sim.store.create('Pod', {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: `${app}-${p}`, namespace, labels: { app } },
        spec: { nodeName: node, containers: [{ name: 'main', ports: [{ containerPort: 8080, protocol: 'TCP' }] }] },
        status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: conditions(true, at) },
      });
      mine.push({ namespace, name: `${app}-${p}`, ip });
    }
    pods.push(mine);
  }
  return pods;
}

function setReady(sim: ClusterSim, pod: BenchPod, ready: boolean): void {
  const cur = sim.store.get('Pod', pod.namespace, pod.name) as KubeObj;
  const status = cur['status'] as Record<string, unknown>;
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  sim.store.update('Pod', { ...cur, status: { ...status, conditions: conditions(ready, at) } }, { scope: 'status' });
}

// ---- following changes through the pipeline ----------------------------------------------

interface Pending {
  readonly ready: boolean;
  readonly at: number;
  /** When the watcher published it to KUBE, and when the slicer's relay published it to SLICES. */
  kube?: number;
  slices?: number;
}

/** One change's latency from the store write, in total and per stage. */
interface Sample {
  readonly total: number;
  readonly watcher: number;
  readonly slicer: number;
  readonly hints: number;
}

/**
 * Resolves expectations "pod ip shows ready=x" from three vantage points: the KUBE and SLICES
 * subjects (core subscriptions see every publish) and the unfiltered view ('_' holds every
 * endpoint), so each latency splits into the watcher, slicer and hints stages.
 */
class ChangeTracker {
  readonly #pending = new Map<string, Pending>();
  readonly #ready = new Map<string, boolean>();
  #readyN = 0;
  samples: Sample[] = [];
  /** Lower bounds of the latency of changes not seen in KV: overwritten by a newer change, or given up on. */
  censored: number[] = [];
  puts = 0;
  superseded = 0;

  #stage(ip: string, ready: boolean, stage: 'kube' | 'slices'): void {
    const p = this.#pending.get(ip);
    if (p !== undefined && p.ready === ready && p[stage] === undefined) p[stage] = performance.now();
  }

  onKube(body: { kind?: string; object?: { status?: { podIP?: string; conditions?: { type: string; status: string }[] } } }): void {
    if (body.kind !== 'Pod') return;
    const ip = body.object?.status?.podIP;
    const ready = body.object?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if (ip !== undefined) this.#stage(ip, ready, 'kube');
  }

  /** A SliceChanged message's text: every endpoint's addresses and readiness (endpointsOfText). */
  onSlicesText(text: string): void {
    for (const [ip, ready] of endpointsOfText(text)) this.#stage(ip, ready, 'slices');
  }

  onView(slice: EndpointSlice): void {
    this.puts++;
    const now = performance.now();
    for (const ep of slice.endpoints) {
      const ready = ep.conditions?.ready !== false;
      for (const ip of ep.addresses) {
        const was = this.#ready.get(ip);
        if (was !== ready) {
          this.#ready.set(ip, ready);
          this.#readyN += (ready ? 1 : 0) - (was === true ? 1 : 0);
        }
        const p = this.#pending.get(ip);
        if (p === undefined || p.ready !== ready) continue;
        this.#pending.delete(ip);
        const kube = p.kube ?? now;
        const slices = p.slices ?? now;
        this.samples.push({ total: now - p.at, watcher: kube - p.at, slicer: slices - kube, hints: now - slices });
      }
    }
  }

  expect(ip: string, ready: boolean, at: number): void {
    const prev = this.#pending.get(ip);
    if (prev !== undefined) {
      this.superseded++;
      this.censored.push(at - prev.at);
    }
    this.#pending.set(ip, { ready, at });
  }

  /** Starts a new measurement: no samples, nothing pending (what still is counts as censored of the last one). */
  reset(): void {
    this.samples = [];
    this.censored = [];
    this.superseded = 0;
    this.#pending.clear();
  }

  /** Gives up on every pending change: each becomes a censored latency (its wait so far). */
  giveUp(): void {
    const now = performance.now();
    for (const p of this.#pending.values()) this.censored.push(now - p.at);
    this.#pending.clear();
  }

  isPending(ip: string): boolean {
    return this.#pending.has(ip);
  }

  /** Endpoints the views show ready; kept as a count, not scanned: the load phases ask it every 10 ms, and a scan of 100k entries each time took CPU the pipeline under test needs. */
  readyCount(): number {
    return this.#readyN;
  }

  get pending(): number {
    return this.#pending.size;
  }
}

const sortedField = (samples: readonly Sample[], field: keyof Sample) => samples.map((s) => s[field]).sort((a, b) => a - b);

/** Where the time went: p50 and p99 of each stage (the p99 names the stage that held the slowest changes). */
function stages(samples: readonly Sample[]): string {
  if (samples.length === 0) return 'no change reached KV';
  const at = (f: keyof Sample) => {
    const sorted = sortedField(samples, f);
    return `${fmtMs(percentile(sorted, 50))} / ${fmtMs(percentile(sorted, 99))}`;
  };
  return `p50 / p99 by stage: watcher ${at('watcher')}, slicer ${at('slicer')}, hints ${at('hints')}`;
}

/** p99 of the total latency, counting changes that never arrived (then possibly a lower bound). */
function p99Total(t: ChangeTracker): { value: number; lowerBound: boolean; text: string } {
  const c = censoredPercentile(t.samples.map((s) => s.total), t.censored, 99);
  return { ...c, text: Number.isFinite(c.value) ? `${c.lowerBound ? '≥ ' : ''}${fmtMs(c.value)}` : 'n/a' };
}

interface WaitProgress {
  readonly label: string;
  readonly status: () => string | Promise<string>;
  /** Seconds between progress lines. Defaults to 5. */
  readonly every?: number;
}

/** Polls `cond` until true or `timeoutMs`; with `progress`, prints a line on stderr every few seconds. */
async function waitFor(cond: () => boolean, timeoutMs: number, progressLine?: WaitProgress): Promise<boolean> {
  const t0 = performance.now();
  const until = t0 + timeoutMs;
  let nextLine = t0 + (progressLine?.every ?? 5) * 1000;
  while (!cond()) {
    const now = performance.now();
    if (now > until) return false;
    if (progressLine !== undefined && now >= nextLine) {
      nextLine = now + (progressLine.every ?? 5) * 1000;
      progress(`${progressLine.label}: ${await progressLine.status()} (${((now - t0) / 1000).toFixed(0)} s)`);
    }
    await sleep(10);
  }
  return true;
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} not done after ${ms / 1000} s`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- metrics, scraped from the services' /metrics ---------------------------------------

/** A scrape of one service: the exposition text and its series; null when it did not answer. */
interface Scrape {
  readonly text: string;
  readonly values: readonly MetricValue[];
}

/** Sum and count of histogram `name` (series carrying `labels`); null when the service does not expose it. */
function histogramOf(scrape: Scrape | null, name: string, labels?: Record<string, string>): HistogramTotals | null {
  if (scrape === null || !scrape.text.includes(`# TYPE ${name} histogram`)) return null;
  return histogramTotals(scrape.values, name, labels);
}

/** A gauge's value (summed over its series), or 'n/a' when the scrape has no such series. */
function gaugeValue(scrape: Scrape | null, name: string): string {
  const v = scrape?.values.filter((x) => x.metricName === name) ?? [];
  return v.length === 0 ? 'n/a' : String(v.reduce((a, x) => a + x.value, 0));
}

/** Sum of a counter by one label, e.g. { changed: 40, error: 3 }. */
function counterBy(scrape: Scrape | null, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of scrape?.values ?? []) if (v.metricName === name) out[String(v.labels[label])] = (out[String(v.labels[label])] ?? 0) + v.value;
  return out;
}

function diffResults(a: Record<string, number>, b: Record<string, number>): string {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.map((k) => `${k} ${(b[k] ?? 0) - (a[k] ?? 0)}`).filter((t) => !t.endsWith(' 0')).join(', ') || 'none';
}

/** Waits until the slicer's and the hints service's reconcile counts stayed put for `quietMs`. */
async function waitQuiet(pipe: Pipeline, quietMs: number, maxMs: number): Promise<boolean> {
  const t0 = performance.now();
  const read = async () => {
    const [s, h] = await Promise.all([pipe.scrape('slicer'), pipe.scrape('hints')]);
    return `${histogramOf(s, SLICER_RECONCILE)?.count}/${histogramOf(h, HINTS_RECONCILE)?.count}`;
  };
  let last = await read();
  let since = performance.now();
  while (performance.now() - t0 < maxMs) {
    await sleep(100);
    const now = await read();
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) return true;
  }
  return false;
}

// ---- one pipeline: watcher, slicer and hints as child processes on isolated names ---------

/** Cleanups run last-first, once; every Closers not yet closed also runs on SIGINT/SIGTERM. */
class Closers {
  readonly #fns: (() => Promise<void>)[] = [];
  #closing: Promise<void> | undefined;
  constructor() {
    openClosers.add(this);
  }
  push(fn: () => Promise<void>): void {
    this.#fns.push(fn);
  }
  closeAll(): Promise<void> {
    return (this.#closing ??= (async () => {
      for (const c of this.#fns.splice(0).reverse()) await c().catch((err: unknown) => progress(`cleanup: ${errText(err)}`));
      openClosers.delete(this);
    })());
  }
}

/** The services' log level (BENCH_LOG_LEVEL); their logs go to files, so info by default. */
const LEVEL: LogLevel = ((l) => (LOG_LEVELS as readonly string[]).includes(l) ? (l as LogLevel) : 'info')(process.env['BENCH_LOG_LEVEL'] || 'info');

type ServiceName = 'watcher' | 'slicer' | 'hints';
const SERVICES: readonly ServiceName[] = ['watcher', 'slicer', 'hints'];

const openClosers = new Set<Closers>();
/** Stacks whose child processes may still run: at exit, any process still there gets SIGKILL. */
const liveStacks = new Set<Stack>();
let guarded = false;
/**
 * Makes sure no service process outlives the bench: on SIGINT/SIGTERM every open phase is
 * cleaned up (processes stopped, run state deleted, at most 30 s) before exiting; at exit (also
 * after a crash of the bench), whatever still runs is killed.
 */
function guardChildren(): void {
  if (guarded) return;
  guarded = true;
  process.once('exit', () => {
    for (const stack of liveStacks) {
      for (const c of stack.components()) {
        const pid = c.pid();
        if (pid === undefined || c.isStopped()) continue;
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  });
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      progress(`${signal}: stopping the services' processes and removing the run state`);
      void Promise.race([Promise.all([...openClosers].map((c) => c.closeAll())), sleep(30_000)]).finally(() => process.exit(code));
    });
  }
}

/** VmRSS of a process in bytes; null when it is gone or unreadable. */
async function processRss(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    return vmRssBytes(await readFile(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return null;
  }
}

class Pipeline {
  readonly stack: Stack;
  readonly sim: ClusterSim;
  readonly logDir: string;
  readonly closers: Closers;
  readonly tracker = new ChangeTracker();
  readonly #stop = new AbortController();
  readonly #decoder = new TextDecoder();
  readonly #state: Record<ServiceName, string> = { watcher: 'starting', slicer: 'starting', hints: 'starting' };

  private constructor(
    stack: Stack,
    sim: ClusterSim,
    logDir: string,
    closers: Closers,
  ) {
    this.stack = stack;
    this.sim = sim;
    this.logDir = logDir;
    this.closers = closers;
    for (const name of SERVICES) this.#follow(name, stack.component(name).ready());
  }

  /**
   * Starts the watcher, the slicer and the hints service as child processes through startStack
   * (fresh names, removed by `closers`), watching `sim`; resolves once they are starting (the
   * streams, buckets and schema exist): await `ready()` for readiness.
   */
  static async start(o: { natsUrl: string; pgUrl: string; sim: ClusterSim; logDir: string; closers: Closers }): Promise<Pipeline> {
    guardChildren();
    const run = freshRunNames(newRunId(Date.now()));
    o.closers.push(() => deleteRunState(o.natsUrl, o.pgUrl, run));
    const stack = await startStack({
      natsUrl: o.natsUrl, databaseUrl: o.pgUrl, run, cluster: CLUSTER, partitions: PARTITIONS, sim: o.sim,
      services: SERVICES, agents: 'none', processes: true, builtRoot: await built(), runDir: join(o.logDir, 'run'), logDir: o.logDir, logLevel: LEVEL,
      // The services' own defaults (BATCH_PERIOD 0, ACK_WAIT 30s), not the stack's test-friendly ones.
      batchPeriodMs: 0, ackWaitMs: 30_000,
    });
    liveStacks.add(stack);
    o.closers.push(async () => {
      await stack.close();
      liveStacks.delete(stack);
    });
    return new Pipeline(stack, o.sim, o.logDir, o.closers);
  }

  /** Resolves when all three services are ready (rejects naming the first that failed). */
  ready(): Promise<void> {
    return this.stack.ready;
  }

  /** "watcher ready after 1.2 s (pid 123), slicer starting, hints ready after 1.4 s (pid 125)". */
  states(): string {
    return SERVICES.map((name) => `${name} ${this.#state[name]}${this.#state[name].startsWith('ready') ? ` (pid ${this.stack.component(name).pid()})` : ''}`).join(', ');
  }

  #follow(name: ServiceName, ready: Promise<unknown>): void {
    const t0 = performance.now();
    this.#state[name] = 'starting';
    ready.then(
      () => void (this.#state[name] = `ready after ${fmtMs(performance.now() - t0)}`),
      (err: unknown) => void (this.#state[name] = `FAILED (${errText(err)})`),
    );
  }

  /** A service whose process exited after it was ready (we did not stop it), or that failed to start; null if none. */
  exited(): string | null {
    for (const name of SERVICES) {
      const c = this.stack.component(name);
      if (this.#state[name].startsWith('FAILED')) return `${name} ${this.#state[name]}; its log is in ${this.logDir}`;
      if (this.#state[name].startsWith('ready') && !c.isStopped() && !c.isReady()) return `the ${name} process (pid ${c.pid()}) exited; its log is in ${this.logDir}`;
    }
    return null;
  }

  /** Stops the slicer's process (SIGTERM, waits for its exit). */
  async stopSlicer(): Promise<void> {
    await this.stack.component('slicer').stop();
    this.#state.slicer = 'stopped';
  }

  /** Starts the slicer's process again, same settings and port; resolves when it is ready. */
  restartSlicer(): Promise<void> {
    const p = this.stack.component('slicer').restart();
    this.#follow('slicer', p);
    return p;
  }

  /** One scrape of a service's /metrics; null when it does not answer. */
  async scrape(name: ServiceName): Promise<Scrape | null> {
    const url = this.stack.component(name).healthUrl();
    if (url === undefined) return null;
    try {
      const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
      const text = await res.text();
      return res.ok ? { text, values: parseExposition(text) } : null;
    } catch {
      return null;
    }
  }

  /** RSS of each service's process. */
  async rss(): Promise<Record<ServiceName, number | null>> {
    const [watcher, slicer, hints] = await Promise.all(SERVICES.map((name) => processRss(this.stack.component(name).pid())));
    return { watcher: watcher ?? null, slicer: slicer ?? null, hints: hints ?? null };
  }

  async reconciles(): Promise<Record<string, number>> {
    return counterBy(await this.scrape('slicer'), SLICER_RECONCILES, 'result');
  }

  /** Messages the slicer's KUBE consumers have not yet had acknowledged (pending + in flight). */
  async slicerBacklog(): Promise<number | null> {
    const counts: (number | null)[] = [];
    for (const c of consumersOf(this.stack.layout)) if (c.service === 'slicer') counts.push(await pendingCount(this.stack.jsm, c.stream, c.durable).catch(() => 0));
    return sumCounts(counts); // null (shown as ?) when the server reports a count that cannot be true
  }

  /** Follows the unzoned views in KV (every endpoint of every slice). */
  async watchViews(): Promise<void> {
    const kv = await openKv(this.stack.nc, this.stack.run.names.views);
    const loop = (async () => {
      for await (const c of kvWatchJson(kv, { key: zoneViewsFilter(CLUSTER, UNZONED_VIEW), signal: this.#stop.signal })) {
        if (c.op === 'PUT') this.tracker.onView(c.value as EndpointSlice);
      }
    })().catch(() => {});
    this.closers.push(async () => {
      this.#stop.abort();
      await loop;
    });
  }

  /**
   * Core subscriptions on KUBE's pod subjects and on SLICES, to split latencies by stage. They
   * run in the bench's process beside cluster-sim, on the same 2 cores as the pipeline: a full
   * parse of every KUBE and SLICES message (Endpoints objects and whole slices included) took
   * about 11 s of CPU in one run of this phase, much of it inside the burst it measures. So
   * Endpoints are not subscribed to at all, and SLICES bodies are scanned, not parsed.
   */
  tapSubjects(): void {
    const tap = (subject: string, on: (text: string) => void) => {
      const sub = this.stack.nc.subscribe(subject, { callback: (err, msg) => void (err === null && on(this.#decoder.decode(msg.data))) });
      this.closers.push(async () => sub.unsubscribe());
    };
    const opts = { prefix: this.stack.run.names.prefix };
    tap(kubeKindFilter(CLUSTER, 'Pod', opts), (text) => this.tracker.onKube(JSON.parse(text) as never));
    tap(slicesFilter(CLUSTER, opts), (text) => this.tracker.onSlicesText(text));
  }

  async kubeCount(): Promise<number> {
    return (await this.stack.jsm.streams.info(this.stack.run.names.kube)).state.messages;
  }

  async slicesCount(): Promise<number> {
    return (await this.stack.jsm.streams.info(this.stack.run.names.slices)).state.messages;
  }
}

/** A cluster-sim in this process (closed by `closers`), its watch history sized to `historySize` events. */
async function simulator(historySize: number, closers: Closers): Promise<ClusterSim> {
  const sim = await startClusterSim({ scenario: EMPTY_SCENARIO, apiPodReadinessDelayMs: 86_400_000, historySize });
  closers.push(() => sim.close());
  return sim;
}

// ---- the section --------------------------------------------------------------------------

/** What every phase needs: the servers, where the services' logs go, the size. */
interface PhaseContext {
  readonly natsUrl: string;
  readonly pgUrl: string;
  /** Each phase's services log to `<logRoot>/<phase>/<service>.log`. */
  readonly logRoot: string;
  readonly quick: boolean;
}

/** The section's figures and, for each missing one, why. */
export interface BackboneReport {
  readonly figures: Figures;
  readonly reasons: Partial<Record<FigureKey, string>>;
}

export async function runBackboneBench(opts: { quick: boolean }): Promise<BackboneReport> {
  const only = phasesWanted(process.env['BENCH_BACKBONE_PHASES']);
  const res = new Results();
  const natsUrl = process.env['NATS_URL'] || DEFAULT_NATS;
  const pgUrl = process.env['DATABASE_URL'] || DEFAULT_PG;
  const skip = await unreachable(natsUrl, pgUrl);
  if (skip !== null) {
    process.stdout.write(`\n## backbone — skipped: ${skip}\n`);
    for (const k of Object.keys(res.figures) as FigureKey[]) res.missing(k, `section skipped: ${skip}`);
    return res;
  }
  process.env['DATABASE_URL'] = pgUrl; // withTestDb reads it
  guardChildren();
  const t0 = performance.now();

  const rawRows: Row[] = [];
  {
    const closers = new Closers();
    try {
      const js = await withJetStream({ env: { NATS_URL: natsUrl } });
      closers.push(() => js.cleanup());
      const db = await withTestDb({ max: 2 });
      closers.push(() => db.close());
      rawRows.push(...(await rawJetStream(js, opts.quick, res)), ...(await rawPostgres(db, opts.quick, res)));
    } catch (err) {
      res.missing('raw_publish_per_s', `raw rates failed: ${errText(err)}`);
      progress(`raw rates failed: ${errText(err)}`);
    } finally {
      await closers.closeAll();
    }
  }

  // The services' logs: one directory per phase, one file per service (kept for reading afterwards).
  const logRoot = await mkdtemp(join(tmpdir(), 'slicemesh-bench-backbone-'));
  progress(`the services' logs go to ${logRoot}/<phase>/<service>.log`);
  const ctx: PhaseContext = { natsUrl, pgUrl, logRoot, quick: opts.quick };
  // The large Service first, while the machine is still quiet.
  const bigRows = await phase(res, ['one_change_100k_ms', 'view_update_100k_ms', 'restart_ready_100k_ms', 'rss_mib_per_100k_pods'], 'large service', (rows) => largeService(ctx, res, rows), only.has('large'));
  const smallRows = await phase(res, ['burst_p99_ms', 'saturation_events_per_s', 'sustained_rate', 'sustained_reflected_ratio', 'sustained_p99_ms'], 'many services', (rows) => manyServices(ctx, res, rows), only.has('many'));

  printTable(
    `backbone (services as separate processes: watcher, slicer and hints each \`node dist/<svc>.js\`; cluster-sim and the measuring code in the bench process; ${availableParallelism()} cores shared by all four; ${fmtMs(performance.now() - t0)} in all)`,
    [...rawRows, ...smallRows, ...bigRows],
  );
  printTargets(res, opts.quick);
  return res;
}

/** Runs one part of the section; when it throws, the rows so far are kept and its missing figures get the error as the reason. */
async function phase(res: Results, keys: readonly FigureKey[], name: string, run: (rows: Row[]) => Promise<void>, wanted = true): Promise<Row[]> {
  if (!wanted) {
    for (const k of keys) res.missing(k, `${name} phase not run (BENCH_BACKBONE_PHASES)`);
    return [];
  }
  const rows: Row[] = [];
  const t0 = performance.now();
  try {
    await run(rows);
  } catch (err) {
    progress(`${name} failed: ${errText(err)}`);
    for (const k of keys) res.missing(k, `${name} phase failed: ${errText(err)}`);
    rows.push([`${name}: FAILED`, '', errText(err)]);
  }
  progress(`${name}: done in ${fmtMs(performance.now() - t0)}`);
  return rows;
}

// ---- a 100k-endpoint Service --------------------------------------------------------------

async function largeService(ctx: PhaseContext, res: Results, rows: Row[]): Promise<void> {
  const quick = ctx.quick;
  // BENCH_LARGE_PODS overrides the size (e.g. to try the phase quickly on a slow build).
  const n = Number(process.env['BENCH_LARGE_PODS']) || (quick ? 20_000 : 100_000);
  const size = n % 1000 === 0 ? `${n / 1000}k` : `${n}`;
  const loadTimeoutMs = quick ? 60_000 : 240_000;
  // Nine single changes: a median of three moved by a third between runs of the same code.
  const changes = quick ? 3 : 9;
  for (const k of ['one_change_100k_ms', 'view_update_100k_ms', 'restart_ready_100k_ms', 'rss_mib_per_100k_pods'] as const) res.labels[k] = size;
  const closers = new Closers();
  try {
    // The services start on the cluster without the Service's pods, so their processes' RSS
    // before and after the pods arrive measures what the pods cost them.
    const sim = await simulator(n + 20_000, closers);
    const services = seedServices(sim, { services: 1, auto: () => false });
    progress('large service: starting watcher, slicer, hints as child processes');
    let t = performance.now();
    const pipe = await Pipeline.start({ natsUrl: ctx.natsUrl, pgUrl: ctx.pgUrl, sim, logDir: join(ctx.logRoot, 'large-service'), closers });
    await pipe.watchViews();
    await withTimeout(pipe.ready(), 120_000, 'watcher, slicer and hints startup');
    const startMs = performance.now() - t;
    await waitQuiet(pipe, 1000, 15_000);
    const rss0 = await pipe.rss();
    const mem0 = await settledMemory();

    // Pods for single changes: each flipped once (to unready), spread over the service.
    t = performance.now();
    const pods = seedPods(sim, services, n).flat();
    const seedMs = performance.now() - t;
    const used = new Set<number>();
    const pick = (k: number): BenchPod => {
      let i = (k * 7919 + Math.floor(n / 2)) % n;
      while (used.has(i)) i = (i + 1) % n;
      used.add(i);
      const pod = pods[i];
      if (pod === undefined) throw new Error(`no pod ${i}`);
      return pod;
    };
    progress(`large service: ${n} pods created in cluster-sim in ${fmtMs(seedMs)}; following them through the watcher, slicer and hints into KV`);
    const status = async () => {
      const slicer = await pipe.scrape('slicer');
      return (
        `${pipe.tracker.readyCount()} of ${n} endpoints ready in KV views; KUBE ${await pipe.kubeCount()} messages, ${(await pipe.slicerBacklog()) ?? '?'} not yet taken by the slicer; ` +
        `slicer reconciles: ${diffResults({}, counterBy(slicer, SLICER_RECONCILES, 'result'))}, outbox lag ${gaugeValue(slicer, SLICER_OUTBOX_LAG)}; ` +
        `SLICES ${await pipe.slicesCount()} messages; ${pipe.states()}`
      );
    };
    const loaded = await waitFor(() => pipe.exited() !== null || pipe.tracker.readyCount() === n, loadTimeoutMs, { label: `loading ${n} pods`, status });
    const crash = pipe.exited();
    if (crash !== null) throw new Error(crash);
    const loadMs = performance.now() - t;
    if (!loaded) {
      const why = `the ${size} pods were not all in KV ${(loadTimeoutMs / 1000).toFixed(0)} s after they were created (${await status()})`;
      for (const k of ['one_change_100k_ms', 'view_update_100k_ms', 'restart_ready_100k_ms', 'rss_mib_per_100k_pods'] as const) res.missing(k, why);
      rows.push([`${size}-endpoint service: ${n} pods into KV views`, 'INCOMPLETE', why]);
      return;
    }
    rows.push([
      `${size}-endpoint service (1 Service, ${n} pods, ${NODES} nodes): pods created → all in KV views`,
      fmtMs(loadMs),
      `${rate(n, loadMs)} pods through the watch (created in cluster-sim in ${fmtMs(seedMs)}, after the services were up: ${fmtMs(startMs)} to start)`,
    ]);
    await waitQuiet(pipe, 1000, 30_000);
    // The three service processes, after loading minus before; the bench process (cluster-sim's
    // copy of the pods and the measuring code) is printed beside it, not counted.
    const rss1 = await pipe.rss();
    const mem1 = await settledMemory();
    let held = 0;
    const unread: string[] = [];
    const each = SERVICES.map((name) => {
      const [a, b] = [rss0[name], rss1[name]];
      if (a === null || b === null) {
        unread.push(name);
        return `${name} n/a`;
      }
      held += b - a;
      return `${name} ${fmtMiB(b - a)} (${fmtMiB(a)} → ${fmtMiB(b)})`;
    });
    if (unread.length > 0) res.missing('rss_mib_per_100k_pods', `no RSS of the ${unread.join(', ')} process (/proc/<pid>/status unreadable)`);
    else res.set('rss_mib_per_100k_pods', mibPer100kPods(held, n));
    rows.push([
      `  memory held for ${size} pods by the watcher + slicer + hints processes (VmRSS after loading - before)`,
      unread.length > 0 ? 'n/a' : fmtMiB(held),
      `${unread.length > 0 ? '' : `${mibPer100kPods(held, n).toFixed(0)} MiB per 100k pods: `}${each.join(', ')}; not counted: bench process (cluster-sim + measuring code) ${fmtMiB(mem1.rss - mem0.rss)}`,
    ]);

    // One pod change at a time: the services' own reconcile durations (deltas of their
    // histograms, scraped from /metrics), and the latencies as NATS and KV show them.
    pipe.tapSubjects();
    const slicerMs: number[] = [];
    const hintsMs: number[] = [];
    const counts: string[] = []; // reconciles per change, slicer/hints
    let noSlicerHistogram = false;
    let noHintsHistogram = false;
    const histograms = async () => {
      const [s, h] = await Promise.all([pipe.scrape('slicer'), pipe.scrape('hints')]);
      return [histogramOf(s, SLICER_RECONCILE), histogramOf(h, HINTS_RECONCILE, { outcome: 'success' })] as const;
    };
    pipe.tracker.reset();
    for (let k = 0; k < changes; k++) {
      await waitQuiet(pipe, 300, 10_000);
      const [s0, h0] = await histograms();
      const pod = pick(k);
      setReady(sim, pod, false);
      pipe.tracker.expect(pod.ip, false, performance.now());
      if (!(await waitFor(() => pipe.tracker.pending === 0, 30_000))) {
        pipe.tracker.giveUp();
        progress(`large service: change ${k + 1} not in KV after 30 s`);
        continue;
      }
      await waitQuiet(pipe, 300, 10_000);
      const [s1, h1] = await histograms();
      const ds = s0 === null || s1 === null ? null : histogramDelta(s0, s1);
      const dh = h0 === null || h1 === null ? null : histogramDelta(h0, h1);
      if (ds === null) noSlicerHistogram = true;
      else if (ds.count > 0) slicerMs.push(ds.meanMs);
      if (dh === null) noHintsHistogram = true;
      else if (dh.count > 0) hintsMs.push(dh.meanMs);
      counts.push(`${ds?.count ?? '?'}/${dh?.count ?? '?'}`);
    }
    const samples = pipe.tracker.samples;
    const toSlices = samples.map((s) => s.watcher + s.slicer);
    const slicesToKv = samples.map((s) => s.hints);
    const fmtList = (v: readonly number[]) => v.map((x) => fmtMs(x)).join(', ');
    if (slicerMs.length > 0) res.set('one_change_100k_ms', median(slicerMs));
    else if (toSlices.length > 0) {
      res.set('one_change_100k_ms', median(toSlices));
      progress(`one_change_100k_ms: ${noSlicerHistogram ? `no ${SLICER_RECONCILE} in the slicer's /metrics` : 'the slicer histogram did not move'}; using store write → SLICES message latency instead`);
    } else res.missing('one_change_100k_ms', 'no single change reached KV');
    if (hintsMs.length > 0) res.set('view_update_100k_ms', median(hintsMs));
    else if (slicesToKv.length > 0) {
      res.set('view_update_100k_ms', median(slicesToKv));
      progress(`view_update_100k_ms: ${noHintsHistogram ? `no ${HINTS_RECONCILE} in the hints service's /metrics` : 'the hints histogram did not move'}; using SLICES message → KV view latency instead`);
    } else res.missing('view_update_100k_ms', 'no single change reached KV');
    rows.push([
      `  one pod change (x${changes}): slicer reconcile, median`,
      slicerMs.length > 0 ? fmtMs(median(slicerMs)) : 'n/a',
      slicerMs.length > 0 ? `${SLICER_RECONCILE} delta sum/count from /metrics: ${fmtList(slicerMs)} (reconciles per change, slicer/hints: ${counts.join(' ')})` : 'histogram unavailable',
    ]);
    rows.push([
      `  one pod change: hints view update (reconcile), median`,
      hintsMs.length > 0 ? fmtMs(median(hintsMs)) : 'n/a',
      hintsMs.length > 0 ? `${HINTS_RECONCILE}{outcome="success"} delta sum/count from /metrics: ${fmtList(hintsMs)}` : 'histogram unavailable',
    ]);
    rows.push([
      `  one pod change: store write → SLICES message / SLICES → KV view, median`,
      `${fmtMs(median(toSlices))} / ${fmtMs(median(slicesToKv))}`,
      `of which store write → KUBE (watcher) ${fmtMs(median(samples.map((s) => s.watcher)))}, KUBE → SLICES (slicer) ${fmtMs(median(samples.map((s) => s.slicer)))}; store write → KV view ${fmtList(samples.map((s) => s.total))}`,
    ]);

    // Restart: stop the slicer's process, change a few pods while it is down, start it again
    // (same schema, streams, durables and port); timed from the start to /readyz answering 200.
    const oldPid = pipe.stack.component('slicer').pid();
    t = performance.now();
    await pipe.stopSlicer();
    const stopMs = performance.now() - t;
    pipe.tracker.reset();
    const whileDown = 10;
    for (let k = 0; k < whileDown; k++) {
      const pod = pick(changes + k);
      setReady(sim, pod, false);
      pipe.tracker.expect(pod.ip, false, performance.now());
    }
    await sleep(200); // the watcher has published them: the new slicer starts with a backlog
    t = performance.now();
    try {
      await withTimeout(pipe.restartSlicer(), quick ? 30_000 : 60_000, 'the restarted slicer');
    } catch (err) {
      res.missing('restart_ready_100k_ms', errText(err));
      rows.push([`  slicer restart with ${n} pods behind it`, 'NOT READY', `${errText(err)} (log in ${pipe.logDir})`]);
      return;
    }
    const restartMs = performance.now() - t;
    res.set('restart_ready_100k_ms', restartMs);
    const caughtUp = await waitFor(() => pipe.tracker.pending === 0, 30_000);
    const afterReady = performance.now() - t - restartMs;
    rows.push([
      `  slicer restart with ${n} pods behind it: new slicer process ready`,
      fmtMs(restartMs),
      `process start (node dist/slicer.js) to /readyz 200, pid ${oldPid} → ${pipe.stack.component('slicer').pid()}; old one stopped (SIGTERM → exit) in ${fmtMs(stopMs)}; ` +
        `${whileDown} changes made while down ${caughtUp ? `all in KV ${fmtMs(afterReady)} after ready` : `INCOMPLETE: ${pipe.tracker.pending} missing 30 s after ready`}`,
    ]);
  } finally {
    progress('large service: cleaning up');
    await closers.closeAll();
  }
}

// ---- many small services: cold start, burst, paced and sustained changes -------------------

async function manyServices(ctx: PhaseContext, res: Results, rows: Row[]): Promise<void> {
  const quick = ctx.quick;
  const services = quick ? 50 : 200;
  const podsPerService = quick ? 20 : 25;
  const closers = new Closers();
  try {
    const sim = await simulator(200_000, closers);
    const pods = seedPods(sim, seedServices(sim, { services, auto: (s) => s % 4 === 0 }), podsPerService);
    const all = pods.flat();
    rows.push(...(await ingestFloor(ctx, sim, all, res)));
    progress('many services: starting watcher, slicer, hints as child processes');
    const t0 = performance.now();
    const pipe = await Pipeline.start({ natsUrl: ctx.natsUrl, pgUrl: ctx.pgUrl, sim, logDir: join(ctx.logRoot, 'many-services'), closers });
    const tracker = pipe.tracker;
    pipe.tapSubjects();
    await pipe.watchViews();
    await withTimeout(pipe.ready(), 120_000, 'watcher, slicer and hints startup');
    const coldTimeoutMs = quick ? 40_000 : 90_000;
    const cold = await waitFor(() => pipe.exited() !== null || tracker.readyCount() === all.length, coldTimeoutMs, {
      label: 'cold start',
      status: () => `${tracker.readyCount()} of ${all.length} endpoints in KV; ${pipe.states()}`,
    });
    const crash = pipe.exited();
    if (crash !== null) throw new Error(crash);
    const coldMs = performance.now() - t0;
    rows.push([
      `cold start: ${all.length} pods, ${services} services, ${NODES} nodes into KV views`,
      fmtMs(coldMs),
      cold ? `${rate(all.length, coldMs)} pods, from spawning the processes (${pipe.states()})` : `INCOMPLETE after ${coldTimeoutMs / 1000} s`,
    ]);
    if (!cold) {
      // Nothing after this would mean anything: every change would wait behind the cold start.
      const why = `the cold start of ${all.length} pods was not in KV after ${coldTimeoutMs / 1000} s (${tracker.readyCount()} ready; SLICES ${await pipe.slicesCount()} messages; ${pipe.states()})`;
      for (const k of ['burst_p99_ms', 'saturation_events_per_s', 'sustained_rate', 'sustained_reflected_ratio', 'sustained_p99_ms'] as const) res.missing(k, why);
      return;
    }
    sampleMemory();
    const reconciles = () => pipe.reconciles();
    // Postgres's write-ahead log position: what the pipeline made it write per pod change (every
    // byte of it is written, fsynced and, after a checkpoint, preceded by full page images).
    const walBytes = async () => Number((await sql<{ b: string }>`select (pg_current_wal_lsn() - '0/0'::pg_lsn)::text as b`.execute(pipe.stack.db)).rows[0]?.b ?? NaN);
    // Rows the pipeline inserted, updated or deleted in the run's schema, by table: the durable
    // work behind each change; and the transactions committed in the database, each a WAL flush
    // and a few round trips, which batching shares between changes. Backends publish their counts
    // at most once a second, so each reading first waits that long.
    interface PgWrites {
      readonly rows: Map<string, number>;
      readonly commits: number;
    }
    const pgWrites = async (): Promise<PgWrites> => {
      await sleep(1100);
      const r = await sql<{ t: string; n: string }>`select relname as t, (n_tup_ins + n_tup_upd + n_tup_del)::text as n from pg_stat_user_tables where schemaname = current_schema()`.execute(pipe.stack.db);
      const c = await sql<{ n: string }>`select xact_commit::text as n from pg_stat_database where datname = current_database()`.execute(pipe.stack.db);
      return { rows: new Map(r.rows.map((x) => [x.t, Number(x.n)])), commits: Number(c.rows[0]?.n ?? NaN) };
    };
    const pgWritesRow = (before: PgWrites, after: PgWrites, changes: number): Row => {
      const per = [...after.rows].map(([t, n]) => [t, (n - (before.rows.get(t) ?? 0)) / changes] as const).filter(([, x]) => x >= 0.005).sort((a, b) => b[1] - a[1]);
      const total = per.reduce((n, [, x]) => n + x, 0);
      const commits = `${((after.commits - before.commits) / changes).toFixed(2)} transactions committed in the database per pod change`;
      return ['  Postgres rows written per pod change, by table', total.toFixed(2), `${per.map(([t, x]) => `${t} ${x.toFixed(2)}`).join(', ') || 'none'}; ${commits}`];
    };

    // Where a phase's CPU went, per pod change: every process shares the machine's cores, so a
    // latency that grows with the rate is read against the time each of them spent.
    const natsPid = natsServerPid(ctx.natsUrl);
    const cpuSample = (): CpuSample =>
      new Map([
        ...SERVICES.map((name) => [name, cpuMsOf(pipe.stack.component(name).pid())] as const),
        ['nats-server', cpuMsOf(natsPid)],
        ['postgres', postgresCpuMs()],
        ['bench (cluster-sim, taps)', ownCpuMs()],
      ]);
    const cpuRow = (before: CpuSample, after: CpuSample, changes: number, wallMs: number): Row => {
      const c = cpuShares(cpuSpent(before, after), changes, 2, wallMs);
      return ['  CPU per pod change, by process', c.total, c.detail];
    };

    // Idle: what the processes spend with nothing changing (heartbeats, pull requests, timers).
    // Every paced figure below carries this cost, spread over its changes.
    {
      const cpu0 = cpuSample();
      const start = performance.now();
      await sleep(quick ? 2000 : 5000);
      const ms = performance.now() - start;
      const c = cpuShares(cpuSpent(cpu0, cpuSample()), ms / 1000, 0, ms);
      rows.push([`idle for ${fmtMs(ms)}: CPU per second, by process`, c.total, c.detail]);
    }

    // Burst: one readiness flip per pod, written as fast as the store takes them, then drained.
    {
      const cpu0 = cpuSample();
      const burstTimeoutMs = quick ? 30_000 : 60_000;
      const [k0, s0, p0, r0] = [await pipe.kubeCount(), await pipe.slicesCount(), tracker.puts, await reconciles()];
      tracker.reset();
      const start = performance.now();
      for (const p of all) {
        setReady(sim, p, false);
        tracker.expect(p.ip, false, performance.now());
      }
      const written = performance.now() - start;
      const ok = await waitFor(() => tracker.pending === 0, burstTimeoutMs, { label: `burst of ${all.length}`, status: () => `${all.length - tracker.pending} of ${all.length} changes in KV` });
      const ms = performance.now() - start;
      if (!ok) tracker.giveUp();
      const cpu1 = cpuSample();
      const [k1, s1, r1] = [await pipe.kubeCount(), await pipe.slicesCount(), await reconciles()];
      const p99 = p99Total(tracker);
      res.labels.burst_p99_ms = `${all.length}`;
      res.set('burst_p99_ms', p99.value);
      res.lowerBound.burst_p99_ms = p99.lowerBound;
      if (p99.lowerBound) progress(`burst_p99_ms is a lower bound: ${tracker.censored.length} changes were not in KV after ${burstTimeoutMs / 1000} s`);
      if (ok) res.set('saturation_events_per_s', perSecond(k1 - k0, ms));
      else res.missing('saturation_events_per_s', `the burst was not drained within ${burstTimeoutMs / 1000} s`);
      rows.push([`burst: ${all.length} pod changes written in ${fmtMs(written)}, all in KV after`, fmtMs(ms), ok ? `${rate(all.length, ms)} changes reflected` : `INCOMPLETE: ${tracker.censored.length} missing`]);
      rows.push([
        '  KUBE events through the pipeline at saturation (pods + Endpoints)',
        rate(k1 - k0, ms),
        `${k1 - k0} events; ${pct(ratio(res.figures.saturation_events_per_s, res.raw.jsAsync))} of raw JetStream async publish, ${pct(ratio(res.figures.saturation_events_per_s, res.raw.pgTx))} of one upsert per Postgres transaction`,
      ]);
      rows.push(['  SliceChanged events / unzoned view puts', `${s1 - s0} / ${tracker.puts - p0}`, `slicer reconciles: ${diffResults(r0, r1)}`]);
      rows.push(['  latency store write → KV view p50 / p99', `${samplesP50(tracker)} / ${p99.text}`, stages(tracker.samples)]);
      rows.push(cpuRow(cpu0, cpu1, all.length, ms));
    }
    sampleMemory();

    // Paced: flips at a steady rate, round robin over services (consecutive changes hit different
    // services), skipping pods whose last flip is not in KV yet: a second flip in flight would make
    // a view of the older state ambiguous. Only when every pod is in flight is one superseded.
    const order = Array.from({ length: podsPerService }, (_, p) => pods.map((svc) => svc[p])).flat().filter((p) => p !== undefined);
    const readyNow = new Map(all.map((p) => [p.ip, false])); // every pod is unready after the burst
    let cursor = 0;
    const nextPod = (): BenchPod => {
      for (let tries = 0; ; tries++) {
        const p = order[cursor];
        if (p === undefined) throw new Error('no pods');
        cursor = (cursor + 1) % order.length;
        if (!tracker.isPending(p.ip) || tracker.pending >= order.length || tries >= order.length) return p;
      }
    };
    const paced = async (target: number, seconds: number, drainMs: number) => {
      const n = Math.round(target * seconds);
      const [k0, r0, w0, tw0] = [await pipe.kubeCount(), await reconciles(), await walBytes(), await pgWrites()];
      const cpu0 = cpuSample();
      tracker.reset();
      const start = performance.now();
      let nextLine = start + 10_000;
      for (let i = 0; i < n; i++) {
        const wait = start + (i * 1000) / target - performance.now();
        if (wait > 1) await sleep(wait);
        const p = nextPod();
        const ready = !readyNow.get(p.ip);
        readyNow.set(p.ip, ready);
        setReady(sim, p, ready);
        tracker.expect(p.ip, ready, performance.now());
        if (performance.now() >= nextLine) {
          nextLine += 10_000;
          progress(`paced ${target}/s: ${i + 1} of ${n} written, ${tracker.samples.length} in KV, ${tracker.pending} pending`);
        }
      }
      const offeredMs = performance.now() - start;
      const ok = await waitFor(() => tracker.pending === 0, drainMs, { label: `draining paced ${target}/s`, status: () => `${tracker.pending} changes pending` });
      const drainedMs = performance.now() - start - offeredMs;
      const cpu1 = cpuSample();
      const missing = tracker.pending + tracker.superseded;
      if (!ok) tracker.giveUp();
      const [k1, r1, w1, tw1] = [await pipe.kubeCount(), await reconciles(), await walBytes(), await pgWrites()];
      const p99 = p99Total(tracker);
      rows.push([`paced ${target} changes/s for ${seconds} s: store write → KV view p50 / p99`, `${samplesP50(tracker)} / ${p99.text}`, stages(tracker.samples)]);
      rows.push([
        `  offered ${rate(n, offeredMs)}, reflected ${rate(tracker.samples.length, offeredMs + drainedMs)} (${pct(tracker.samples.length / n)})`,
        `${rate(k1 - k0, offeredMs + drainedMs)}`,
        `KUBE events; ${ok ? `drained ${fmtMs(drainedMs)} after the last write` : `${missing} not in KV ${fmtMs(drainedMs)} after the last write`}; slicer reconciles: ${diffResults(r0, r1)}${tracker.superseded > 0 ? `; ${tracker.superseded} superseded before reaching KV` : ''}`,
      ]);
      rows.push([`  Postgres WAL written per pod change`, `${((w1 - w0) / n / 1024).toFixed(1)} KiB`, `${((w1 - w0) / 2 ** 20).toFixed(0)} MiB in all, ${((w1 - w0) / 2 ** 20 / ((offeredMs + drainedMs) / 1000)).toFixed(1)} MiB/s (every process's writes to this server)`]);
      rows.push(pgWritesRow(tw0, tw1, n));
      rows.push(cpuRow(cpu0, cpu1, n, offeredMs + drainedMs));
      sampleMemory();
      return { n, offeredMs, drainedMs, ok, p99 };
    };
    for (const target of quick ? [25, 100] : [25, 50, 100]) {
      const r = await paced(target, quick ? 4 : 10, quick ? 15_000 : 30_000);
      const keptUp = tracker.samples.length / (r.offeredMs + r.drainedMs) >= (0.8 * r.n) / r.offeredMs;
      if (!r.ok || !keptUp || r.p99.value > 5000) break; // saturated: a higher rate only grows the queues
    }

    // Sustained: 500 changes/s for 60 s, from a drained pipeline; changes not in KV 10 s after
    // the last write count as not reflected.
    if (!(await waitQuiet(pipe, 1000, 30_000))) progress('the pipeline is still busy with the paced runs; starting the sustained run anyway');
    const seconds = quick ? 10 : 60;
    const s = await paced(SUSTAINED_RATE, seconds, quick ? 5000 : 10_000);
    res.labels.sustained_rate = `${SUSTAINED_RATE}/s for ${seconds} s`;
    res.set('sustained_rate', perSecond(s.n, s.offeredMs));
    res.set('sustained_reflected_ratio', tracker.samples.length / s.n);
    res.set('sustained_p99_ms', s.p99.value);
    res.lowerBound.sustained_p99_ms = s.p99.lowerBound;
    if (s.p99.lowerBound) progress(`sustained_p99_ms is a lower bound: ${s.n - tracker.samples.length} of ${s.n} changes never reached KV (superseded, or not there ${fmtMs(s.drainedMs)} after the last write)`);
  } finally {
    progress('many services: cleaning up');
    await closers.closeAll();
  }
}

/**
 * The ingest floor (bench/ingest-floor-run.ts), before the pipeline starts: the burst through bare
 * clients, once with the simulator's watch alone and once through JetStream. Each run flips the
 * pods unready (warming up) and then ready again (measured), so the pipeline's cold start finds
 * them as they were seeded.
 */
async function ingestFloor(ctx: PhaseContext, sim: ClusterSim, all: readonly BenchPod[], res: Results): Promise<Row[]> {
  const rows: Row[] = [];
  const labels: Record<FloorMode, string> = {
    watch: 'the simulator\'s watch to a bare client that parses each event',
    jetstream: 'the same client publishing each event to a stream, another pulling, parsing and acking each',
  };
  const write = (ready: boolean): Map<string, number> => {
    const at = new Map<string, number>();
    for (const p of all) {
      setReady(sim, p, ready);
      at.set(`${p.namespace}/${p.name}`, performance.timeOrigin + performance.now());
    }
    return at;
  };
  for (const mode of ['watch', 'jetstream'] as const) {
    progress(`many services: ingest floor, ${mode}`);
    try {
      const run = await runIngestFloor({ mode, apiUrl: sim.url, natsUrl: ctx.natsUrl, id: newRunId(Date.now()), pods: all.length, write, timeoutMs: 60_000 });
      res.floor.set(mode, run);
      const { p50, p99 } = floorPercentiles(run);
      rows.push([`ingest floor: the burst of ${run.pods} pod changes through ${labels[mode]}: store write → seen p50 / p99`, `${fmtMs(p50)} / ${fmtMs(p99)}`]);
      rows.push([
        `  events seen (pods + Endpoints), from the first write to the last`,
        rate(run.events, run.spanMs),
        `${run.events} events in ${fmtMs(run.spanMs)}; ${pct(ratio(perSecond(run.events, run.spanMs), res.raw.jsAsync))} of raw JetStream async publish`,
      ]);
      const cpu = cpuShares([...run.cpuMs], run.pods, 2, run.spanMs);
      rows.push(['  CPU per pod change, by process', cpu.total, cpu.detail]);
      if (mode === 'jetstream' && [...run.cpuMs.values()].every(Number.isFinite)) {
        // Were the simulator free, the clients and nats-server alone would fill the cores at this
        // rate (only when every process's CPU was read: a remote nats-server's is not).
        const ceiling = perSecond(run.events * availableParallelism(), cpu.totalMs - (run.cpuMs.get(FLOOR_SIM) ?? 0));
        rows.push(['  the same without the simulator\'s CPU: the most the cores allow', fmtRate(ceiling), `${pct(ratio(ceiling, res.raw.jsAsync))} of raw JetStream async publish`]);
      }
    } catch (err) {
      rows.push([`ingest floor (${mode})`, 'failed', errText(err)]);
    }
  }
  return rows;
}

/**
 * CPU spent by process (ms, NaN where unreadable) divided by `per` (changes, or seconds), and the
 * share of the cores it kept busy over `wallMs`; `totalMs` sums what could be read.
 */
function cpuShares(spent: readonly (readonly [string, number])[], per: number, digits: number, wallMs: number): { total: string; totalMs: number; detail: string } {
  const totalMs = spent.reduce((n, [, ms]) => n + (Number.isFinite(ms) ? ms : 0), 0);
  const each = spent.map(([who, ms]) => `${who} ${Number.isFinite(ms) ? (ms / per).toFixed(digits) : 'n/a'}`).join(', ');
  return { total: `${(totalMs / per).toFixed(digits)} ms`, totalMs, detail: `${each} ms; ${pct(totalMs / (wallMs * availableParallelism()))} of the ${availableParallelism()} cores busy` };
}

function samplesP50(t: ChangeTracker): string {
  const v = sortedField(t.samples, 'total');
  return v.length === 0 ? 'n/a' : fmtMs(percentile(v, 50));
}

// ---- targets ------------------------------------------------------------------------------

function fmtTarget(t: Target, unit: 'ms' | 'ratio'): string {
  const op = t.op === '<=' ? '≤' : '≥';
  return `${op} ${unit === 'ms' ? fmtMs(t.value) : pct(t.value)}`;
}

function printTargets(res: Results, quick: boolean): void {
  const f = res.figures;
  const line = (label: string, key: FigureKey | null, value: number | null, shown: string, target: Target | null, unit: 'ms' | 'ratio', extra = ''): Row => {
    const why = key !== null && value === null ? res.reasons[key] : undefined;
    const lb = key !== null && res.lowerBound[key] === true;
    const judged = target === null ? 'no target' : `target ${fmtTarget(target, unit)}: ${verdict(value, target, lb)}`;
    return [label, value === null ? 'n/a' : `${lb ? '≥ ' : ''}${shown}`, `${judged}${extra}${why ? ` (${why})` : ''}`];
  };
  const ms = (v: number | null) => (v === null ? 'n/a' : fmtMs(v));
  const satRatio = ratio(f.saturation_events_per_s, f.raw_publish_per_s);
  // What the bare clients of the ingest floor reached with the same burst, beside each burst figure.
  const floor = res.floor.get('jetstream');
  const watchAlone = res.floor.get('watch');
  const floorP99 = floor === undefined ? '' : `; ingest floor p99 ${fmtMs(floorPercentiles(floor).p99)} (watch alone ${watchAlone === undefined ? 'n/a' : fmtMs(floorPercentiles(watchAlone).p99)})`;
  const floorRate = floor === undefined ? '' : `; ingest floor ${pct(ratio(perSecond(floor.events, floor.spanMs), f.raw_publish_per_s))}`;
  const big = res.labels.one_change_100k_ms ?? '100k';
  const rows: Row[] = [
    line(`burst of ${res.labels.burst_p99_ms ?? '?'} pod changes: p99 store write → KV view`, 'burst_p99_ms', f.burst_p99_ms, ms(f.burst_p99_ms), TARGETS.burst_p99_ms, 'ms', floorP99),
    line(`sustained ${res.labels.sustained_rate ?? `${SUSTAINED_RATE}/s`}: changes reflected in KV`, 'sustained_reflected_ratio', f.sustained_reflected_ratio, pct(f.sustained_reflected_ratio), TARGETS.sustained_reflected_ratio, 'ratio', `; offered ${fmtRate(f.sustained_rate)} = ${pct(ratio(f.sustained_rate, res.raw.jsAsync))} of raw JetStream async publish`),
    line(`sustained: p99 store write → KV view`, 'sustained_p99_ms', f.sustained_p99_ms, ms(f.sustained_p99_ms), TARGETS.sustained_p99_ms, 'ms'),
    line(
      `pipeline KUBE events/s at saturation / raw JetStream async publish`,
      'saturation_events_per_s',
      satRatio,
      `${pct(satRatio)}`,
      TARGETS.saturation_ratio,
      'ratio',
      `; ${fmtRate(f.saturation_events_per_s)} of ${fmtRate(f.raw_publish_per_s)}; ${times(ratio(f.saturation_events_per_s, res.raw.jsAck))} publish-awaiting-each-ack, ${times(ratio(f.saturation_events_per_s, res.raw.pgTx))} one-upsert-per-transaction${floorRate}`,
    ),
    line(`one pod change in a ${big}-endpoint service: slicer reconcile`, 'one_change_100k_ms', f.one_change_100k_ms, ms(f.one_change_100k_ms), TARGETS.one_change_100k_ms, 'ms'),
    line(`one pod change in a ${big}-endpoint service: hints view update`, 'view_update_100k_ms', f.view_update_100k_ms, ms(f.view_update_100k_ms), TARGETS.view_update_100k_ms, 'ms'),
    line(`slicer restarted with ${big} pods behind it: ready`, 'restart_ready_100k_ms', f.restart_ready_100k_ms, ms(f.restart_ready_100k_ms), TARGETS.restart_ready_100k_ms, 'ms'),
    line(`memory held per 100k pods by the watcher, slicer and hints processes (VmRSS delta${big === '100k' ? '' : `, scaled from ${big}`})`, 'rss_mib_per_100k_pods', f.rss_mib_per_100k_pods, f.rss_mib_per_100k_pods === null ? 'n/a' : `${f.rss_mib_per_100k_pods.toFixed(0)} MiB`, null, 'ms'),
  ];
  printTable(`backbone targets${quick ? ' (--quick: smaller sizes, shorter runs)' : ''}`, rows);
}
