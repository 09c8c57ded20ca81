// Small helpers shared by the benchmark sections: timing, memory sampling, table printing.

import { performance } from 'node:perf_hooks';

export interface Timed<T> {
  readonly ms: number;
  readonly value: T;
}

export function time<T>(fn: () => T): Timed<T> {
  const t0 = performance.now();
  const value = fn();
  return { ms: performance.now() - t0, value };
}

/** Runs `fn` once to warm up, then `runs` times; returns the median duration and the last value. */
export function median<T>(runs: number, fn: () => T): Timed<T> {
  fn();
  const times: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const t = time(fn);
    times.push(t.ms);
    value = t.value;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] ?? 0, value };
}

/** Like median, but every run (warm-up included) gets a fresh input from `setup`, untimed. */
export function medianOf<I, T>(runs: number, setup: () => I, fn: (input: I) => T): Timed<T> {
  fn(setup());
  const times: number[] = [];
  let value!: T;
  for (let i = 0; i < runs; i++) {
    const input = setup();
    const t = time(() => fn(input));
    times.push(t.ms);
    value = t.value;
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)] ?? 0, value };
}

let peakRss = 0;
let peakHeap = 0;
export function sampleMemory(): void {
  const m = process.memoryUsage();
  peakRss = Math.max(peakRss, m.rss);
  peakHeap = Math.max(peakHeap, m.heapUsed);
}
export function peakMemory(): { rssMiB: number; heapMiB: number } {
  sampleMemory();
  return { rssMiB: peakRss / 2 ** 20, heapMiB: peakHeap / 2 ** 20 };
}

export function fmtMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

export function fmtBytes(n: number): string {
  return n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;
}

export function printTable(title: string, rows: readonly (readonly [string, string, string?])[]): void {
  process.stdout.write(`\n## ${title}\n`);
  const w = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.max(...rows.map((r) => r[1].length));
  for (const [k, v, note] of rows) process.stdout.write(`  ${k.padEnd(w)}  ${v.padStart(w2)}${note ? `   ${note}` : ''}\n`);
}
