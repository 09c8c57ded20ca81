// Fanout section (issue 10 part 1, the view-to-agent leg): 1000 lightweight agents, each with
// its own NATS connection and its own zone watch, in a few worker processes
// (bench/fanout-agents.ts), over a simulated cluster of 1000 nodes in 3 zones plus a few
// unzoned ones, and one unscoped agent that watches every view. The publisher plays the hints
// service: a pod's Ready transition becomes its Service's new zone views (computed ahead), and
// the trigger time is when they are written to a fresh views bucket. Ten full agents
// (startProxyAgent, dry-run backend, default MIN_SYNC_PERIOD 1 s) render rules beside them.
// Measured at 20 changes/s and in a 500/s burst: latency from the trigger to the change
// applied on every lightweight agent that must apply it, and to the first rules file a full
// agent writes after the change reached it; entries and bytes per agent per change (zoned
// agents against the unscoped one), NATS server CPU and memory, memory per agent, and an SVG
// of the latency distributions. Not measured here: the Ready transition → views leg of the
// pipeline (watcher, slicer, hints: the backbone section's figures).

import { fork, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { hintCluster } from '@slicemesh/core';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import type { KV, KvChange, NatsConnection } from '@slicemesh/nats';
import { connectNats, ensureKv, kvDelete, kvPutJson, kvWatchJson, openKv, svcKey, viewKey } from '@slicemesh/nats';
import type { KvChangeSource, ProxyAgentHandle } from '@slicemesh/proxy-agent';
import { parseProxyAgentConfig, startProxyAgent } from '@slicemesh/proxy-agent';
import { createLogger } from '@slicemesh/runtime';
import type { ZoneViews } from '@slicemesh/proxy-state';
import { UNZONED_VIEW, diffZoneViews, zoneViews } from '@slicemesh/proxy-state';
import { makeBenchSlice } from './cluster-gen.ts';
import { fmtBytes, fmtMs, printTable } from './harness.ts';
import { percentile } from './summary.ts';

type Row = [string, string, string?];
const CLUSTER = 'fanout';
const NS = 'bench';
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const UNZONED_NODES = 6;
const ENDPOINTS = 5;

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function nodes(count: number): Node[] {
  return Array.from({ length: count }, (_, i) => ({
    kind: 'Node',
    metadata: { name: `node-${i}`, labels: i < count - UNZONED_NODES ? { [LABEL_ZONE]: ZONES[i % 3] ?? 'zone-a' } : ({} as Record<string, string>) },
    status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' }] },
  }));
}

function service(i: number): Service {
  const ip = `10.96.${(i + 10) >> 8}.${(i + 10) & 255}`;
  return {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: { name: `svc-${i}`, namespace: NS, uid: `uid-${i}` },
    spec: { type: 'ClusterIP', selector: { app: `svc-${i}` }, clusterIP: ip, clusterIPs: [ip], ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }], ...(i % 2 === 0 ? { trafficDistribution: 'PreferClose' } : {}) },
  };
}

function slice(i: number, all: readonly Node[], ready: readonly boolean[]): EndpointSlice {
  return makeBenchSlice(i, ready.map((r, e) => ({ node: all[(i * 7 + e * 13) % all.length] ?? all[0]!, ready: r })), NS);
}

/** What the hints service computes for one service: its hinted slice cut into zone views. */
function viewsOf(svc: Service, s: EndpointSlice, all: Node[]): ZoneViews {
  return zoneViews({ services: [svc], slices: hintCluster({ nodes: all, slices: [s], services: [svc] }).slices, nodes: all });
}

interface Change {
  readonly trigger: number;
  /** Put revisions and the zone each went to. */
  readonly puts: { readonly revision: number; readonly zone: string }[];
  /** Bytes of the whole changed slice: what every kube-proxy receives. */
  readonly sliceBytes: number;
  /** A write was not acknowledged in time. */
  readonly failed: boolean;
}

class Publisher {
  readonly #kv: KV;
  readonly #all: Node[];
  readonly #services: Service[];
  readonly #ready: boolean[][];
  readonly #views: ZoneViews[];
  #next = 0;

  constructor(kv: KV, all: Node[], count: number) {
    this.#kv = kv;
    this.#all = all;
    this.#services = Array.from({ length: count }, (_, i) => service(i));
    this.#ready = this.#services.map(() => Array.from({ length: ENDPOINTS }, () => true));
    this.#views = this.#services.map((svc, i) => viewsOf(svc, slice(i, all, this.#ready[i] ?? []), all));
  }

  get services(): readonly Service[] {
    return this.#services;
  }

  async seed(): Promise<number> {
    let n = 0;
    for (const v of this.#views) for (const e of v.entries.values()) n += await this.#put(e.zone, e.service, e.sliceName, e.slice);
    return n;
  }

  async #put(zone: string, svc: string, sliceName: string, value: EndpointSlice): Promise<number> {
    await kvPutJson(this.#kv, viewKey({ cluster: CLUSTER, zone, namespace: NS, service: svc, slice: sliceName }), value);
    return 1;
  }

  /**
   * The next pod's Ready transition, computed ahead as the hints service would (its Service's
   * hinted slice cut into views, diffed against the last ones), so a burst is paced by the
   * writes alone.
   */
  prepare(): Prepared {
    const i = (this.#next * 7919) % this.#services.length;
    const e = this.#next % ENDPOINTS;
    this.#next++;
    const ready = this.#ready[i] ?? [];
    ready[e] = !ready[e];
    const s = slice(i, this.#all, ready);
    const views = viewsOf(this.#services[i]!, s, this.#all);
    const ops = diffZoneViews(this.#views[i]!, views);
    this.#views[i] = views;
    return { ops, sliceBytes: JSON.stringify(s).length };
  }

  /** Writes a prepared change; the trigger time is now. Resolves once the server has every write. */
  publish(p: Prepared): Promise<Change> {
    const trigger = now();
    const writes = p.ops.map(async (op) => {
      if (op.op === 'put') {
        const revision = await kvPutJson(this.#kv, viewKey({ cluster: CLUSTER, zone: op.entry.zone, namespace: NS, service: op.entry.service, slice: op.entry.sliceName }), op.entry.slice);
        return { revision, zone: op.entry.zone };
      }
      await kvDelete(this.#kv, viewKey({ cluster: CLUSTER, zone: op.zone, namespace: NS, service: op.service, slice: op.sliceName }));
      return null;
    });
    return Promise.all(writes).then(
      (puts) => ({ trigger, puts: puts.filter((x) => x !== null), sliceBytes: p.sliceBytes, failed: false }),
      () => ({ trigger, puts: [], sliceBytes: p.sliceBytes, failed: true }), // a write timed out: counted, not measured
    );
  }
}

interface Prepared {
  readonly ops: ReturnType<typeof diffZoneViews>;
  readonly sliceBytes: number;
}

interface WorkerReport {
  readonly arrivals: [number, [number, number]][];
  readonly perAgent: [string, { bytes: number; entries: number }][];
  readonly rssBytes: number;
}

function startWorker(agents: { id: string; filter: string }[], url: string, bucket: string): { child: ChildProcess; ready: Promise<number>; report: () => Promise<WorkerReport> } {
  const child = fork(new URL('./fanout-agents.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<number>((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; rssBytes?: number; error?: string }) => {
      if (m.error !== undefined) reject(new Error(m.error));
      if (m.ready) resolve(m.rssBytes ?? 0);
    });
    child.once('exit', (code) => reject(new Error(`fanout worker exited with ${code}`)));
  });
  child.send({ agents, url, bucket });
  const report = () =>
    new Promise<WorkerReport>((resolve) => {
      child.on('message', (m: Partial<WorkerReport>) => {
        if (m.arrivals !== undefined) resolve(m as WorkerReport);
      });
      child.send({ report: true });
    });
  return { child, ready, report };
}

/** utime+stime (ms) and VmRSS (bytes) of the local nats-server, or null when it is not a local process. */
function natsServerUsage(): { cpuMs: number; rssBytes: number } | null {
  const pid = spawnSync('pgrep', ['-xo', 'nats-server'], { encoding: 'utf8' }).stdout.trim();
  if (pid === '') return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(stat[11]) + Number(stat[12]);
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return { cpuMs: (ticks * 1000) / 100, rssBytes: Number(rss ?? 0) * 1024 };
  } catch {
    return null;
  }
}

/** A CDF per series as an SVG polyline chart, latency on a log axis. */
export function latencySvg(series: readonly { name: string; color: string; values: readonly number[] }[]): string {
  const [w, h, left, bottom] = [640, 360, 60, 40];
  const all = series.flatMap((s) => s.values).filter((v) => v > 0);
  const lo = Math.max(0.1, Math.min(...all));
  const hi = Math.max(lo * 10, ...all);
  const x = (v: number) => left + ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (w - left - 20);
  const y = (f: number) => h - bottom - f * (h - bottom - 20);
  const lines = series.map((s) => {
    const sorted = [...s.values].sort((a, b) => a - b);
    const pts = sorted.map((v, i) => `${x(v).toFixed(1)},${y((i + 1) / sorted.length).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts}"/>`;
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
    `<text x="${w / 2}" y="${h - 6}" font-size="12" text-anchor="middle">pod Ready → applied on every agent that must apply it (CDF)</text>`,
    ...lines,
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** A full agent (dry-run) with its own connection: when each view revision reached it, and when it wrote rules. */
interface FullAgent {
  readonly zone: string;
  readonly arrivals: Map<number, number>;
  readonly writes: number[];
  readonly agent: ProxyAgentHandle;
  readonly nc: NatsConnection;
}

async function startFullAgent(url: string, svcBucket: string, viewsBucket: string, node: string, zone: string): Promise<FullAgent> {
  const nc = await connectNats({ url, name: `fanout-full-${node}`, timeoutMs: 60_000 });
  const arrivals = new Map<number, number>();
  const writes: number[] = [];
  const source = (bucket: string, record: boolean): KvChangeSource => ({
    async *watch(filter, opts): AsyncGenerator<KvChange> {
      const kv = await openKv(nc, bucket);
      for await (const c of kvWatchJson(kv, { key: filter, onInitialDone: opts.onInitialDone, signal: opts.signal })) {
        if (record) arrivals.set(c.revision, now());
        yield c;
      }
    },
  });
  const config = parseProxyAgentConfig([], { NODE_NAME: node, NODE_ZONE: zone, CLUSTER, BACKEND: 'dry-run', POD_CIDR: '10.128.0.0/9', NATS_URL: url });
  const agent = startProxyAgent(config, {
    sources: { services: source(svcBucket, false), views: source(viewsBucket, true) },
    log: createLogger({ service: 'proxy-agent', level: 'silent' }),
    writeFile: async () => void writes.push(now()),
  });
  await agent.ready;
  return { zone, arrivals, writes, agent, nc };
}

/** Trigger → first rules file written after the change reached the agent, for every change and full agent of its zone. */
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

export interface FanoutFigures {
  agents?: number;
  steady_p50_ms?: number;
  steady_p99_ms?: number;
  steady_max_ms?: number;
  burst_p50_ms?: number;
  burst_p99_ms?: number;
  burst_max_ms?: number;
  bytes_per_agent_scoped?: number;
  bytes_per_agent_unscoped?: number;
}

export async function runFanoutBench(opts: { quick: boolean }): Promise<FanoutFigures> {
  const url = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
  const agentCount = Number(process.env['FANOUT_AGENTS'] ?? (opts.quick ? 100 : 1000));
  const workers = Number(process.env['FANOUT_WORKERS'] ?? 4);
  const serviceCount = opts.quick ? 200 : 1000;
  const steadySeconds = opts.quick ? 5 : 15;
  const burst = opts.quick ? 100 : 500;
  const rows: Row[] = [];
  const figures: FanoutFigures = {};
  const progress = (what: string) => process.stderr.write(`fanout bench: ${what}\n`);

  let nc: NatsConnection;
  try {
    nc = await connectNats({ url, name: 'fanout-publisher' });
  } catch (e) {
    rows.push(['fanout', 'skipped', e instanceof Error ? e.message.split('\n')[0] : String(e)]);
    printTable('fanout', rows);
    return figures;
  }
  const bucket = `fanout-${process.pid}`;
  const kv = await ensureKv(nc, bucket, { storage: 'memory' });
  const all = nodes(1000);
  const zoneOf = (i: number) => all[i]?.metadata.labels?.[LABEL_ZONE] ?? UNZONED_VIEW;
  let t = performance.now();
  const pub = new Publisher(kv, all, serviceCount);
  const seeded = await pub.seed();
  rows.push([`${serviceCount} services x ${ENDPOINTS} endpoints on ${all.length} nodes: views written`, fmtMs(performance.now() - t), `${seeded} view entries, 3 zones + ${UNZONED_NODES} unzoned nodes`]);

  // One agent per node (the first agentCount nodes, spread over the zones), plus the unscoped one.
  const specs = Array.from({ length: agentCount }, (_, i) => {
    const node = Math.floor((i * all.length) / agentCount);
    return { id: `agent-${node}`, zone: zoneOf(node), filter: `${CLUSTER}.${zoneOf(node)}.>` };
  });
  const unscoped = { id: 'unscoped', zone: '*', filter: `${CLUSTER}.>` };
  const perZone = new Map<string, number>();
  for (const s of specs) perZone.set(s.zone, (perZone.get(s.zone) ?? 0) + 1);
  progress(`starting ${agentCount} agents in ${workers} processes`);
  const server0 = natsServerUsage();
  t = performance.now();
  const started = Array.from({ length: workers }, (_, w) => {
    const mine = specs.filter((_, i) => i % workers === w).map(({ id, filter }) => ({ id, filter }));
    return startWorker(w === 0 ? [...mine, unscoped] : mine, url, bucket);
  });
  let workerRss: number[];
  try {
    workerRss = await Promise.all(started.map((s) => s.ready));
  } catch (e) {
    for (const s of started) s.child.kill();
    await nc.close();
    throw e;
  }
  rows.push([`${agentCount} agents connected, each with its initial zone set`, fmtMs(performance.now() - t), `${workers} processes, one NATS connection and one watch per agent`]);

  const fullCount = Number(process.env['FANOUT_FULL_AGENTS'] ?? (opts.quick ? 2 : 10));
  const svcKv = await ensureKv(nc, `${bucket}-svc`, { storage: 'memory' });
  for (const svc of pub.services) await kvPutJson(svcKv, svcKey({ cluster: CLUSTER, namespace: NS, name: svc.metadata.name }), svc);
  t = performance.now();
  const full = await Promise.all(Array.from({ length: fullCount }, (_, k) => startFullAgent(url, `${bucket}-svc`, bucket, `full-${k}`, ZONES[k % 3] ?? 'zone-a')));
  rows.push([`${fullCount} full agents (dry-run) ready`, fmtMs(performance.now() - t), 'each renders the iptables ruleset of its zone after every sync']);

  const run = async (name: string, count: number, perSecond: number): Promise<Change[]> => {
    progress(`${name}: ${count} changes at ${perSecond}/s`);
    const prepared = Array.from({ length: count }, () => pub.prepare());
    const out: Promise<Change>[] = [];
    // At most 64 changes' writes in flight: past that the publisher waits (and the achieved
    // rate shows it) rather than pile up acks until they time out.
    const inflight = new Set<Promise<Change>>();
    const start = now();
    for (let k = 0; k < count; k++) {
      const due = start + (k * 1000) / perSecond;
      const wait = due - now();
      if (wait > 0) await sleep(wait);
      while (inflight.size >= 64) await Promise.race(inflight);
      const p = pub.publish(prepared[k]!);
      inflight.add(p);
      void p.then(() => inflight.delete(p));
      out.push(p);
    }
    const changes = await Promise.all(out);
    await sleep(3000); // let the last ones arrive everywhere
    return changes;
  };
  const steady = await run('steady', steadySeconds * 20, 20);
  const burstChanges = await run('burst', burst, 500);
  const server1 = natsServerUsage();
  const reports = await Promise.all(started.map((s) => s.report()));
  for (const f of full) {
    await f.agent.close();
    await f.nc.close();
  }
  // The buckets were this run's alone.
  await kv.destroy();
  await svcKv.destroy();
  await nc.close();

  const arrivals = new Map<number, [number, number]>();
  for (const r of reports) {
    for (const [rev, [at, n]] of r.arrivals) {
      const a = arrivals.get(rev);
      arrivals.set(rev, a === undefined ? [at, n] : [Math.max(a[0], at), a[1] + n]);
    }
  }
  /** Latency of each change to its last agent; changes some agent never got are censored. */
  const latencies = (changes: readonly Change[]) => {
    const seen: number[] = [];
    let missing = 0;
    for (const c of changes) {
      if (c.puts.length === 0) continue;
      let last = 0;
      let complete = true;
      for (const p of c.puts) {
        const a = arrivals.get(p.revision);
        const want = (p.zone === UNZONED_VIEW ? (perZone.get(UNZONED_VIEW) ?? 0) : (perZone.get(p.zone) ?? 0)) + 1;
        if (a === undefined || a[1] < want) complete = false;
        if (a !== undefined) last = Math.max(last, a[0]);
      }
      if (complete) seen.push(last - c.trigger);
      else missing++;
    }
    return { sorted: seen.sort((a, b) => a - b), missing };
  };
  const st = latencies(steady);
  const bu = latencies(burstChanges);
  const fig = (xs: readonly number[], p: number) => percentile(xs, p);
  /** Changes per second the publisher actually achieved. */
  const rate = (list: readonly Change[]) => (list.length - 1) / (((list.at(-1)?.trigger ?? 0) - (list[0]?.trigger ?? 0)) / 1000);
  for (const [name, l, key, list] of [['steady 20/s', st, 'steady', steady], [`burst ${burst} at 500/s`, bu, 'burst', burstChanges]] as const) {
    const failed = list.filter((c) => c.failed).length;
    rows.push([`${name}: pod Ready → applied on every agent, p50 / p99 / max`, `${fmtMs(fig(l.sorted, 50))} / ${fmtMs(fig(l.sorted, 99))} / ${fmtMs(l.sorted.at(-1) ?? NaN)}`, `${l.sorted.length} changes at ${rate(list).toFixed(0)}/s achieved${l.missing > 0 ? `, ${l.missing} not seen by every agent` : ''}${failed > 0 ? `, ${failed} writes not acknowledged` : ''}; target p99 <= ${key === 'steady' ? '1 s' : '2 s'}`]);
    figures[`${key}_p50_ms`] = fig(l.sorted, 50);
    figures[`${key}_p99_ms`] = fig(l.sorted, 99);
    figures[`${key}_max_ms`] = l.sorted.at(-1) ?? NaN;
  }
  for (const [name, list] of [['steady 20/s', steady], [`burst ${burst} at 500/s`, burstChanges]] as const) {
    const l = fullAgentLatencies(list, full);
    rows.push([`${name}: pod Ready → rules written by a full agent, p50 / p99 / max`, `${fmtMs(fig(l, 50))} / ${fmtMs(fig(l, 99))} / ${fmtMs(l.at(-1) ?? NaN)}`, `${l.length} (change, agent) pairs; first dry-run write after the change reached the agent (MIN_SYNC_PERIOD 1 s)`]);
  }
  const changes = steady.length + burstChanges.length;
  const agentStats = new Map(reports.flatMap((r) => r.perAgent));
  const zoned = specs.filter((s) => s.zone !== UNZONED_VIEW).map((s) => agentStats.get(s.id) ?? { bytes: 0, entries: 0 });
  const scopedBytes = zoned.reduce((n, a) => n + a.bytes, 0) / Math.max(1, zoned.length) / changes;
  const scopedEntries = zoned.reduce((n, a) => n + a.entries, 0) / Math.max(1, zoned.length) / changes;
  const un = agentStats.get('unscoped') ?? { bytes: 0, entries: 0 };
  const sliceBytes = [...steady, ...burstChanges].reduce((n, c) => n + c.sliceBytes, 0) / changes;
  figures.agents = agentCount;
  figures.bytes_per_agent_scoped = scopedBytes;
  figures.bytes_per_agent_unscoped = un.bytes / changes;
  rows.push(['per agent per change, zoned agents (average)', fmtBytes(Math.round(scopedBytes)), `${scopedEntries.toFixed(2)} view entries; target <= 1/3 of the unscoped agent's`]);
  rows.push(['per agent per change, an agent watching every view', fmtBytes(Math.round(un.bytes / changes)), `${(un.entries / changes).toFixed(2)} view entries; ratio scoped/unscoped ${(scopedBytes / Math.max(1, un.bytes / changes)).toFixed(2)}`]);
  rows.push(['  kube-proxy (watches every EndpointSlice): the whole changed slice', fmtBytes(Math.round(sliceBytes)), 'to every node']);
  const rss = reports.reduce((n, r) => n + r.rssBytes, 0);
  rows.push(['memory per lightweight agent', fmtBytes(Math.round(rss / (agentCount + 1))), `worker RSS ${reports.map((r) => fmtBytes(r.rssBytes)).join(', ')} (at ready: ${workerRss.map((b) => fmtBytes(b)).join(', ')})`]);
  if (server0 !== null && server1 !== null) {
    rows.push(['NATS server: CPU during connect + measurement, RSS after', `${(server1.cpuMs - server0.cpuMs).toFixed(0)} ms`, `RSS ${fmtBytes(server1.rssBytes)}`]);
  } else {
    rows.push(['NATS server CPU and memory', 'n/a', 'no local nats-server process']);
  }
  const dir = join(tmpdir(), 'slicemesh-bench');
  mkdirSync(dir, { recursive: true });
  const svg = join(dir, 'fanout-latency.svg');
  writeFileSync(svg, latencySvg([
    { name: 'steady 20/s', color: '#1f77b4', values: st.sorted },
    { name: `burst ${burst} at 500/s`, color: '#d62728', values: bu.sorted },
  ]));
  rows.push(['latency distribution chart', svg]);
  printTable(`fanout (${agentCount} agents + 1 unscoped + ${fullCount} full, ${serviceCount} services, 1000 nodes)`, rows);
  await Promise.all(started.map((s) => (s.child.exitCode !== null || s.child.signalCode !== null ? undefined : new Promise((r) => s.child.once('exit', r)))));
  return figures;
}
