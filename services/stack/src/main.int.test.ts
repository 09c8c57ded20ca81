// `npm start` as a user runs it (node dist/stack.js, built by the test setup): a short run
// against the real servers exits 0 after --duration, prints the live summary, verifies (replay,
// truth against the API's final state, agents against proxy-plan) and removes its state;
// missing servers are named with the command that starts them.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '@slicemesh/db';
import { connectNats, isApiError, jetstreamManager } from '@slicemesh/nats';
import { REPO_ROOT, mainOf } from './child-process.ts';
import { freshRunNames, streamsOf } from './run-names.ts';

const MAIN = mainOf('stack', REPO_ROOT);
const NATS_URL = process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222';
const DATABASE_URL = process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runMain(args: readonly string[], timeoutMs = 90_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--enable-source-maps', MAIN, ...args], {
      cwd: REPO_ROOT,
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', NATS_URL, DATABASE_URL },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`main.ts ${args.join(' ')} did not exit within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slicemesh-start-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function streamExists(stream: string): Promise<boolean> {
  const nc = await connectNats({ url: NATS_URL, name: 'main-int-test' });
  try {
    await (await jetstreamManager(nc)).streams.info(stream);
    return true;
  } catch (err) {
    if (isApiError(err, 10059)) return false;
    throw err;
  } finally {
    await nc.close();
  }
}

async function schemaExists(schema: string): Promise<boolean> {
  const h = await createDb({ url: DATABASE_URL, max: 1 });
  try {
    const r = await h.pool.query('select 1 from information_schema.schemata where schema_name = $1', [schema]);
    return r.rowCount === 1;
  } finally {
    await h.close();
  }
}

describe('npm start (services/stack/src/main.ts)', () => {
  it('runs the whole stack locked down (the default) for --duration, prints the banner, readiness and summaries, verifies (replay, truth, agents), cleans up and exits 0', async () => {
    const runDir = join(dir, 'in-process');
    const r = await runMain(['--duration', '8', '--speed', '4', '--sim-port', '0', '--agents', 'zone', '--summary-interval', '2s', '--run-dir', runDir, '--verify']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^slicemesh stack — cluster 'local', scenario .*default\.yaml at speed 4$/m);
    expect(r.stdout).toMatch(/^ {2}kube API {4}http:\/\/127\.0\.0\.1:\d+/m);
    // Its own server, locked down with fresh keys per role, the store removed at exit.
    const store = /^ {2}NATS servers its own server: nats-1 nats:\/\/127\.0\.0\.1:\d+\n {14}store (\S+) \(removed at exit\)/m.exec(r.stdout)?.[1];
    expect(store).toBeDefined();
    expect(r.stdout).toContain(`  NATS auth   locked down: one nkey user per role, least privilege; seeds ${store}/auth/<role>.nk (new every run)`);
    expect(existsSync(store as string)).toBe(false);
    expect(r.stdout).toMatch(/^ {2}web view {4}http:\/\/127\.0\.0\.1:\d+\/ {3}the log at any point/m);
    expect(r.stdout).toMatch(/^ready in \d+\.\d s/m);
    expect(r.stdout).toMatch(/^\[ +\d+s\] objects \d+ \| KUBE seq \d+ \| slices \d+ \| hinted \d+\/\d+ svc \| views \d+ \| API writes \d+ \| agents 3\/3 synced \| DLQ 0 \| backlog \d+$/m);
    expect(r.stdout).toMatch(/^verify: replay identical \(\d+ services\)$/m);
    // (b) the live slices and hints equal `slicemesh plan` of the API's final state; (c) each agent's rules equal `proxy-plan` for its node.
    expect(r.stdout).toMatch(/^verify: truth identical \(\d+ services\)$/m);
    expect(r.stdout).toMatch(/^verify: agents identical \(3 agents\)$/m);
    expect(r.stdout.trimEnd().endsWith('stopped')).toBe(true);
    // Three zones: three agents wrote their rules; every component logged to its file.
    expect((await readdir(runDir)).filter((f) => f.endsWith('.rules')).sort()).toEqual(['control-plane-1.rules', 'worker-b-1.rules', 'worker-c-1.rules']);
    const logs = join(runDir, 'logs');
    expect((await readdir(logs)).sort()).toEqual(expect.arrayContaining(['cluster-sim.log', 'hints.log', 'publisher.log', 'slicer.log', 'watcher.log']));
    // Every service did its work within its role's permissions: the server refused nothing.
    for (const f of await readdir(logs)) expect(await readFile(join(logs, f), 'utf8'), f).not.toMatch(/Permissions Violation|Authorization Violation/);
    const id = /^ {2}run {9}([a-z0-9]+) \(removed at exit\)$/m.exec(r.stdout)?.[1] as string;
    expect(id).toBeDefined();
    expect(await schemaExists(freshRunNames(id).schema)).toBe(false);
  });

  it('--processes runs every service as a child process on your NATS without credentials (--nats-auth none), verifies and removes its state', async () => {
    const r = await runMain(['--duration', '10', '--speed', '4', '--sim-port', '0', '--agents', 'zone', '--processes', '--nats-auth', 'none', '--summary-interval', '3s', '--run-dir', join(dir, 'processes'), '--verify']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('services as child processes');
    expect(r.stdout).toContain('  NATS auth   none (--nats-auth none)');
    expect(r.stdout).toMatch(/agents 3\/3 synced/);
    expect(r.stdout).toMatch(/^verify: replay identical/m);
    expect(r.stdout).toMatch(/^verify: truth identical/m);
    expect(r.stdout).toMatch(/^verify: agents identical \(3 agents\)$/m);
    // The run's fresh names are gone again from the shared servers.
    const id = /^ {2}run {9}([a-z0-9]+) \(removed at exit\)$/m.exec(r.stdout)?.[1] as string;
    expect(id).toBeDefined();
    const run = freshRunNames(id);
    for (const s of streamsOf(run.names)) expect(await streamExists(s), s).toBe(false);
    expect(await schemaExists(run.schema)).toBe(false);
  });

  it('names every unreachable server with the command that starts it, and exits 1', async () => {
    const r = await runMain(['--nats-auth', 'none', '--nats-url', 'nats://127.0.0.1:1', '--database-url', 'postgres://postgres@127.0.0.1:1/postgres', '--run-dir', join(dir, 'missing')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('slicemesh: cannot start the stack:');
    expect(lines[1]).toMatch(/^ {2}- NATS not reachable at nats:\/\/127\.0\.0\.1:1: .* start it with: start-stop-daemon .*nats-server .*-js/);
    expect(lines[2]).toMatch(/^ {2}- Postgres not reachable at postgres:\/\/postgres@127\.0\.0\.1:1\/postgres: .* start it with: pg_ctlcluster/);
    expect(lines[3]).toContain('bash scripts/ensure-servers.sh');
    expect(lines).toHaveLength(4);
  });

  const usage = [
    { name: '--help prints every setting and exits 0', args: ['--help'], code: 0, out: /--keep-state\[=false\]/ },
    { name: 'an unknown flag exits 2 with one line', args: ['--turbo'], code: 2, err: /^slicemesh: --turbo: unknown flag/ },
    { name: 'servers of yours without their keys exit 2: the stack cannot lock them down', args: ['--nats-url', 'nats://127.0.0.1:4222'], code: 2, err: /^slicemesh: --nats-url runs the stack against your servers, which it cannot lock down itself: give --nats-auth-dir/ },
  ];
  for (const tc of usage) {
    it(tc.name, async () => {
      const r = await runMain(tc.args);
      expect(r.code).toBe(tc.code);
      if (tc.out) expect(r.stdout).toMatch(tc.out);
      if (tc.err) expect(r.stderr).toMatch(tc.err);
    });
  }
});
