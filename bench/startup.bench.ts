// Start-up: how long programs take to become useful, in the form they run in production (the
// bundles in dist/, built here first) and from the TypeScript sources (Node strips the types),
// against a bare `node -e 0` measured in the same run. The CLI plans the bundled example; each
// service is restarted inside a running stack and timed from spawn to /readyz answering 200.

import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startClusterSim } from '@slicemesh/cluster-sim';
import { REPO_ROOT, deleteRunState, freshRunNames, newRunId, startStack } from '@slicemesh/stack';
import { PROGRAMS, buildDist } from '../scripts/build.ts';
import { fmtMs, printTable } from './harness.ts';

const NATS = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const PG = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const EXAMPLE = 'test/fixtures/example-cluster.json';
const progress = (line: string) => process.stderr.write(`startup: ${line}\n`);

const middle = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

/** Median wall time of `node ...args` run to exit `runs` times (after one warm-up); throws on a non-zero exit. */
function timeNode(args: readonly string[], runs: number): number {
  const ms: number[] = [];
  for (let i = 0; i <= runs; i++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.split('\n')[0]}`);
    if (i > 0) ms.push(performance.now() - t);
  }
  return middle(ms);
}

type Form = 'dist' | 'sources';

/** Restarts each service of a running stack `runs` times; median spawn → /readyz 200 per service. */
async function serviceStarts(form: Form, runs: number): Promise<Map<string, number>> {
  const run = freshRunNames(newRunId(Date.now()));
  const dir = await mkdtemp(join(tmpdir(), 'slicemesh-startup-'));
  const sim = await startClusterSim({}); // the default scenario: 9 nodes in 3 zones, so one agent per zone
  const stack = await startStack({
    natsUrl: NATS, databaseUrl: PG, run, cluster: 'startup', partitions: 2, sim, agents: 'zone', processes: true,
    runDir: join(dir, 'run'), logDir: join(dir, 'logs'), logLevel: 'warn',
    ...(form === 'dist' ? { builtRoot: REPO_ROOT } : {}),
  });
  const out = new Map<string, number>();
  try {
    await stack.ready;
    for (const c of stack.components()) {
      const ms: number[] = [];
      for (let i = 0; i < runs; i++) {
        await c.stop();
        const t = performance.now();
        await c.restart();
        ms.push(performance.now() - t);
      }
      out.set(c.name.startsWith('agent/') ? 'proxy-agent' : c.name, middle(ms));
    }
  } finally {
    await stack.close();
    await sim.close();
    await deleteRunState(NATS, PG, run);
    await rm(dir, { recursive: true, force: true });
  }
  return out;
}

export async function runStartupBench(o: { quick: boolean }): Promise<void> {
  const runs = o.quick ? 3 : 7;
  progress('building dist/');
  const built = await buildDist();
  const bare = timeNode(['-e', '0'], runs);
  const cliDist = timeNode(['--enable-source-maps', 'dist/slicemesh.js', 'plan', '-f', EXAMPLE], runs);
  const cliSrc = timeNode(['services/cli/src/main.ts', 'plan', '-f', EXAMPLE], runs);
  const rows: [string, string, string?][] = [
    [`npm run build (esbuild, ${Object.keys(PROGRAMS).length} programs)`, fmtMs(built.ms), `${(built.bytes / 1024).toFixed(0)} KiB written with source maps`],
    ['bare node -e 0', fmtMs(bare), `node ${process.version}, median of ${runs}`],
    ['slicemesh plan on the example: dist/slicemesh.js', fmtMs(cliDist), `${(cliDist / bare).toFixed(1)}x bare node; goal ≤ 250 ms`],
    ['slicemesh plan on the example: from the sources', fmtMs(cliSrc), `${(cliSrc / bare).toFixed(1)}x bare node (type stripping, development)`],
  ];
  for (const form of ['dist', 'sources'] as const) {
    progress(`restarting each service of a stack (${form}) ${runs} times`);
    const starts = await serviceStarts(form, runs);
    for (const [name, ms] of starts) rows.push([`${name}: spawn → /readyz 200, ${form}`, fmtMs(ms), `${(ms / bare).toFixed(1)}x bare node, median of ${runs}`]);
  }
  printTable('startup (programs as built for production, and from the sources)', rows);
}
