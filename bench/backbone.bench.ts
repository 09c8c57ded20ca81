// Backbone section: the event pipeline cluster-sim → watcher → slicer → hints → KV views on
// this machine, next to the raw rates of what it is built on, measured in the same run:
// JetStream publish (async and one ack at a time, 300-byte messages) and Postgres (batched
// multi-row inserts of 500-byte JSONB rows, and one-row transactions).
// Pipeline figures: cold start of the whole cluster; a burst of pod changes drained as fast as
// the pipeline can (changes/s fully reflected in KV, KUBE events/s); paced pod changes with the
// latency from the store write at cluster-sim to the KV view showing it (p50/p99).
// Everything runs in this one process (as `npm start` would), on isolated streams, buckets and
// a fresh schema, all removed afterwards. Needs NATS_URL / DATABASE_URL (local defaults).

import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim, KubeObj } from '@slicemesh/cluster-sim';
import { createDb } from '@slicemesh/db';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { hintsConfigWith, startHints } from '@slicemesh/hints';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_ZONE } from '@slicemesh/model';
import { connectNats, ensureStreams, kvWatchJson, openKv, zoneViewsFilter } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import type { JetStreamFixture } from '@slicemesh/nats/testing';
import { UNZONED_VIEW } from '@slicemesh/proxy-state';
import { createLogger } from '@slicemesh/runtime';
import { slicerConfigWith, startSlicer } from '@slicemesh/slicer';
import type { Slicer } from '@slicemesh/slicer';
import { startWatcher, watcherConfigWith } from '@slicemesh/watcher';
import { fmtMs, printTable, sampleMemory } from './harness.ts';

const CLUSTER = 'bench';
const NAMESPACES = 8;
const PARTITIONS = 4;
const NODES = 30;
const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const DEFAULT_NATS = 'nats://127.0.0.1:4222';
const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/postgres';

type Row = [string, string, string?];
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const rate = (n: number, ms: number) => `${Math.round((n * 1000) / ms).toLocaleString('en-US')}/s`;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function unreachable(natsUrl: string, pgUrl: string): Promise<string | null> {
  try {
    await (await connectNats({ url: natsUrl, name: 'bench-probe', timeoutMs: 2000 })).close();
  } catch (err) {
    return `NATS unreachable at ${natsUrl} (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
  try {
    await (await createDb({ url: pgUrl, max: 1 })).close();
  } catch (err) {
    return `Postgres unreachable at ${pgUrl} (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
  }
  return null;
}

// ---- raw rates --------------------------------------------------------------------------

async function rawJetStream(js: JetStreamFixture, quick: boolean): Promise<Row[]> {
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
    return [
      [`JetStream async publish, ${n} x 300 B`, rate(n, asyncMs), `${fmtMs(asyncMs)} (file storage, all in flight)`],
      [`JetStream publish awaiting each ack, ${m} x 300 B`, rate(m, ackMs), fmtMs(ackMs)],
    ];
  } finally {
    await js.jsm.streams.delete(stream);
  }
}

async function rawPostgres(db: TestDb, quick: boolean): Promise<Row[]> {
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
  return [
    [`Postgres multi-row insert, ${n} x ~500 B JSONB (batches of ${batch})`, rate(n, batchMs), fmtMs(batchMs)],
    [`Postgres one upsert per transaction, ${m} sequential`, rate(m, txMs), fmtMs(txMs)],
  ];
}

// ---- the cluster and the pipeline --------------------------------------------------------

interface BenchPod {
  readonly namespace: string;
  readonly name: string;
  readonly ip: string;
}

function conditions(ready: boolean, at: string) {
  const s = ready ? 'True' : 'False';
  return [{ type: 'ContainersReady', status: s, lastTransitionTime: at }, { type: 'Ready', status: s, lastTransitionTime: at }];
}

/** Writes nodes, services and their pods straight into the store; returns the pods in service-major order. */
function seedCluster(sim: ClusterSim, services: number, podsPerService: number): BenchPod[][] {
  const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  for (let i = 0; i < NODES; i++) {
    const zone = ZONES[i % ZONES.length] ?? 'zone-a';
    sim.store.create('Node', {
      apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}`, labels: { [LABEL_ZONE]: zone } },
      status: { allocatable: { cpu: '8' }, conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: `172.18.0.${10 + i}` }] },
    });
  }
  for (let n = 0; n < NAMESPACES; n++) sim.store.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}` } });
  const pods: BenchPod[][] = [];
  let ipIndex = 0;
  for (let s = 0; s < services; s++) {
    const namespace = `ns-${s % NAMESPACES}`;
    const app = `svc-${s}`;
    sim.store.create('Service', {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name: app, namespace, ...(s % 4 === 0 ? { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } } : {}) },
      spec: { selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
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
  samples: Sample[] = [];
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

  onSlices(body: { upserts?: EndpointSlice[] }): void {
    for (const s of body.upserts ?? []) for (const ep of s.endpoints) for (const ip of ep.addresses) this.#stage(ip, ep.conditions?.ready !== false, 'slices');
  }

  onView(slice: EndpointSlice): void {
    this.puts++;
    const now = performance.now();
    for (const ep of slice.endpoints) {
      const ready = ep.conditions?.ready !== false;
      for (const ip of ep.addresses) {
        this.#ready.set(ip, ready);
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
    if (this.#pending.has(ip)) this.superseded++;
    this.#pending.set(ip, { ready, at });
  }

  readyCount(): number {
    let n = 0;
    for (const r of this.#ready.values()) if (r) n++;
    return n;
  }

  get pending(): number {
    return this.#pending.size;
  }
}

/** "p50 / p99" of one field of the samples. */
function spread(samples: readonly Sample[], field: keyof Sample): string {
  const v = samples.map((s) => s[field]).sort((a, b) => a - b);
  return `${fmtMs(percentile(v, 50))} / ${fmtMs(percentile(v, 99))}`;
}

/** Where the time went: p50 of each stage. */
function stages(samples: readonly Sample[]): string {
  const p50 = (f: keyof Sample) => fmtMs(percentile(samples.map((s) => s[f]).sort((a, b) => a - b), 50));
  return `p50 by stage: watcher ${p50('watcher')}, slicer ${p50('slicer')}, hints ${p50('hints')}`;
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > until) return false;
    await sleep(10);
  }
  return true;
}

export async function runBackboneBench(opts: { quick: boolean }): Promise<void> {
  const natsUrl = process.env['NATS_URL'] || DEFAULT_NATS;
  const pgUrl = process.env['DATABASE_URL'] || DEFAULT_PG;
  const skip = await unreachable(natsUrl, pgUrl);
  if (skip !== null) {
    process.stdout.write(`\n## backbone — skipped: ${skip}\n`);
    return;
  }
  process.env['DATABASE_URL'] = pgUrl; // withTestDb reads it
  const js = await withJetStream({ env: { NATS_URL: natsUrl } });
  const db = await withTestDb({ max: 4 });
  const closers: (() => Promise<void>)[] = [() => js.cleanup(), () => db.close()];
  const rows: Row[] = [];
  try {
    rows.push(...(await rawJetStream(js, opts.quick)), ...(await rawPostgres(db, opts.quick)));
    rows.push(...(await pipeline(js, db, opts.quick, closers)));
  } finally {
    for (const c of closers.reverse()) await c().catch((err: unknown) => process.stderr.write(`bench cleanup: ${String(err)}\n`));
  }
  printTable('backbone (one process: cluster-sim + watcher + slicer + hints; 2 shared cores)', rows);
}

/** Sum of the slicer's reconcile counter by result, e.g. { changed: 40, error: 3 }. */
async function reconcileResults(slicer: Slicer): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await slicer.metrics.reconciles.get()).values) out[String(v.labels['result'])] = (out[String(v.labels['result'])] ?? 0) + v.value;
  return out;
}

function diffResults(a: Record<string, number>, b: Record<string, number>): string {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.map((k) => `${k} ${(b[k] ?? 0) - (a[k] ?? 0)}`).filter((t) => !t.endsWith(' 0')).join(', ') || 'none';
}

async function pipeline(js: JetStreamFixture, db: TestDb, quick: boolean, closers: (() => Promise<void>)[]): Promise<Row[]> {
  const services = quick ? 50 : 200;
  const podsPerService = 20;
  const rows: Row[] = [];
  const level = 'silent' as const;
  await ensureStreams(js.jsm, js.names);
  const streams = { kubeStream: js.names.kube, slicesStream: js.names.slices, dlqStream: js.names.dlq, subjectPrefix: js.names.prefix };
  const sim = await startClusterSim({ scenario: EMPTY_SCENARIO, apiPodReadinessDelayMs: 86_400_000, historySize: 200_000 });
  closers.push(() => sim.close());
  const pods = seedCluster(sim, services, podsPerService);
  const all = pods.flat();

  const tracker = new ChangeTracker();
  const decoder = new TextDecoder();
  const tap = (subject: string, on: (body: never) => void) => {
    const sub = js.nc.subscribe(subject, { callback: (err, msg) => void (err === null && on(JSON.parse(decoder.decode(msg.data)) as never)) });
    closers.push(async () => sub.unsubscribe());
  };
  tap(`${js.names.prefix}kube.>`, (b) => tracker.onKube(b));
  tap(`${js.names.prefix}slices.>`, (b) => tracker.onSlices(b));

  const t0 = performance.now();
  const watcher = startWatcher(watcherConfigWith({ cluster: CLUSTER, kubeServer: sim.url, natsUrl: js.url, partitions: PARTITIONS, ...streams, logLevel: level }));
  closers.push(() => watcher.close());
  const slicer = startSlicer(
    slicerConfigWith({ cluster: CLUSTER, natsUrl: js.url, databaseUrl: db.url, dbSchema: db.schema, partitions: PARTITIONS, ...streams, durablePrefix: `bslicer-${js.id}`, healthPort: 0, logLevel: level }),
    { healthServer: false },
  );
  closers.push(() => slicer.close());
  const hints = startHints(
    hintsConfigWith({ cluster: CLUSTER, natsUrl: js.url, databaseUrl: db.url, dbSchema: db.schema, ...streams, svcBucket: js.names.svc, viewsBucket: js.names.views, durablePrefix: `bhints${js.id}`, logLevel: level }),
    { logger: createLogger({ service: 'hints', level }) },
  );
  closers.push(() => hints.close());
  await Promise.all([watcher.ready, slicer.ready, hints.ready]);

  const stop = new AbortController();
  const kv = await openKv(js.nc, js.names.views);
  const loop = (async () => {
    for await (const c of kvWatchJson(kv, { key: zoneViewsFilter(CLUSTER, UNZONED_VIEW), signal: stop.signal })) {
      if (c.op === 'PUT') tracker.onView(c.value as EndpointSlice);
    }
  })().catch(() => {});
  closers.push(async () => {
    stop.abort();
    await loop;
  });
  const cold = await waitFor(() => tracker.readyCount() === all.length, 120_000);
  const coldMs = performance.now() - t0;
  rows.push([`cold start: ${all.length} pods, ${services} services, ${NODES} nodes into KV views`, fmtMs(coldMs), cold ? `${rate(all.length, coldMs)} pods` : 'INCOMPLETE after 120 s']);
  sampleMemory();

  const kubeCount = async () => (await js.jsm.streams.info(js.names.kube)).state.messages;
  const slicesCount = async () => (await js.jsm.streams.info(js.names.slices)).state.messages;

  // Burst: one readiness flip per pod, written as fast as the store takes them, then drained.
  {
    const [k0, s0, p0, r0] = [await kubeCount(), await slicesCount(), tracker.puts, await reconcileResults(slicer)];
    tracker.samples = [];
    const start = performance.now();
    for (const p of all) {
      setReady(sim, p, false);
      tracker.expect(p.ip, false, performance.now());
    }
    const written = performance.now() - start;
    const ok = await waitFor(() => tracker.pending === 0, 180_000);
    const ms = performance.now() - start;
    const [k1, s1, r1] = [await kubeCount(), await slicesCount(), await reconcileResults(slicer)];
    rows.push([`burst: ${all.length} pod changes written in ${fmtMs(written)}, all in KV after`, fmtMs(ms), ok ? `${rate(all.length, ms)} changes reflected` : `INCOMPLETE: ${tracker.pending} missing`]);
    rows.push(['  KUBE events appended (pods + Endpoints)', rate(k1 - k0, ms), `${k1 - k0} events`]);
    rows.push(['  SliceChanged events / unzoned view puts', `${s1 - s0} / ${tracker.puts - p0}`, `slicer reconciles: ${diffResults(r0, r1)}`]);
    rows.push(['  latency store write → KV view p50 / p99', spread(tracker.samples, 'total'), stages(tracker.samples)]);
  }
  sampleMemory();

  // Paced: flips at a steady rate, round robin over services (consecutive changes hit different services).
  const order = Array.from({ length: podsPerService }, (_, p) => pods.map((svc) => svc[p])).flat().filter((p) => p !== undefined);
  let ready = true; // every pod is unready after the burst: flip them back first
  let cursor = 0;
  for (const target of quick ? [25, 100] : [25, 50, 100, 200]) {
    const seconds = quick ? 4 : 10;
    const n = target * seconds;
    const [k0, r0] = [await kubeCount(), await reconcileResults(slicer)];
    tracker.samples = [];
    tracker.superseded = 0;
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const wait = start + (i * 1000) / target - performance.now();
      if (wait > 1) await sleep(wait);
      const p = order[cursor];
      if (p === undefined) throw new Error('no pods');
      cursor++;
      if (cursor === order.length) {
        cursor = 0;
        ready = !ready;
      }
      setReady(sim, p, ready);
      tracker.expect(p.ip, ready, performance.now());
    }
    const offeredMs = performance.now() - start;
    const ok = await waitFor(() => tracker.pending === 0, 60_000);
    const drainMs = performance.now() - start - offeredMs;
    const [k1, r1] = [await kubeCount(), await reconcileResults(slicer)];
    const p99 = percentile(tracker.samples.map((x) => x.total).sort((a, b) => a - b), 99);
    rows.push([`paced ${target} changes/s for ${seconds} s: store write → KV view p50 / p99`, spread(tracker.samples, 'total'), stages(tracker.samples)]);
    rows.push([
      `  offered ${rate(n, offeredMs)}, reflected ${rate(tracker.samples.length, offeredMs + drainMs)}`,
      `${rate(k1 - k0, offeredMs + drainMs)}`,
      `KUBE events; drained ${fmtMs(drainMs)} after the last write; slicer reconciles: ${diffResults(r0, r1)}${ok ? '' : `; INCOMPLETE: ${tracker.pending} missing`}${tracker.superseded > 0 ? `; ${tracker.superseded} superseded` : ''}`,
    ]);
    sampleMemory();
    const keptUp = tracker.samples.length / (offeredMs + drainMs) >= (0.8 * n) / offeredMs;
    if (!ok || !keptUp || p99 > 5000) break; // saturated: a higher rate only grows the queues
  }
  return rows;
}
