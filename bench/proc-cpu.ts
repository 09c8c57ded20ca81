// CPU time of the processes a benchmark runs beside, read from /proc: the services it spawned,
// the local nats-server and Postgres, and itself. Where a phase's time goes on a machine whose
// cores every process shares, so a figure can be traced to the process that spent it.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * utime+stime of process `pid` so far, ms; with `reaped`, also the time of its children that
 * exited and were waited for (cutime+cstime). NaN when it cannot be read (gone, or not Linux).
 */
export function cpuMsOf(pid: number | undefined, opts: { readonly reaped?: boolean } = {}): number {
  if (pid === undefined) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(stat[11]) + Number(stat[12]) + (opts.reaped === true ? Number(stat[13]) + Number(stat[14]) : 0);
    return (ticks * 1000) / 100;
  } catch {
    return NaN;
  }
}

function pidsNamed(name: string): number[] {
  return spawnSync('pgrep', ['-x', name], { encoding: 'utf8' }).stdout.split('\n').filter((p) => p !== '').map(Number);
}

/** The pid of the nats-server serving `url`'s port on this machine; undefined when there is none. */
export function natsServerPid(url: string): number | undefined {
  const port = new URL(url.split(',')[0] ?? url).port || '4222';
  for (const pid of pidsNamed('nats-server')) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const i = args.findIndex((a) => a === '-p' || a === '--port');
      if ((i >= 0 ? args[i + 1] : '4222') === port) return pid;
    } catch {
      continue;
    }
  }
  return undefined;
}

/** utime+stime (ms) and VmRSS (bytes) of the nats-server `pid` (natsServerPid), or null. */
export function natsServerUsage(pid: number | undefined): { cpuMs: number; rssBytes: number } | null {
  if (pid === undefined) return null;
  try {
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return { cpuMs: cpuMsOf(pid), rssBytes: Number(rss ?? 0) * 1024 };
  } catch {
    return null;
  }
}

/**
 * CPU of every local Postgres process (server, backends, WAL writer, autovacuum), ms; NaN when
 * none runs here. Backends that exited count too: the server waits for each of its children, so
 * their time moves into its cutime+cstime, and two readings stay comparable when a pool closes
 * an idle connection between them (without it, one idle run read -10 ms/s).
 */
export function postgresCpuMs(): number {
  const pids = pidsNamed('postgres');
  if (pids.length === 0) return NaN;
  let total = 0;
  for (const pid of pids) {
    const ms = cpuMsOf(pid, { reaped: true }); // NaN for a backend that exited since pgrep listed it
    if (!Number.isNaN(ms)) total += ms;
  }
  return total;
}

/** CPU so far (ms) by process role. */
export type CpuSample = Map<string, number>;

/** This process's own CPU so far, ms. */
export function ownCpuMs(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1000;
}

/** Per role, the CPU spent between two samples (ms; NaN where either could not be read). */
export function cpuSpent(before: CpuSample, after: CpuSample): [string, number][] {
  return [...after].map(([who, ms]) => [who, ms - (before.get(who) ?? NaN)]);
}
