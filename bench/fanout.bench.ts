// Fanout section (issue 10 part 1): network-programming latency from a pod's Ready transition
// to the change applied on every agent that must apply it, through the production path.
//
// - The cluster (bench/fanout-cluster.ts): 1000 nodes in 3 zones plus 6 unzoned ones, Services
//   of 5 pods (every other one trafficDistribution PreferClose), fed into the run's KUBE stream
//   as the watcher feeds it (its toDomain and eventFor: same subjects, envelopes, msg ids). A
//   change is one pod's Ready condition flipping with lastTransitionTime = now (ms precision;
//   the API server keeps seconds, which would blur every figure by up to 1 s).
// - The pipeline: the slicer and the hints service as deployed, child processes of
//   `node dist/<svc>.js` started by services/stack's startStack (as the backbone section runs
//   them; the bundles are built into .bench/fanout-build/dist so the dist/ others run is left
//   alone), on fresh streams, buckets and schema removed afterwards. The slicer stamps each
//   slice it writes with `endpoints.kubernetes.io/last-change-trigger-time` (A.10: the earliest
//   newer Ready transition of its pods); the hints service's zone views keep the slice's
//   metadata, annotation included.
// - The agents: 1000 lightweight agents (bench/fanout-agents.ts: own NATS connection, own zone
//   watch, in-memory apply, no rules), one unscoped agent watching the unfiltered view (every
//   endpoint of every slice, as proxies read it), and 10 full agents (startProxyAgent,
//   dry-run backend, default MIN_SYNC_PERIOD 1 s) in a process of their own
//   (bench/fanout-full-agents.ts), so their rendering cannot stall the generator's clock. Every
//   agent watches as the proxy agent does: its filter's shared feed (kvFeedWatchJson), one
//   JetStream delivery per view write for all the agents of a zone.
//
// Latency origin: the trigger time the view carries (= the pod's Ready lastTransitionTime; the
// bench checks it against its own record of when it flipped which pod IP). A change is one
// (slice, trigger time): the zone views whose endpoints it changed must be applied by every
// agent of those zones; its latency is the latest arrival among them minus the trigger time. A
// view rewritten with only a new annotation (a zone whose endpoints did not change) is received
// and counted in the bytes, but nothing needs applying. Second row: from the view's KV write
// (the server's timestamp of the put) to the same arrivals: the fan-out's share alone. The watch
// leg before KUBE (API server → watcher) is not in these figures: the backbone section has it.
//
// Bytes: what each agent received after its initial set, per pod change, against kube-proxy's
// way (KubeProxyWay: every EndpointSlice of the cluster, whole, each time it changes), and
// against our own unscoped agent (zone scoping alone: both read views as proxies read them).

import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createDb } from '@slicemesh/db';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { KV, NatsConnection } from '@slicemesh/nats';
import { connectNats, encodeToken, ensureKv, ensureStreams, jetstream, jetstreamManager, openKv, zoneViewsFilter } from '@slicemesh/nats';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { REPO_ROOT, deleteRunState, freshRunNames, newRunId, startStack } from '@slicemesh/stack';
import type { Stack } from '@slicemesh/stack';
import { buildDist } from '../scripts/build.ts';
import type { Flip } from './fanout-cluster.ts';
import { FanoutCluster, PODS_PER_SERVICE, UNZONED_NODES } from './fanout-cluster.ts';
import { fmtBytes, fmtMs, printTable } from './harness.ts';
import { percentile } from './summary.ts';
import type { CpuSample } from './proc-cpu.ts';
import { cpuMsOf, cpuSpent, natsServerPid, natsServerUsage, ownCpuMs } from './proc-cpu.ts';

type Row = [string, string, string?];
const CLUSTER = 'fanout';
const NODES = 1000;
const PARTITIONS = 4;
const ORIGIN = 'origin: the pod\'s Ready transition (trigger-time annotation)';
/**
 * The agents' processes run at this nice level (FANOUT_AGENT_NICE): in a cluster each agent has
 * its node's CPU and the control plane its own, while here 1000 agents share 2 cores with the
 * slicer, the hints service and nats-server. At equal priority the agents' share starves the
 * pipeline they measure; niced, they still get every cycle the pipeline leaves idle.
 */
const AGENT_NICE = Number(process.env['FANOUT_AGENT_NICE'] ?? 10);

/** Lowers a child's CPU priority to AGENT_NICE (best effort: a failure leaves it as it is, and says so). */
function niceChild(pid: number | undefined, what: string): void {
  if (pid === undefined || AGENT_NICE === 0) return;
  try {
    setPriority(pid, AGENT_NICE);
  } catch (e) {
    process.stderr.write(`fanout bench: could not renice ${what} (pid ${pid}): ${errText(e)}\n`);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errText = (e: unknown): string => (e instanceof Error ? (e.message.split('\n')[0] ?? '') : String(e));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

/** Epoch ms of an RFC3339(Nano) UTC instant, sub-millisecond digits kept; null when absent or unparsable. */
export function epochMsOf(t: string | undefined): number | null {
  const m = t === undefined ? null : /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(t);
  if (m === null) return null;
  const base = Date.parse(`${m[1]}Z`);
  return Number.isNaN(base) ? null : base + (m[2] === undefined ? 0 : Number(`0.${m[2]}`) * 1000);
}

// ---- the views as they are written --------------------------------------------------------

/**
 * The kind of Service a key (or slice path) belongs to: the bench's even Services route
 * PreferClose (zone views hold a zone's share), the odd ones have no topology (every zone view
 * holds every endpoint); undefined for a key of no bench Service.
 */
function serviceKindOf(key: string): 'preferClose' | 'none' | undefined {
  const service = Number(/(?:^|\.)svc-(\d+)\./.exec(key)?.[1] ?? NaN);
  return Number.isNaN(service) ? undefined : service % 2 === 0 ? 'preferClose' : 'none';
}

/** An entry of a bucket watch. */
type WatchEntry = Awaited<ReturnType<KV['watch']>> extends AsyncIterable<infer E> ? E : never;

/** Every key of the run's cluster in a bucket, from its current values on, each entry to `onEntry` until stop(). */
class ClusterKeysWatch {
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;

  start(kv: KV, what: string, onEntry: (e: WatchEntry) => void): void {
    this.#loop = (async (): Promise<void> => {
      const w = await kv.watch({ key: `${CLUSTER}.>` });
      this.#stop.signal.addEventListener('abort', () => w.stop(), { once: true });
      for await (const e of w) onEntry(e);
    })().catch((err: unknown) => void process.stderr.write(`fanout bench: ${what} watch ended: ${errText(err)}\n`));
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }
}

/** One put of a view entry, as the bench's own watch of the whole bucket saw it. */
interface ViewPut {
  readonly revision: number;
  readonly zone: string;
  /** `<ns>.<service>.<slice>`: the same slice in every zone. */
  readonly slice: string;
  /** The server's timestamp of the put (epoch ms): when the hints service wrote it. */
  readonly written: number;
  /** The slice's trigger-time annotation (epoch ms); null without one. */
  readonly trigger: number | null;
  /** Whether the entry's endpoints or ports differ from its previous value (else only metadata changed). */
  readonly changes: boolean;
  readonly bytes: number;
  /** The value as stored: the raw floor publishes these very bytes. */
  readonly value: Uint8Array;
}

/** A pod flip resolved in the unfiltered view: when it was written there, and the trigger time that put carried. */
interface Resolved {
  readonly flip: Flip;
  readonly written: number;
  readonly trigger: number | null;
  /** The change that put belongs to (see changeKey). */
  readonly change: string;
}

/**
 * Watches every key of the run's views bucket from before the services start: each put's
 * revision, zone, server timestamp, trigger time and whether it changed the endpoints; and, in
 * the unfiltered view, when each flip of the generator (keyed by pod IP and Ready) showed up.
 */
class ViewObserver {
  readonly puts = new Map<number, ViewPut>();
  readonly resolved: Resolved[] = [];
  /**
   * Unfiltered-view puts that showed a generator flip, by how their trigger time compares with
   * the earliest flip they showed: equal, later (an earlier change of the slice was coalesced
   * into this write: the view keeps only the newest trigger time), earlier, or none.
   */
  triggerChecks = { match: 0, later: 0, earlier: 0, none: 0, all: 0 };
  deletes = 0;
  lastPutAt = 0;
  /** The newest revision of each zone's keys: an agent of the zone that applied it is caught up. */
  readonly lastRevision = new Map<string, number>();
  readonly #signature = new Map<string, string>();
  readonly #pending = new Map<string, Flip>();
  readonly #watch = new ClusterKeysWatch();

  start(kv: KV): void {
    this.#watch.start(kv, 'views', (e) => {
      const [, zone = '', ...rest] = e.key.split('.');
      this.lastPutAt = Date.now();
      this.lastRevision.set(zone, e.revision);
      if (e.operation !== 'PUT') {
        this.deletes++;
        this.#signature.delete(e.key);
        return;
      }
      const s = e.json<EndpointSlice>();
      const sig = JSON.stringify([s.addressType, s.ports, s.endpoints]);
      const changes = this.#signature.get(e.key) !== sig;
      this.#signature.set(e.key, sig);
      const written = e.created.getTime();
      const trigger = epochMsOf(s.metadata.annotations?.[ANNOTATION_TRIGGER_TIME]);
      this.puts.set(e.revision, { revision: e.revision, zone, slice: rest.join('.'), written, trigger, changes, bytes: e.key.length + e.value.length, value: e.value });
      if (zone === UNZONED_VIEW && changes) this.#resolve(s, written, trigger, changeKey(rest.join('.'), trigger));
    });
  }

  #resolve(s: EndpointSlice, written: number, trigger: number | null, change: string): void {
    let earliest = Infinity;
    for (const ep of s.endpoints) {
      const ready = ep.conditions?.ready !== false;
      for (const ip of ep.addresses) {
        const f = this.#pending.get(ip);
        if (f === undefined || f.ready !== ready) continue;
        this.#pending.delete(ip);
        this.resolved.push({ flip: f, written, trigger, change });
        earliest = Math.min(earliest, f.at);
      }
    }
    if (earliest !== Infinity) {
      const c = this.triggerChecks;
      c.all++;
      if (trigger === null) c.none++;
      else if (trigger === earliest) c.match++;
      else if (trigger > earliest) c.later++;
      else c.earlier++;
    }
  }

  expect(f: Flip): void {
    this.#pending.set(f.ip, f);
  }

  get pending(): number {
    return this.#pending.size;
  }

  keysIn(zone: string): number {
    let n = 0;
    for (const k of this.#signature.keys()) if (k.split('.')[1] === zone) n++;
    return n;
  }

  close(): Promise<void> {
    return this.#watch.stop();
  }
}

// ---- kube-proxy's way: every EndpointSlice, whole ----------------------------------------------

/**
 * What kube-proxy receives: it watches every EndpointSlice of the cluster, each update the whole
 * object. Here, the `hinted` bucket: each slice as the hints service finished it, which is what
 * the publisher writes to the Kubernetes API (less the API's own fields, managedFields and
 * resourceVersion, so the figure understates kube-proxy's bytes). Counts the puts written from
 * `since` on, key and value as stored, split by kind of Service as the views are.
 */
class KubeProxyWay {
  bytes = 0;
  entries = 0;
  readonly byClass = { preferClose: 0, none: 0 };
  since = Infinity;
  readonly #watch = new ClusterKeysWatch();

  start(kv: KV): void {
    this.#watch.start(kv, 'hinted', (e) => {
      if (e.operation !== 'PUT' || e.created.getTime() < this.since) return;
      const bytes = e.key.length + e.value.length;
      this.bytes += bytes;
      this.entries++;
      const kind = serviceKindOf(e.key);
      if (kind !== undefined) this.byClass[kind] += bytes;
    });
  }

  close(): Promise<void> {
    return this.#watch.stop();
  }
}

// ---- lightweight agents (worker processes) -------------------------------------------------

interface WorkerReport {
  readonly arrivals: [number, [number, number]][];
  readonly perAgent: [string, { entries: number }][];
  readonly rssBytes: number;
  /** Times one of its agents read its views again, by why (its feed missed deliveries or fell silent). */
  readonly resyncs: [string, number][];
}

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<{ rssBytes: number; retries: number }>;
  /** Every agent subscribes to its zone's raw subject for `round` of the floor, counting afresh; resolves once all have. */
  readonly rawSubscribe: (round: string) => Promise<void>;
  /** Per agent: raw messages parsed, and when the last arrived (epoch ms). */
  readonly rawProgress: () => Promise<Map<string, { count: number; last: number }>>;
  /** The newest revision each of its agents applied. */
  readonly progress: () => Promise<Map<string, number>>;
  readonly report: () => Promise<WorkerReport>;
}

/** Sends `request` to a worker and resolves with the `field` of its first answer that has one. */
function askChild<T>(child: ChildProcess, request: object, field: string): Promise<T> {
  return new Promise<T>((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (m[field] === undefined) return;
      child.off('message', on);
      resolve(m[field] as T);
    };
    child.on('message', on);
    child.send(request);
  });
}

function startWorker(agents: { id: string; filter: string; raw: string }[], url: string, bucket: string): Worker {
  const child = fork(new URL('./fanout-agents.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  niceChild(child.pid, 'an agents\' process');
  const ready = new Promise<{ rssBytes: number; retries: number }>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; rssBytes?: number; retries?: number; error?: string }) => {
      if (m.error !== undefined) reject(new Error(m.error));
      if (m.ready) resolve({ rssBytes: m.rssBytes ?? 0, retries: m.retries ?? 0 });
    });
    child.once('exit', (code) => reject(new Error(`fanout worker exited with ${code}`)));
  });
  ready.catch(() => {}); // the caller awaits all of them; a second failure must not end the process
  child.send({ agents, url, bucket, cluster: CLUSTER });
  const ask = <T>(request: object, field: string) => askChild<T>(child, request, field);
  const progress = async () => new Map(await ask<[string, number][]>({ progress: true }, 'progress'));
  const report = () =>
    new Promise<WorkerReport>((resolve) => {
      child.on('message', (m: Partial<WorkerReport>) => {
        if (m.arrivals !== undefined) resolve(m as WorkerReport);
      });
      child.send({ report: true });
    });
  const rawSubscribe = async (round: string) => void (await ask<boolean>({ rawSubscribe: round }, 'rawReady'));
  const rawProgress = async () => new Map(await ask<[string, { count: number; last: number }][]>({ rawProgress: true }, 'rawProgress'));
  return { child, ready, progress, report, rawSubscribe, rawProgress };
}


/** A CDF per series as an SVG polyline chart, latency on a log axis. */
export function latencySvg(series: readonly { name: string; color: string; values: readonly number[]; dashed?: boolean }[], title = 'pod Ready transition → applied on every agent that must apply it (CDF)'): string {
  const [w, h, left, bottom] = [640, 360, 60, 40];
  const all = series.flatMap((s) => s.values).filter((v) => v > 0);
  const lo = Math.max(0.1, Math.min(...all));
  const hi = Math.max(lo * 10, ...all);
  const x = (v: number) => left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (w - left - 20);
  const y = (f: number) => h - bottom - f * (h - bottom - 20);
  const lines = series.map((s) => {
    const sorted = [...s.values].sort((a, b) => a - b);
    const pts = sorted.map((v, i) => `${x(v).toFixed(1)},${y((i + 1) / sorted.length).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5,4"' : ''} points="${pts}"/>`;
  });
  const ticks: string[] = [];
  for (let d = Math.pow(10, Math.floor(Math.log10(lo))); d <= hi; d *= 10) {
    if (d < lo) continue;
    ticks.push(`<line x1="${x(d)}" y1="${y(0)}" x2="${x(d)}" y2="${y(1)}" stroke="#ddd"/><text x="${x(d)}" y="${h - bottom + 16}" font-size="11" text-anchor="middle">${d} ms</text>`);
  }
  const legend = series.map((s, i) => `<text x="${left + 10}" y="${30 + i * 16}" font-size="12" fill="${s.color}">${s.name} (n=${s.values.length})</text>`);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif">`,
    `<rect width="${w}" height="${h}" fill="white"/>`,
    ...ticks,
    `<line x1="${left}" y1="${y(0)}" x2="${w - 20}" y2="${y(0)}" stroke="black"/><line x1="${left}" y1="${y(0)}" x2="${left}" y2="${y(1)}" stroke="black"/>`,
    `<text x="${left - 8}" y="${y(1) + 4}" font-size="11" text-anchor="end">1.0</text><text x="${left - 8}" y="${y(0.5) + 4}" font-size="11" text-anchor="end">0.5</text>`,
    `<text x="${w / 2}" y="${h - 6}" font-size="12" text-anchor="middle">${title}</text>`,
    ...lines,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

// ---- full agents (their own process) ----------------------------------------------------

/** What a full agent (dry-run, bench/fanout-full-agents.ts) saw: when each view revision reached it, and when it wrote rules. */
interface FullAgent {
  readonly zone: string;
  readonly arrivals: ReadonlyMap<number, number>;
  readonly writes: readonly number[];
}

interface FullWorker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  /** The newest view revision each agent (by node) received. */
  readonly progress: () => Promise<Map<string, number>>;
  readonly report: () => Promise<{ node: string; arrivals: [number, number][]; writes: number[] }[]>;
}

function startFullWorker(agents: { node: string; zone: string }[], url: string, names: Stack['run']['names']): FullWorker {
  const child = fork(new URL('./fanout-full-agents.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  niceChild(child.pid, 'the full agents\' process');
  const ready = new Promise<void>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; error?: string }) => {
      if (m.error !== undefined) reject(new Error(`full agents: ${m.error}`));
      if (m.ready) resolve();
    });
    child.once('exit', (code) => reject(new Error(`full agents' process exited with ${code}`)));
  });
  ready.catch(() => {}); // the caller awaits it
  const ask = <T>(request: object, field: string) => askChild<T>(child, request, field);
  child.send({ agents, url, cluster: CLUSTER, names: { svc: names.svc, views: names.views, kube: names.kube, prefix: names.prefix } });
  return {
    child,
    ready,
    progress: async () => new Map(await ask<[string, number][]>({ progress: true }, 'progress')),
    report: () => ask({ report: true }, 'full'),
  };
}

// ---- changes and their latencies ------------------------------------------------------------

/** One change as the agents see it: a slice rewritten for one trigger time, and the zone views whose endpoints it changed. */
interface Change {
  readonly trigger: number;
  readonly puts: ViewPut[];
}

/** A change's identity: the slice (the same in every zone) and the trigger time its puts carry. */
const changeKey = (slice: string, trigger: number | null) => `${slice}|${trigger}`;

/** The changes whose trigger time lies in [from, to], by changeKey. */
function changesBetween(puts: Iterable<ViewPut>, from: number, to: number): Map<string, Change> {
  const out = new Map<string, Change>();
  for (const p of puts) {
    if (!p.changes || p.trigger === null || p.trigger < from || p.trigger > to) continue;
    const key = changeKey(p.slice, p.trigger);
    let c = out.get(key);
    if (c === undefined) out.set(key, (c = { trigger: p.trigger, puts: [] }));
    c.puts.push(p);
  }
  return out;
}

/**
 * When a change had reached every agent that must apply it (`last`), the slowest of its views
 * from KV write to its last agent (`fan`), and when its last view was written; `last` is null
 * when some agent never got one of its views.
 */
function completion(c: Change, arrivals: ReadonlyMap<number, [number, number]>, want: (zone: string) => number): { last: number | null; fan: number; written: number } {
  let last = -Infinity;
  let fan = -Infinity;
  let written = -Infinity;
  let complete = true;
  for (const p of c.puts) {
    written = Math.max(written, p.written);
    const n = want(p.zone);
    if (n === 0) continue;
    const a = arrivals.get(p.revision);
    if (a === undefined || a[1] < n) {
      complete = false;
      continue;
    }
    last = Math.max(last, a[0]);
    fan = Math.max(fan, a[0] - p.written);
  }
  return { last: complete && last > -Infinity ? last : null, fan, written };
}

interface Latencies {
  /** From the trigger time, per change (to its last agent), ascending. */
  readonly fromReady: number[];
  /** From each view's KV write to its last agent, per change (the slowest of its views), ascending. */
  readonly fromWrite: number[];
  /** From the trigger time to the last of the change's views written (the pipeline's share), ascending. */
  readonly toWrite: number[];
  /** Changes some agent that had to apply them never got. */
  readonly missing: number;
}

function latencies(changes: readonly Change[], arrivals: ReadonlyMap<number, [number, number]>, want: (zone: string) => number): Latencies {
  const fromReady: number[] = [];
  const fromWrite: number[] = [];
  const toWrite: number[] = [];
  let missing = 0;
  for (const c of changes) {
    const { last, fan, written } = completion(c, arrivals, want);
    toWrite.push(written - c.trigger);
    if (last === null) missing++;
    else {
      fromReady.push(last - c.trigger);
      fromWrite.push(fan);
    }
  }
  const asc = (xs: number[]) => xs.sort((a, b) => a - b);
  return { fromReady: asc(fromReady), fromWrite: asc(fromWrite), toWrite: asc(toWrite), missing };
}

/** Trigger → first rules file written after the change's views of its zone reached the agent, per (change, full agent). */
function fullAgentLatencies(changes: readonly Change[], agents: readonly FullAgent[]): number[] {
  const out: number[] = [];
  for (const c of changes) {
    for (const a of agents) {
      const arrived = c.puts.filter((p) => p.zone === a.zone).map((p) => a.arrivals.get(p.revision));
      if (arrived.length === 0 || arrived.some((t) => t === undefined)) continue;
      const last = Math.max(...(arrived as number[]));
      const write = a.writes.find((w) => w >= last);
      if (write !== undefined) out.push(write - c.trigger);
    }
  }
  return out.sort((x, y) => x - y);
}

const triple = (xs: readonly number[]) => `${fmtMs(percentile(xs, 50))} / ${fmtMs(percentile(xs, 99))} / ${fmtMs(xs.at(-1) ?? NaN)}`;

export interface FanoutFigures {
  agents?: number;
  steady_p50_ms?: number;
  steady_p99_ms?: number;
  steady_max_ms?: number;
  burst_p50_ms?: number;
  burst_p99_ms?: number;
  burst_max_ms?: number;
  bytes_per_agent_scoped?: number;
  /** kube-proxy's way: every EndpointSlice, whole (the hinted bucket). */
  bytes_per_agent_unscoped?: number;
  /** Our agent on an unzoned node: the unfiltered view (every endpoint, as proxies read it). */
  bytes_per_agent_unfiltered_view?: number;
  /** Pod changes per second the generator achieved. */
  steady_rate?: number;
  burst_rate?: number;
  /** Pod changes per second that reached the views in the burst (first flip to the last one written). */
  burst_pipeline_rate?: number;
  /** The burst's fan-out: its first view write to the last arrival on any agent. */
  burst_fanout_ms?: number;
  /** The same writes as plain NATS messages, published at once, to the last agent's parse. */
  raw_fanout_floor_ms?: number;
  /** The same, each published when hints wrote its view (the burst's pacing, without JetStream or the pipeline). */
  raw_fanout_paced_ms?: number;
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number, status: () => string): Promise<boolean> {
  const t0 = Date.now();
  let said = t0;
  while (!done()) {
    if (Date.now() - t0 > timeoutMs) return false;
    if (Date.now() - said > 10_000) {
      process.stderr.write(`fanout bench: waiting for ${what}: ${status()}\n`);
      said = Date.now();
    }
    await sleep(100);
  }
  return true;
}

export async function runFanoutBench(opts: { quick: boolean }): Promise<FanoutFigures> {
  const url = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
  const pgUrl = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const agentCount = Number(process.env['FANOUT_AGENTS'] ?? (opts.quick ? 100 : 1000));
  const workers = Number(process.env['FANOUT_WORKERS'] ?? 4);
  const fullCount = Number(process.env['FANOUT_FULL_AGENTS'] ?? (opts.quick ? 2 : 10));
  const serviceCount = opts.quick ? 200 : 1000;
  const steadySeconds = opts.quick ? 5 : 15;
  const burst = opts.quick ? 100 : 500;
  const rows: Row[] = [];
  const figures: FanoutFigures = {};
  const progress = (what: string) => process.stderr.write(`fanout bench: ${what} (load ${load()})\n`);
  const t0 = performance.now();
  const load0 = load();

  let nc: NatsConnection;
  try {
    nc = await connectNats({ url, name: 'fanout-bench', timeoutMs: 5000 });
    await (await createDb({ url: pgUrl, max: 1 })).close();
  } catch (e) {
    rows.push(['fanout', 'skipped', `needs NATS and Postgres: ${errText(e)}`]);
    printTable('fanout', rows);
    return figures;
  }

  progress('building the services (.bench/fanout-build/dist)');
  const builtRoot = join(REPO_ROOT, '.bench', 'fanout-build');
  await buildDist(REPO_ROOT, join(builtRoot, 'dist'));
  const run = freshRunNames(newRunId(Date.now()));
  const logDir = join(tmpdir(), 'slicemesh-bench', `fanout-${run.id}`);
  const observer = new ViewObserver();
  const kubeProxy = new KubeProxyWay();
  let stack: Stack | undefined;
  const started: Worker[] = [];
  let full: FullAgent[] = [];
  let fullWorker: FullWorker | undefined;
  let cleaning: Promise<void> | undefined;
  /** Stops every process this section started and removes the run's streams, buckets and schema. Idempotent. */
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      // Workers that reported close their connections and exit on their own (a profile, when
      // asked for, is written then); whatever has not exited after 10 s is killed.
      const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;
      const children = [...(fullWorker === undefined ? [] : [fullWorker.child]), ...started.map((s) => s.child)].filter(running);
      await Promise.race([Promise.all(children.map((c) => new Promise((r) => c.once('exit', r)))), sleep(10_000)]);
      for (const c of children) if (running(c)) c.kill();
      await observer.close();
      await kubeProxy.close();
      await stack?.close().catch((e: unknown) => progress(`stopping the services: ${errText(e)}`));
      await deleteRunState(url, pgUrl, run).catch((e: unknown) => progress(`removing the run state: ${errText(e)}`));
      await nc.close().catch(() => {});
    })());
  /** At exit (a crash included), whatever still runs is killed. */
  const killChildren = () => {
    for (const s of started) if (s.child.exitCode === null) s.child.kill('SIGKILL');
    if (fullWorker?.child.exitCode === null) fullWorker.child.kill('SIGKILL');
    for (const c of stack?.components() ?? []) {
      const pid = c.pid();
      if (pid !== undefined && !c.isStopped()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  };
  const onSignal = (signal: NodeJS.Signals) => {
    progress(`${signal}: stopping the services and agents, removing the run state`);
    void Promise.race([cleanup(), sleep(30_000)]).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('exit', killChildren);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, run.names);
    await ensureKv(nc, run.names.svc);
    await ensureKv(nc, run.names.views);
    observer.start(await openKv(nc, run.names.views));

    // The cluster into KUBE first, like the watcher's initial lists: the services start on a whole snapshot.
    let t = performance.now();
    const cluster = new FanoutCluster(jetstream(nc), { cluster: CLUSTER, partitions: PARTITIONS, prefix: run.names.prefix, nodes: NODES, services: serviceCount });
    const objects = await cluster.seed();
    rows.push([`cluster into KUBE as the watcher publishes it: ${NODES} nodes, ${serviceCount} Services, ${serviceCount * PODS_PER_SERVICE} pods`, fmtMs(performance.now() - t), `${objects} objects; 3 zones + ${UNZONED_NODES} unzoned nodes`]);

    progress('starting the slicer and the hints service (child processes)');
    t = performance.now();
    stack = await startStack({
      natsUrl: url, databaseUrl: pgUrl, run, cluster: CLUSTER, partitions: PARTITIONS,
      // No watcher: this process feeds KUBE. The URL is never called.
      kubeServer: 'http://127.0.0.1:9', services: ['slicer', 'hints'], agents: 'none', processes: true, builtRoot,
      runDir: join(logDir, 'run'), logDir, logLevel: 'info',
      // The services' own defaults (BATCH_PERIOD 0, ACK_WAIT 30s), as the backbone section runs them.
      batchPeriodMs: 0, ackWaitMs: 30_000,
      // One replica each: a lease only fences it from itself. At the 5 s default a busy 2-core
      // machine can miss a renewal and leave the only hints replica fenced, consuming nothing.
      envOverrides: () => ({ LEASE_TTL: '60s' }),
    });
    const ready = await Promise.race([stack.ready.then(() => true), sleep(180_000).then(() => false)]);
    if (!ready) throw new Error(`the slicer and the hints service were not ready within 180 s; logs in ${logDir}`);
    const viewsReady = await waitFor('the initial views', () => observer.keysIn(UNZONED_VIEW) >= serviceCount && Date.now() - observer.lastPutAt > 1500, 300_000, () => `${observer.keysIn(UNZONED_VIEW)} of ${serviceCount} unfiltered views`);
    if (!viewsReady) throw new Error(`the views never held every Service (${observer.keysIn(UNZONED_VIEW)} of ${serviceCount}); logs in ${logDir}`);
    rows.push(['slicer + hints (node dist/<svc>.js) ready, every zone view written', fmtMs(performance.now() - t), `${observer.puts.size} view entries; service logs in ${logDir}`]);
    kubeProxy.start(await openKv(nc, run.names.hinted));

    // Each zone's plain subject for the raw fan-out floor.
    const rawSubject = (zone: string) => `${run.names.prefix}fanout-raw.${encodeToken(zone)}`;
    // One agent per node (the first agentCount nodes, spread over the zones), plus the unscoped one.
    const zoneOf = (i: number) => cluster.zoneOf(i) ?? UNZONED_VIEW;
    const specs = Array.from({ length: agentCount }, (_, i) => {
      const node = Math.floor((i * NODES) / agentCount);
      return { id: `agent-${node}`, zone: zoneOf(node), filter: zoneViewsFilter(CLUSTER, zoneOf(node)), raw: rawSubject(zoneOf(node)) };
    });
    const unscoped = { id: 'unscoped', zone: UNZONED_VIEW, filter: zoneViewsFilter(CLUSTER, UNZONED_VIEW), raw: rawSubject(UNZONED_VIEW) };
    const perZone = new Map<string, number>();
    for (const s of [...specs, unscoped]) perZone.set(s.zone, (perZone.get(s.zone) ?? 0) + 1);
    const zoneById = new Map([...specs, unscoped].map((s) => [s.id, s.zone]));
    progress(`starting ${agentCount} agents in ${workers} processes`);
    // The nats-server serving the run on this machine, if any: its CPU and memory are reported.
    const natsPid = natsServerPid(url);
    const server0 = natsServerUsage(natsPid);
    t = performance.now();
    for (let w = 0; w < workers; w++) {
      const mine = specs.filter((_, i) => i % workers === w).map(({ id, filter, raw }) => ({ id, filter, raw }));
      started.push(startWorker(w === 0 ? [...mine, unscoped] : mine, url, run.names.views));
    }
    const atReady = await Promise.all(started.map((s) => s.ready));
    const workerRss = atReady.map((r) => r.rssBytes);
    const retried = atReady.reduce((n, r) => n + r.retries, 0);
    rows.push([`${agentCount} agents connected, each with its initial zone set`, fmtMs(performance.now() - t), `${workers} processes at nice ${AGENT_NICE}, one NATS connection per agent, one shared feed per zone${retried > 0 ? `; ${retried} setups timed out and were retried` : ''}`]);
    t = performance.now();
    const fullSpecs = Array.from({ length: fullCount }, (_, k) => ({ node: `node-${k}`, zone: zoneOf(k) }));
    const fullZone = new Map(fullSpecs.map((f) => [f.node, f.zone]));
    const fw = (fullWorker = startFullWorker(fullSpecs, url, stack.run.names));
    await fw.ready;
    rows.push([`${fullCount} full agents (dry-run) ready`, fmtMs(performance.now() - t), 'one process of their own; each renders the iptables ruleset of its zone after every sync']);

    // Who spends the CPU of a phase: nats-server, the agents' processes, the pipeline's services.
    const cpuSample = (): CpuSample => {
      const out: CpuSample = new Map([['nats-server', cpuMsOf(natsPid)]]);
      out.set(`agents (${started.length} processes)`, started.reduce((n, w) => n + cpuMsOf(w.child.pid), 0));
      out.set('full agents', cpuMsOf(fullWorker?.child.pid));
      for (const c of stack?.components() ?? []) out.set(c.name, cpuMsOf(c.pid()));
      out.set('bench (generator, observer)', ownCpuMs());
      return out;
    };
    const cpuRow = (label: string, before: CpuSample, after: CpuSample, wallMs: number): Row => [
      `    CPU ${label}, by process`,
      `${fmtMs(wallMs)} wall`,
      cpuSpent(before, after).map(([who, ms]) => `${who} ${fmtMs(ms)}`).join(', '),
    ];
    const cpuRows: Row[] = [];

    /**
     * The floor this machine sets for the burst's fan-out: the same view writes (zone and value,
     * byte for byte, in order; a padding of the same size parsed faster than a slice's nested
     * endpoints, so the floor was lower than any agent could reach) as plain NATS messages to
     * each zone's subject, which every agent of the zone receives on its own connection and parses — what any agent must do to apply a change,
     * without JetStream, our feed or the pipeline. `paced`: each published when the hints service
     * wrote it (relative to the first), so the deliveries trickle in as the burst's did; else all
     * at once. Returns the deliveries and the span from the first publish to the last arrival.
     */
    const rawFloor = async (ph: { from: number; to: number }, paced: boolean): Promise<{ deliveries: number; ms: number; missing: number } | null> => {
      const puts = [...observer.puts.values()].filter((p) => p.trigger !== null && p.trigger >= ph.from && p.trigger <= ph.to).sort((a, b) => a.revision - b.revision);
      if (puts.length === 0) return null;
      const round = paced ? 'paced' : 'once';
      progress(`the raw fan-out floor (${paced ? 'paced as written' : 'all at once'}): ${puts.length} messages as plain NATS to every agent of their zone`);
      await Promise.all(started.map((w) => w.rawSubscribe(round)));
      const want = new Map<string, number>();
      for (const p of puts) want.set(p.zone, (want.get(p.zone) ?? 0) + 1);
      const cpu0 = cpuSample();
      const t0 = Date.now();
      const firstWritten = puts[0]?.written ?? 0;
      for (const p of puts) {
        const wait = paced ? t0 + (p.written - firstWritten) - Date.now() : 0;
        if (wait > 0) {
          nc.flush().catch(() => {});
          await sleep(wait);
        }
        nc.publish(`${rawSubject(p.zone)}.${round}`, p.value);
      }
      await nc.flush();
      let got = new Map<string, { count: number; last: number }>();
      const complete = () => [...zoneById].every(([id, zone]) => (got.get(id)?.count ?? 0) >= (want.get(zone) ?? 0));
      for (const until = Date.now() + 60_000; Date.now() < until; await sleep(100)) {
        got = new Map((await Promise.all(started.map((w) => w.rawProgress()))).flatMap((m) => [...m]));
        if (complete()) break;
      }
      cpuRows.push(cpuRow(`of the raw floor, ${paced ? 'paced as written' : 'all at once'}, until every agent parsed its last message`, cpu0, cpuSample(), Date.now() - t0));
      let deliveries = 0;
      let last = t0;
      let missing = 0;
      for (const [id, zone] of zoneById) {
        const g = got.get(id);
        deliveries += g?.count ?? 0;
        missing += Math.max(0, (want.get(zone) ?? 0) - (g?.count ?? 0));
        last = Math.max(last, g?.last ?? 0);
      }
      return { deliveries, ms: last - t0, missing };
    };

    const runPhase = async (name: string, count: number, perSecond: number): Promise<{ flips: Flip[]; from: number; to: number; unacked: number; drained: boolean }> => {
      progress(`${name}: ${count} pod Ready transitions at ${perSecond}/s`);
      const cpu0 = cpuSample();
      const wall0 = Date.now();
      const flips: Flip[] = [];
      // At most 64 publishes awaiting KUBE's ack (the watcher's PUBLISH_WINDOW is alike): past
      // that the generator waits, and the achieved rate shows it.
      const inflight = new Set<Promise<boolean>>();
      const start = Date.now();
      for (let k = 0; k < count; k++) {
        const wait = start + (k * 1000) / perSecond - Date.now();
        if (wait > 0) await sleep(wait);
        while (inflight.size >= 64) await Promise.race(inflight);
        const f = cluster.flip();
        observer.expect(f);
        flips.push(f);
        const p = f.acked.finally(() => inflight.delete(p));
        inflight.add(p);
      }
      const unacked = (await Promise.all(flips.map((f) => f.acked))).filter((ok) => !ok).length;
      const drained = await waitFor(`${name} to reach the views`, () => observer.pending === 0, 120_000, () => `${observer.pending} pod changes not in the unfiltered view yet`);
      await sleep(500); // a last coalesced write
      // Then until every agent has applied its zone's newest revision (at most 120 s more), and
      // the full agents have synced it (MIN_SYNC_PERIOD 1 s).
      let behind = 0;
      const caughtUp = async () => {
        const want = new Map(observer.lastRevision);
        const applied = (await Promise.all(started.map((w) => w.progress()))).flatMap((m) => [...m]);
        behind = applied.filter(([id, rev]) => rev < (want.get(zoneById.get(id) ?? '') ?? 0)).length;
        behind += [...(await fw.progress())].filter(([node, rev]) => rev < (want.get(fullZone.get(node) ?? '') ?? 0)).length;
        return behind === 0;
      };
      const t1 = Date.now();
      while (!(await caughtUp()) && Date.now() - t1 < 120_000) {
        if ((Date.now() - t1) % 10_000 < 500) progress(`${name}: ${behind} agents still behind their zone's newest view`);
        await sleep(500);
      }
      cpuRows.push(cpuRow(`${name}, from its first change until every agent caught up`, cpu0, cpuSample(), Date.now() - wall0));
      await sleep(2000);
      return { flips, from: flips[0]?.at ?? start, to: flips.at(-1)?.at ?? start, unacked, drained };
    };
    kubeProxy.since = Date.now();
    const steady = await runPhase('steady', steadySeconds * 20, 20);
    const burstRun = await runPhase('burst', burst, 500);
    const server1 = natsServerUsage(natsPid);
    const floor = await rawFloor(burstRun, false);
    const pacedFloor = await rawFloor(burstRun, true);
    const reports = await Promise.all(started.map((s) => s.report()));
    full = (await fw.report()).map((r) => ({ zone: fullZone.get(r.node) ?? '', arrivals: new Map(r.arrivals), writes: r.writes }));

    const arrivals = new Map<number, [number, number]>();
    for (const r of reports) {
      for (const [rev, [at, n]] of r.arrivals) {
        const a = arrivals.get(rev);
        arrivals.set(rev, a === undefined ? [at, n] : [Math.max(a[0], at), a[1] + n]);
      }
    }
    const want = (zone: string) => perZone.get(zone) ?? 0;
    const every = changesBetween(observer.puts.values(), -Infinity, Infinity);
    const phases = [
      { key: 'steady' as const, label: 'steady 20/s', r: steady, target: '1 s' },
      { key: 'burst' as const, label: `burst ${burst} at 500/s`, r: burstRun, target: '2 s' },
    ].map((ph) => {
      const changes = [...changesBetween(observer.puts.values(), ph.r.from, ph.r.to).values()];
      const mine = new Set(ph.r.flips);
      return { ...ph, changes, l: latencies(changes, arrivals, want), resolved: observer.resolved.filter((x) => mine.has(x.flip)) };
    });
    rows.push([`latency ${ORIGIN}`, '', 'to the change applied on every agent whose zone view it changed; a change = a slice written for one trigger time']);
    for (const ph of phases) {
      const { l, r } = ph;
      const rate = (r.flips.length - 1) / ((r.to - r.from) / 1000);
      const reached = ph.resolved.length;
      const lastWritten = Math.max(...ph.resolved.map((x) => x.written));
      const pipelineRate = reached / ((lastWritten - r.from) / 1000);
      figures[`${ph.key}_p50_ms`] = percentile(l.fromReady, 50);
      figures[`${ph.key}_p99_ms`] = percentile(l.fromReady, 99);
      figures[`${ph.key}_max_ms`] = l.fromReady.at(-1) ?? NaN;
      figures[`${ph.key}_rate`] = rate;
      if (ph.key === 'burst') figures.burst_pipeline_rate = pipelineRate;
      const issues = [
        l.missing > 0 ? `${l.missing} changes not seen by every agent (left out)` : '',
        r.unacked > 0 ? `${r.unacked} KUBE publishes not acknowledged` : '',
        r.drained ? '' : `${r.flips.length - reached} pod changes never reached the views within 120 s`,
      ].filter((x) => x !== '');
      rows.push([`  ${ph.label}: pod Ready → applied on every agent, p50 / p99 / max`, triple(l.fromReady), `${l.fromReady.length} changes from ${r.flips.length} pod changes generated at ${rate.toFixed(1)}/s achieved; target p99 <= ${ph.target}${issues.length > 0 ? `; ${issues.join(', ')}` : ''}`]);
      rows.push([`    of which pod Ready → last zone view written by hints`, triple(l.toWrite), `pipeline (KUBE → slicer → SLICES → hints → KV); ${reached} of ${r.flips.length} pod changes in the views, ${pipelineRate.toFixed(1)}/s from the first change to the last written`]);
      rows.push([`    view written (KV) → applied on every agent`, triple(l.fromWrite), 'the fan-out alone (origin: the server timestamp of the put)']);
      rows.push([`    pod Ready → rules written by a full agent`, triple(fullAgentLatencies(ph.changes, full)), '(change, agent) pairs; first dry-run write after the change reached the agent (MIN_SYNC_PERIOD 1 s)']);
      // Per pod change, from the generator's own record (pod IP → when it flipped it): the change
      // whose unfiltered view first showed it, applied on every agent. Differs from the row above
      // where a view carried a later trigger time than some pod change it also applied (two
      // changes of one slice coalesced past the slicer, which keeps the earliest).
      const perFlip: number[] = [];
      let unapplied = 0;
      for (const x of ph.resolved) {
        const c = every.get(x.change);
        const last = c === undefined ? null : completion(c, arrivals, want).last;
        if (last === null) unapplied++;
        else perFlip.push(last - x.flip.at);
      }
      perFlip.sort((a, b) => a - b);
      rows.push([`    cross-check per pod change (generator's record, keyed by pod IP): → applied on every agent`, triple(perFlip), `${perFlip.length} pod changes${unapplied > 0 ? `, ${unapplied} whose view had no trigger time or missed an agent` : ''}; origin: when the bench flipped the pod, not the annotation`]);
    }
    rows.push(...cpuRows);
    if (floor !== null) {
      // The burst's own fan-out, from its first view write to the last arrival of any of its views.
      const burstPuts = [...observer.puts.values()].filter((p) => p.trigger !== null && p.trigger >= burstRun.from && p.trigger <= burstRun.to);
      let ours = 0;
      let lastArrival = -Infinity;
      for (const p of burstPuts) {
        const a = arrivals.get(p.revision);
        if (a === undefined) continue;
        ours += a[1];
        lastArrival = Math.max(lastArrival, a[0]);
      }
      const firstWrite = Math.min(...burstPuts.map((p) => p.written));
      const oursMs = lastArrival - firstWrite;
      const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000))}/s`;
      figures.burst_fanout_ms = oursMs;
      figures.raw_fanout_floor_ms = floor.ms;
      rows.push([
        '    raw floor: the burst\'s view writes as plain NATS messages, every agent parses its zone\'s',
        fmtMs(floor.ms),
        `${floor.deliveries} deliveries, ${rate(floor.deliveries, floor.ms)}, all published at once${floor.missing > 0 ? `; ${floor.missing} never arrived` : ''}`,
      ]);
      if (pacedFloor !== null) {
        figures.raw_fanout_paced_ms = pacedFloor.ms;
        rows.push([
          '    raw floor, paced: the same, each message published when hints wrote its view',
          fmtMs(pacedFloor.ms),
          `${pacedFloor.deliveries} deliveries, ${rate(pacedFloor.deliveries, pacedFloor.ms)}; the trickle alone, without JetStream or the pipeline's CPU${pacedFloor.missing > 0 ? `; ${pacedFloor.missing} never arrived` : ''}`,
        ]);
      }
      rows.push([
        '    burst fan-out: first view write → last arrival (shared feeds)',
        fmtMs(oursMs),
        `${ours} deliveries, ${rate(ours, oursMs)} = ${((ours / oursMs) / (floor.deliveries / floor.ms)).toFixed(2)} of the floor's rate (paced by the pipeline's writes, which the floor is not)`,
      ]);
    }
    const tc = observer.triggerChecks;
    rows.push(['unfiltered-view puts whose trigger time = the earliest pod change they applied', `${tc.match} / ${tc.all}`, `${tc.later} later (an earlier change of the slice coalesced into the write), ${tc.earlier} earlier, ${tc.none} without one`]);

    // Bytes: what each agent received after its initial set, per pod change generated.
    const flipsAll = steady.flips.length + burstRun.flips.length;
    // Bytes as stored (key + value) of every revision an agent applied after its initial set,
    // summed from the arrivals: each revision's size times the agents that got it.
    const agentStats = new Map(reports.flatMap((r) => r.perAgent));
    const zonedSpecs = specs.filter((s) => s.zone !== UNZONED_VIEW);
    let zonedBytes = 0;
    let unscopedBytes = 0;
    // The same split per kind of Service (serviceKindOf).
    const byClass = { preferClose: { zoned: 0, unscoped: 0 }, none: { zoned: 0, unscoped: 0 } };
    for (const [rev, [, n]] of arrivals) {
      const p = observer.puts.get(rev);
      if (p === undefined) continue;
      const kind = serviceKindOf(p.slice);
      const cls = kind === undefined ? undefined : byClass[kind];
      if (p.zone === UNZONED_VIEW) {
        unscopedBytes += p.bytes;
        if (cls) cls.unscoped += p.bytes;
      } else {
        zonedBytes += p.bytes * n;
        if (cls) cls.zoned += p.bytes * n;
      }
    }
    const scopedBytes = zonedBytes / Math.max(1, zonedSpecs.length) / flipsAll;
    const scopedEntries = zonedSpecs.reduce((n, s) => n + (agentStats.get(s.id)?.entries ?? 0), 0) / Math.max(1, zonedSpecs.length) / flipsAll;
    const un = { bytes: unscopedBytes, entries: agentStats.get('unscoped')?.entries ?? 0 };
    const kp = kubeProxy.bytes / flipsAll;
    figures.agents = agentCount;
    figures.bytes_per_agent_scoped = scopedBytes;
    figures.bytes_per_agent_unscoped = kp;
    figures.bytes_per_agent_unfiltered_view = un.bytes / flipsAll;
    const measured = [...observer.puts.values()].filter((p) => p.zone !== UNZONED_VIEW && p.trigger !== null && p.trigger >= steady.from);
    const metaOnly = measured.filter((p) => !p.changes);
    const metaBytes = metaOnly.reduce((n, p) => n + p.bytes, 0) / Math.max(1, measured.reduce((n, p) => n + p.bytes, 0));
    rows.push(['per agent per pod change, zoned agents (average)', fmtBytes(Math.round(scopedBytes)), `${scopedEntries.toFixed(2)} view entries; target <= 1/3 of kube-proxy's (ratio ${(scopedBytes / Math.max(1, kp)).toFixed(2)})`]);
    rows.push(['per agent per pod change, kube-proxy\'s way (every EndpointSlice, whole: the hinted bucket)', fmtBytes(Math.round(kp)), `${(kubeProxy.entries / flipsAll).toFixed(2)} slices; the API would add managedFields and resourceVersion`]);
    rows.push(['per agent per pod change, our unscoped agent (the unfiltered view)', fmtBytes(Math.round(un.bytes / flipsAll)), `${(un.entries / flipsAll).toFixed(2)} view entries; zoned agents / this = ${(scopedBytes / Math.max(1, un.bytes / flipsAll)).toFixed(2)} (zone scoping alone)`]);
    const classRatio = (zoned: number, whole: number): string => (zoned / Math.max(1, zonedSpecs.length) / Math.max(1, whole)).toFixed(2);
    rows.push([
      '  zoned / kube-proxy by kind of Service: PreferClose (half of them), no topology (the other half)',
      `${classRatio(byClass.preferClose.zoned, kubeProxy.byClass.preferClose)} / ${classRatio(byClass.none.zoned, kubeProxy.byClass.none)}`,
      `bytes per zoned agent over kube-proxy's, changes of that kind only; over our unfiltered view: ${classRatio(byClass.preferClose.zoned, byClass.preferClose.unscoped)} / ${classRatio(byClass.none.zoned, byClass.none.unscoped)}`,
    ]);
    rows.push(['  zone view puts that changed only the trigger-time annotation', `${metaOnly.length} / ${measured.length}`, `${(metaBytes * 100).toFixed(0)}% of the zoned views' bytes; received by every agent of the zone, nothing to apply`]);
    const byWhy = new Map<string, number>();
    for (const r of reports) for (const [why, n] of r.resyncs) byWhy.set(why, (byWhy.get(why) ?? 0) + n);
    const resyncs = [...byWhy.values()].reduce((a, b) => a + b, 0);
    const whys = [...byWhy].map(([why, n]) => `${why} ${n}`).join(', ');
    rows.push(['agents that read their views again (feed missed deliveries or fell silent)', String(resyncs), `${whys === '' ? 'none' : whys}; each resync reads the zone's views and applies only what differs`]);
    const rss = reports.reduce((n, r) => n + r.rssBytes, 0);
    rows.push(['memory per lightweight agent', fmtBytes(Math.round(rss / (agentCount + 1))), `worker RSS ${reports.map((r) => fmtBytes(r.rssBytes)).join(', ')} (at ready: ${workerRss.map((b) => fmtBytes(b)).join(', ')})`]);
    if (server0 !== null && server1 !== null) {
      rows.push(['NATS server: CPU during connect + measurement, RSS after', `${(server1.cpuMs - server0.cpuMs).toFixed(0)} ms`, `RSS ${fmtBytes(server1.rssBytes)} (shared with the pipeline's streams and whatever else uses it)`]);
    } else {
      rows.push(['NATS server CPU and memory', 'n/a', `no local nats-server process on ${url}'s port`]);
    }
    const dir = join(tmpdir(), 'slicemesh-bench');
    mkdirSync(dir, { recursive: true });
    const svg = join(dir, 'fanout-latency.svg');
    const [st, bu] = phases;
    writeFileSync(svg, latencySvg([
      { name: 'steady 20/s, from pod Ready', color: '#1f77b4', values: st?.l.fromReady ?? [] },
      { name: `burst ${burst} at 500/s, from pod Ready`, color: '#d62728', values: bu?.l.fromReady ?? [] },
      { name: 'steady, from the view\'s KV write', color: '#1f77b4', values: st?.l.fromWrite ?? [], dashed: true },
      { name: 'burst, from the view\'s KV write', color: '#d62728', values: bu?.l.fromWrite ?? [], dashed: true },
    ]));
    rows.push(['latency distribution chart', svg]);
    rows.push(['machine', `${availableParallelism()} cores`, `load average at start ${load0}, at end ${load()}; ${fmtMs(performance.now() - t0)} in all`]);
    printTable(`fanout (${agentCount} agents + 1 unscoped + ${fullCount} full, ${serviceCount} services, ${NODES} nodes; latency ${ORIGIN})`, rows);
  } finally {
    await cleanup();
    process.removeListener('exit', killChildren);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return figures;
}
