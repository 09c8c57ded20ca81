// The backbone bench's ingest floor: the many-services burst (every pod flipped once, as fast as
// the store takes it) through bench/ingest-floor.ts's bare clients, run as child processes with
// the pipeline stopped. Two runs: `watch` (the simulator's watch to a client that parses each
// event) and `jetstream` (that client publishes each event to a stream, a second one pulls, parses
// and acks each). What they reach is the most the watcher → KUBE → slicer path could reach on
// this machine with this simulator; the burst's targets are read against it.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { connectNats, jetstreamManager } from '@slicemesh/nats';
import { cpuMsOf, natsServerPid, ownCpuMs } from './proc-cpu.ts';
import { percentile } from './summary.ts';

const SCRIPT = fileURLToPath(new URL('./ingest-floor.ts', import.meta.url));

export type FloorMode = 'watch' | 'jetstream';
/** The bench's own process in a run's CPU split: it serves the simulator's API and writes the burst. */
export const FLOOR_SIM = 'bench (cluster-sim)';

export interface FloorRun {
  readonly mode: FloorMode;
  readonly pods: number;
  /** Events the measuring client saw (Pods and the Endpoints the simulator rewrote). */
  readonly events: number;
  /** From the first store write to the last event seen, ms. */
  readonly spanMs: number;
  /** Store write → seen by the measuring client, per pod, sorted, ms. */
  readonly latencies: readonly number[];
  /** CPU by process over the run, ms (the bench's own process holds the simulator). */
  readonly cpuMs: ReadonlyMap<string, number>;
}

interface ChildReport {
  readonly events: number;
  readonly last: number;
  readonly cpuMs: number;
  readonly pods: Record<string, number>;
}

/** A child of bench/ingest-floor.ts: `ready` resolves once it is set up, nextReport() with each round's line. */
class FloorChild {
  readonly ready: Promise<void>;
  readonly #child: ChildProcess;
  readonly #reports: ChildReport[] = [];
  #waiting: ((r: ChildReport) => void) | undefined;
  readonly #ended: Promise<never>;

  constructor(args: readonly string[], env: NodeJS.ProcessEnv) {
    this.#child = spawn(process.execPath, [SCRIPT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let onReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => (onReady = resolve));
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      if (line === 'ready') onReady();
      else if (line.startsWith('{')) this.#deliver(JSON.parse(line) as ChildReport);
    });
    // 'close', not 'exit': it comes after the child's stdout ended, so after its last line.
    this.#ended = new Promise<never>((_, reject) => this.#child.once('close', (code, signal) => reject(new Error(`ingest-floor ${args[0]} ended (${signal ?? `exit ${code}`}) before reporting`))));
    this.#ended.catch(() => {}); // observed through ready and nextReport
    this.ready = Promise.race([ready, this.#ended]);
  }

  /** The next round's report, in order. */
  nextReport(): Promise<ChildReport> {
    const queued = this.#reports.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return Promise.race([new Promise<ChildReport>((resolve) => (this.#waiting = resolve)), this.#ended]);
  }

  kill(): void {
    if (this.#child.exitCode === null) this.#child.kill('SIGKILL');
  }

  #deliver(r: ChildReport): void {
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) waiting(r);
    else this.#reports.push(r);
  }
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms / 1000} s`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Runs one floor: starts its children against `apiUrl`, then two bursts of `pods` changes,
 * `write(false)` and `write(true)` (each returns its pods' store-write times, epoch ms, by
 * `<namespace>/<name>`). The first only warms the children's code and cluster-sim's; the second
 * is measured. `id` names the run's stream and durable (deleted afterwards).
 */
export async function runIngestFloor(o: {
  readonly mode: FloorMode;
  readonly apiUrl: string;
  readonly natsUrl: string;
  readonly id: string;
  readonly pods: number;
  readonly write: (ready: boolean) => Map<string, number>;
  readonly timeoutMs: number;
}): Promise<FloorRun> {
  const stream = `FLOOR_${o.id}`;
  const subject = `floor${o.id}`;
  const env = { NATS_URL: o.natsUrl, PODS: String(o.pods), ROUNDS: '2' };
  const children: FloorChild[] = [];
  const admin = o.mode === 'jetstream' ? await connectNats({ url: o.natsUrl, name: 'bench-ingest-floor' }) : undefined;
  const jsm = admin === undefined ? undefined : await jetstreamManager(admin);
  try {
    await jsm?.streams.add({ name: stream, subjects: [`${subject}.>`] });
    // The consumer first, so that the publisher's first event finds it pulling.
    const roles: [string, string[]][] = o.mode === 'jetstream' ? [['consumer', ['consume', stream, subject]], ['publisher', ['publish', o.apiUrl, subject]]] : [['watch client', ['watch', o.apiUrl]]];
    for (const [name, args] of roles) {
      const c = new FloorChild(args, env);
      children.push(c);
      await within(c.ready, 30_000, `ingest floor ${name} start`);
    }
    const round = (ready: boolean) => {
      const written = o.write(ready);
      return { written, reports: within(Promise.all(children.map((c) => c.nextReport())), o.timeoutMs, `ingest floor (${o.mode})`) };
    };
    const warm = await round(false).reports;
    const natsPid = natsServerPid(o.natsUrl);
    const [own0, nats0] = [ownCpuMs(), cpuMsOf(natsPid)];
    const first = performance.timeOrigin + performance.now();
    const measured = round(true);
    const reports = await measured.reports;
    const written = measured.written;
    const cpuMs = new Map<string, number>([[FLOOR_SIM, ownCpuMs() - own0]]);
    roles.forEach(([name], i) => cpuMs.set(name, (reports[i]?.cpuMs ?? NaN) - (warm[i]?.cpuMs ?? NaN)));
    if (o.mode === 'jetstream') cpuMs.set('nats-server', cpuMsOf(natsPid) - nats0);
    // The measuring client is the last stage: the consumer, or the watch client alone.
    const last = reports[0]!;
    const latencies: number[] = [];
    for (const [pod, at] of written) {
      const seen = last.pods[pod];
      if (seen === undefined) throw new Error(`ingest floor (${o.mode}): ${pod} was written and never seen`);
      latencies.push(seen - at);
    }
    return { mode: o.mode, pods: written.size, events: last.events, spanMs: last.last - first, latencies: latencies.sort((a, b) => a - b), cpuMs };
  } finally {
    for (const c of children) c.kill();
    await jsm?.streams.delete(stream).catch(() => false);
    await admin?.close();
  }
}

/** p50 and p99 of a floor run's latencies, ms. */
export function floorPercentiles(run: FloorRun): { p50: number; p99: number } {
  return { p50: percentile(run.latencies, 50), p99: percentile(run.latencies, 99) };
}
