// The publisher against cluster-sim over HTTP: how many slices per second it writes (creates,
// then updates of the same slices) with kube-controller-manager's default QPS/burst and with
// no client-side limit, and, in a whole stack on the static scenario, the time from a change
// made with kubectl to the changed slice visible through the API kubectl reads.

import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EMPTY_SCENARIO, STATIC_SCENARIO_FILE, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import type { EndpointSlice } from '@slicemesh/model';
import { connectNats, ensureStreams, jetstream, jetstreamManager, publishAcked, slicesSubject } from '@slicemesh/nats';
import { publisherConfigWith, startPublisher } from '@slicemesh/publisher';
import { deleteRunState, freshRunNames, newRunId, startStack } from '@slicemesh/stack';
import { makeSlice } from '@slicemesh/testing';
import { fmtMs, printTable } from './harness.ts';

const NATS = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const PG = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const progress = (line: string) => process.stderr.write(`publisher: ${line}\n`);
const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function slicesOf(n: number, round: number): EndpointSlice[] {
  return Array.from({ length: n }, (_, i) =>
    makeSlice(
      `svc-${i}-abcde`,
      [0, 1, 2].map((e) => ({ addresses: [`10.${round * 3 + e}.${i >> 8}.${i & 255}`], conditions: { ready: true }, nodeName: `node-${e}`, zone: `zone-${e}` })),
      { service: `svc-${i}` },
    ),
  );
}

/** Publishes one SliceChanged per slice (as the slicer does, one message per Service), 64 in flight; returns the last sequence. */
async function publishAll(js: ReturnType<typeof jetstream>, names: ReturnType<typeof freshRunNames>['names'], slices: readonly EndpointSlice[], tag: string): Promise<number> {
  let seq = 0;
  for (let i = 0; i < slices.length; i += 64) {
    const acks = await Promise.all(slices.slice(i, i + 64).map((s) => {
      const service = s.metadata.labels?.['kubernetes.io/service-name'] ?? '';
      const body = { type: 'SliceChanged.v1', cluster: 'bench', namespace: 'default', service, upserts: [s], deletes: [], kubeSeq: null, reconcileID: null };
      return publishAcked(js, slicesSubject({ cluster: 'bench', partition: 0, namespace: 'default', service }, names), body, { msgID: `${tag}/${service}` });
    }));
    seq = Math.max(seq, ...acks.map((a) => a.seq));
  }
  return seq;
}

interface Rate {
  readonly label: string;
  readonly slices: number;
  readonly ms: number;
  readonly note: string;
}

/** N slices created then updated by a running publisher at the given limit. */
async function writeRate(n: number, qps: number, burst: number): Promise<Rate[]> {
  const run = freshRunNames(newRunId(Date.now()));
  const sim = await startClusterSim({ scenario: EMPTY_SCENARIO });
  const nc = await connectNats({ url: NATS, name: 'bench-publisher' });
  const js = jetstream(nc);
  const out: Rate[] = [];
  try {
    await ensureStreams(await jetstreamManager(nc), run.names);
    const config = publisherConfigWith({
      mode: 'write', source: 'slices', natsUrl: NATS, databaseUrl: PG, dbSchema: run.schema, cluster: 'bench', kubeStream: run.names.kube, slicesStream: run.names.slices,
      dlqStream: run.names.dlq, subjectPrefix: run.names.prefix, kubeServer: sim.url, kubeApiQps: qps, kubeApiBurst: burst, logLevel: 'warn',
    });
    const h = startPublisher(config);
    try {
      await h.ready;
      for (const [round, verb] of [[0, 'create'], [1, 'update']] as const) {
        const t0 = performance.now();
        const last = await publishAll(js, run.names, slicesOf(n, round), `r${round}`);
        while (h.lastApplied() < last) await sleep(5);
        const ms = performance.now() - t0;
        const limit = qps >= 100_000 ? 'no client-side limit' : `qps ${qps}, burst ${burst}`;
        out.push({ label: `${n} slices, ${verb}, ${limit}`, slices: n, ms, note: `${((n * 1000) / ms).toFixed(0)} slices/s; a ${verb === 'create' ? 'POST' : 'PUT'} per slice, read by a GET or, in batches of 16 or more per namespace, one paged list` });
      }
      const counts = h.counts();
      if ((counts.created ?? 0) !== n || (counts.updated ?? 0) !== n) throw new Error(`expected ${n} creates and ${n} updates, got ${JSON.stringify(counts)}`);
    } finally {
      await h.close();
    }
  } finally {
    await nc.close();
    await sim.close();
    await deleteRunState(NATS, PG, run);
  }
  return out;
}

type Json = Record<string, unknown>;
async function getJson(url: string): Promise<Json> {
  const res = await fetch(url);
  return (await res.json()) as Json;
}

/** Runs kubectl without blocking the event loop (the simulator answers it from this process). */
async function kubectl(server: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync('kubectl', ['--server', server, ...args], { encoding: 'utf8' });
  return stdout;
}

/** Polls the slices of a Service (through the HTTP API kubectl reads) until `done` holds; ms from `t0`. */
async function until(sim: ClusterSim, ns: string, service: string, done: (endpoints: Json[]) => boolean, t0: number): Promise<number> {
  const url = `${sim.url}/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${service}`)}`;
  for (;;) {
    const list = await getJson(url);
    const endpoints = ((list['items'] ?? []) as Json[]).flatMap((s) => (s['endpoints'] ?? []) as Json[]);
    if (done(endpoints)) return performance.now() - t0;
    if (performance.now() - t0 > 30_000) throw new Error(`the change to ${ns}/${service} did not show within 30 s`);
    await sleep(5);
  }
}

/** kubectl delete pod / label node → the slice as kubectl shows it, in a whole stack on the static scenario. */
async function changeToVisible(runs: number): Promise<{ deletes: number[]; relabels: number[]; kubectlMs: number[]; kubectl: boolean }> {
  const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;
  const run = freshRunNames(newRunId(Date.now()));
  const dir = await mkdtemp(join(tmpdir(), 'slicemesh-publisher-'));
  const sim = await startClusterSim({ scenario: STATIC_SCENARIO_FILE });
  const stack = await startStack({
    natsUrl: NATS, databaseUrl: PG, run, cluster: 'bench', partitions: 2, sim, agents: 'none', publisherMode: 'write',
    runDir: join(dir, 'run'), logDir: join(dir, 'logs'), logLevel: 'warn',
  });
  const deletes: number[] = [];
  const relabels: number[] = [];
  const kubectlMs: number[] = [];
  try {
    await stack.ready;
    await stack.settled({ timeoutMs: 60_000 });
    // Pods turn Ready once, shortly after start: wait until the web slices show them all.
    await until(sim, 'shop', 'web', (eps) => eps.length === 6 && eps.every((e) => (e['conditions'] as Json | undefined)?.['ready'] === true), performance.now());
    for (let i = 0; i < runs; i++) {
      const pods = ((await getJson(`${sim.url}/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb`))['items'] as Json[])
        .filter((p) => (p['metadata'] as Json)['deletionTimestamp'] === undefined && ((p['status'] as Json)['podIP'] ?? '') !== '');
      const pod = pods[0] as Json;
      const name = (pod['metadata'] as Json)['name'] as string;
      const ip = (pod['status'] as Json)['podIP'] as string;
      if (hasKubectl) await kubectl(sim.url, ['delete', 'pod', '-n', 'shop', name, '--wait=false']);
      else await fetch(`${sim.url}/api/v1/namespaces/shop/pods/${name}`, { method: 'DELETE' });
      // From kubectl's return (the API has the change) until the pod's endpoint is no longer
      // ready (terminating) or gone in the slices the API serves.
      deletes.push(await until(sim, 'shop', 'web', (eps) => !eps.some((e) => ((e['addresses'] as string[]) ?? []).includes(ip) && (e['conditions'] as Json | undefined)?.['ready'] !== false), performance.now()));
      await sleep(1500); // the replacement pod starts and turns ready
    }
    for (let i = 0; i < runs; i++) {
      const zone = i % 2 === 0 ? 'zone-c' : 'zone-b';
      const t0 = performance.now();
      if (hasKubectl) await kubectl(sim.url, ['label', 'node', 'worker-b-1', `topology.kubernetes.io/zone=${zone}`, '--overwrite']);
      else throw new Error('kubectl is not on PATH');
      kubectlMs.push(performance.now() - t0);
      relabels.push(await until(sim, 'shop', 'web', (eps) => eps.filter((e) => e['nodeName'] === 'worker-b-1').every((e) => e['zone'] === zone), performance.now()));
    }
    if (hasKubectl) await kubectl(sim.url, ['get', 'endpointslices', '-n', 'shop']);
  } finally {
    await stack.close();
    await sim.close();
    await deleteRunState(NATS, PG, run);
    await rm(dir, { recursive: true, force: true });
  }
  return { deletes, relabels, kubectlMs, kubectl: hasKubectl };
}

export async function runPublisherBench(o: { quick: boolean }): Promise<void> {
  const rows: [string, string, string?][] = [];
  progress('write rate at the default QPS 20 / burst 30');
  for (const r of await writeRate(o.quick ? 40 : 100, 20, 30)) rows.push([r.label, fmtMs(r.ms), r.note]);
  progress('write rate with no client-side limit');
  for (const r of await writeRate(o.quick ? 300 : 2000, 100_000, 100_000)) rows.push([r.label, fmtMs(r.ms), r.note]);
  const runs = o.quick ? 3 : 7;
  progress(`kubectl change → slice visible, ${runs} times each (stack on the static scenario)`);
  const v = await changeToVisible(runs);
  const how = v.kubectl ? 'kubectl' : 'HTTP (no kubectl on PATH)';
  if (v.kubectlMs.length > 0) rows.push(['one kubectl command itself (discovery + the write)', fmtMs(middle(v.kubectlMs)), `median of ${runs}; not included below`]);
  rows.push([`${how} delete pod → its endpoint not ready in the slice`, fmtMs(middle(v.deletes)), `median of ${runs}, max ${fmtMs(Math.max(...v.deletes))}; watcher → KUBE → slicer (pod batch period 100 ms) → SLICES → hints → KV hinted → publisher → API`]);
  rows.push([`${how} label node (zone) → endpoints' zone in the slice`, fmtMs(middle(v.relabels)), `median of ${runs}, max ${fmtMs(Math.max(...v.relabels))}`]);
  printTable('publisher (slices written to cluster-sim over HTTP)', rows);
}
