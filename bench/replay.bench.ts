// `npm run bench -- --section replay`: a 1M-event KUBE log (100k with --quick) written as a .slog
// file, then timed: open the file, resolve "latest", replay to the end state (stateAt), as
// `slicemesh log at latest -f FILE` does. Target: 1M events in ≤ 60 s.
//
// The cluster: 30 nodes in 3 zones, 500 Services (topology-mode Auto on every fifth) with 20
// pods each. After creating them, the rest of the log is what a busy cluster writes, from a
// seeded PRNG: rollouts (a Service's 20 pods replaced one by one — new pod created, Ready, old
// pod terminating, deleted — 80 events within about 0.4 s, then a pause of 1.5 s), and between
// rollouts Ready flips of random pods; every 500th rollout a node changes zone.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { WatchedObject } from '@slicemesh/contracts';
import { DELETED, UPSERTED, changeEvent, kubeSubjectOf } from '@slicemesh/contracts';
import { LOG_FORMAT, LOG_VERSION, eventLine, logSettings, openLogFile, resolvePoint, stateAt, streamSink } from '@slicemesh/history';
import type { Pod } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { makeNode, makePod, makeService, prng } from '@slicemesh/testing';

const NODES = 30;
const SERVICES = 500;
const PODS_PER_SERVICE = 20;
const CLUSTER = 'bench';

/** Writes a log of `events` events to `path`; returns the number written. */
export async function writeLog(path: string, events: number): Promise<number> {
  const out = streamSink(path, false);
  const settings = logSettings({ cluster: CLUSTER, partitions: 4 });
  await out.sink(`${JSON.stringify({ format: LOG_FORMAT, version: LOG_VERSION, cluster: CLUSTER, settings, exportedAt: new Date().toISOString(), snapshot: { seq: 0, time: '' }, origin: 'bench' })}\n`);
  const rand = prng(12);
  const t0 = Date.parse('2026-11-26T00:00:00Z');
  let seq = 0;
  let rv = 0;
  let batch = '';
  let clock = 0;
  const emit = async (type: typeof UPSERTED | typeof DELETED, o: WatchedObject): Promise<void> => {
    const object = { ...o, metadata: { ...o.metadata, resourceVersion: String(++rv) } } as WatchedObject;
    seq++;
    const time = new Date(t0 + seq * 10 + clock).toISOString();
    batch += `${eventLine(seq, time, kubeSubjectOf(CLUSTER, object, { prefix: '', partitions: 4 }), changeEvent(type, CLUSTER, object, time))}\n`;
    if (batch.length > 1 << 20) {
      await out.sink(batch);
      batch = '';
    }
  };
  for (let n = 0; n < NODES; n++) await emit(UPSERTED, makeNode(`node-${n}`, { zone: `zone-${n % 3}`, cpu: '8' }));
  const pods: Pod[] = [];
  let ip = 0;
  const newPod = (svc: number, ready: boolean): Pod => {
    ip++;
    return makePod(`app-${svc}-${ip}`, { namespace: `ns-${svc % 50}`, uid: `uid-${ip}`, labels: { app: `app-${svc}` }, ips: [`10.${(ip >> 16) & 255}.${(ip >> 8) & 255}.${ip & 255}`], nodeName: `node-${ip % NODES}`, ready });
  };
  for (let s = 0; s < SERVICES; s++) {
    await emit(UPSERTED, makeService(`app-${s}`, { namespace: `ns-${s % 50}`, uid: `uid-svc-${s}`, selector: { app: `app-${s}` }, clusterIP: `10.96.${s >> 8}.${s & 255}`, ...(s % 5 === 0 ? { annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } } : {}) }));
    for (let p = 0; p < PODS_PER_SERVICE; p++) {
      const pod = newPod(s, true);
      pods.push(pod);
      await emit(UPSERTED, pod);
    }
  }
  // The log's clock: `emit` stamps seq * 10 ms; pauses move it on.
  const stamp = (): string => new Date(t0 + seq * 10 + clock).toISOString();
  const bySvc = new Map<number, number[]>();
  pods.forEach((p, i) => {
    const svc = Number(p.metadata.labels?.['app']?.slice(4));
    bySvc.set(svc, [...(bySvc.get(svc) ?? []), i]);
  });
  let rollouts = 0;
  while (seq < events) {
    // A few Ready flips of random pods.
    for (let k = 0; k < 5 && seq < events; k++) {
      const i = Math.floor(rand() * pods.length);
      const pod = pods[i] as Pod;
      const ready = pod.status?.conditions?.[0]?.status !== 'True';
      const next = { ...pod, status: { ...pod.status, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } } as Pod;
      pods[i] = next;
      await emit(UPSERTED, next);
    }
    const svc = Math.floor(rand() * SERVICES);
    for (const i of bySvc.get(svc) ?? []) {
      if (seq >= events) break;
      const old = pods[i] as Pod;
      const fresh = newPod(svc, false);
      await emit(UPSERTED, fresh);
      const ready = { ...fresh, status: { ...fresh.status, conditions: [{ type: 'Ready', status: 'True' }] } } as Pod;
      await emit(UPSERTED, ready);
      const leaving = { ...old, metadata: { ...old.metadata, deletionTimestamp: stamp() }, status: { ...old.status, conditions: [{ type: 'Ready', status: 'False' }] } } as Pod;
      await emit(UPSERTED, leaving);
      await emit(DELETED, leaving);
      pods[i] = ready;
    }
    clock += 1500;
    if (++rollouts % 500 === 0 && seq < events) {
      const n = Math.floor(rand() * NODES);
      await emit(UPSERTED, makeNode(`node-${n}`, { zone: `zone-${(n + rollouts / 500) % 3}`, cpu: '8' }));
    }
  }
  if (batch !== '') await out.sink(batch);
  await out.sink(`${JSON.stringify({ t: 'end', events: seq })}\n`);
  await out.close();
  return seq;
}

export async function runReplayBench(o: { quick: boolean }): Promise<void> {
  const events = o.quick ? 100_000 : 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'slicemesh-replay-bench-'));
  const path = join(dir, 'bench.slog');
  try {
    process.stdout.write(`\n## replay (${events.toLocaleString('en')} KUBE events from a .slog file)\n`);
    const g0 = performance.now();
    const written = await writeLog(path, events);
    process.stdout.write(`generated ${written.toLocaleString('en')} events, ${(statSync(path).size / 1048576).toFixed(0)} MiB, in ${((performance.now() - g0) / 1000).toFixed(1)} s (not timed below)\n`);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const src = await openLogFile(path);
    const t1 = performance.now();
    const at = await resolvePoint(src, 'latest');
    const state = await stateAt(src, at, undefined, { checkpoints: false });
    const t2 = performance.now();
    const total = (t2 - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuS = (cpu.user + cpu.system) / 1e6;
    const slices = state.services.reduce((n, s) => n + s.slices.length, 0);
    process.stdout.write(`open + index: ${((t1 - t0) / 1000).toFixed(1)} s; replay to seq ${at.seq}: ${((t2 - t1) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`replay of ${written.toLocaleString('en')} events to the end state: ${total.toFixed(1)} s, ${Math.round(written / total).toLocaleString('en')} events/s (target ≤ 60 s) — ${state.services.length} services, ${slices} slices, ${state.nodes.length} nodes\n`);
    // On a shared machine wall time includes waiting for a core: the CPU time says what the replay cost.
    process.stdout.write(`CPU time of the replay: ${cpuS.toFixed(1)} s (${Math.round(written / cpuS).toLocaleString('en')} events per CPU-second); load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
