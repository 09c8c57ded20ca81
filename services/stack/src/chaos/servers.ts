// The campaign's own nats-server and Postgres: it kills and restarts them, so they must never be
// the machine's shared ones (other tests use those). Each runs on a free port with its data in a
// temporary directory, and can be killed (-9, or Postgres' immediate shutdown) and started again
// on the same port with the same data.

import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats } from '@slicemesh/nats';
import { freePort } from '../child-process.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `name` on PATH or in the usual system directories, or undefined. */
export function findBinary(name: string, extraDirs: readonly string[] = []): string | undefined {
  const dirs = [...extraDirs, ...(process.env['PATH'] ?? '').split(':').filter((d) => d !== ''), '/usr/sbin', '/usr/local/bin', '/usr/bin'];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

/** Debian's Postgres binaries (initdb, pg_ctl): the newest /usr/lib/postgresql/<v>/bin, or PATH. */
export function postgresBinDir(): string | undefined {
  for (const v of ['17', '16', '15', '14', '13']) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  const pgCtl = findBinary('pg_ctl');
  return pgCtl === undefined ? undefined : pgCtl.slice(0, pgCtl.lastIndexOf('/'));
}

export interface OwnServer {
  readonly url: string;
  readonly port: number;
  /** kill -9 (nats-server) or an immediate shutdown (Postgres); then start again after `pauseMs`. */
  restart(pauseMs: number): Promise<void>;
  stop(): Promise<void>;
}

/** A locked-down server: its authorization block, and the seed its probes log in with (an admin's). */
export interface OwnNatsAuth {
  readonly block: string;
  readonly seedFile: string;
}

/** nats-server -js on a free port of 127.0.0.1, its store under `dir`; locked down with `auth`. */
export async function startOwnNats(dir: string, log: (line: string) => void = () => {}, auth?: OwnNatsAuth): Promise<OwnServer> {
  const binary = findBinary('nats-server');
  if (binary === undefined) throw new Error('nats-server not found (PATH, /usr/sbin): install nats-server 2.9 or newer');
  const port = await freePort();
  const store = join(dir, 'nats');
  mkdirSync(store, { recursive: true });
  const url = `nats://127.0.0.1:${port}`;
  const logFile = join(dir, 'nats-server.log');
  const conf = join(dir, 'nats-server.conf');
  if (auth !== undefined) writeFileSync(conf, auth.block, { mode: 0o600 });
  const credentials = auth === undefined ? {} : { nkeySeedFile: auth.seedFile, role: 'admin' as const };
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const out = openSync(logFile, 'a');
    const c = spawn(binary, [...(auth === undefined ? [] : ['-c', conf]), '-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: ['ignore', out, out] });
    child = c;
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        const nc = await connectNats({ url, name: 'chaos-probe', timeoutMs: 500, ...credentials });
        await nc.close();
        return;
      } catch (err) {
        if (c.exitCode !== null || Date.now() > deadline) throw new Error(`nats-server on port ${port} did not come up (see ${logFile}): ${err instanceof Error ? err.message : String(err)}`);
        await sleep(100);
      }
    }
  };
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((r) => c.once('exit', () => r()));
    c.kill(signal);
    await gone;
  };
  await start();
  log(`own nats-server ${url} (store ${store})`);
  return {
    url,
    port,
    restart: async (pauseMs) => {
      await kill('SIGKILL');
      await sleep(pauseMs);
      await start();
    },
    stop: () => kill('SIGTERM'),
  };
}

/** Runs a Postgres binary, as the `postgres` user when this process is root (initdb refuses root). */
function pgCommand(binDir: string, args: readonly string[], asPostgres: boolean): { cmd: string; args: string[] } {
  const exe = join(binDir, args[0] as string);
  if (!asPostgres) return { cmd: exe, args: args.slice(1) };
  const runuser = findBinary('runuser', ['/usr/sbin', '/sbin']);
  if (runuser !== undefined) return { cmd: runuser, args: ['-u', 'postgres', '--', exe, ...args.slice(1)] };
  return { cmd: 'su', args: ['postgres', '-s', '/bin/sh', '-c', [exe, ...args.slice(1)].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')] };
}

function run(binDir: string, args: readonly string[], asPostgres: boolean): void {
  const c = pgCommand(binDir, args, asPostgres);
  const r = spawnSync(c.cmd, c.args, { encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (status ${r.status}): ${(r.stderr || r.stdout || String(r.error ?? '')).trim().slice(-800)}`);
}

/**
 * A Postgres cluster of its own: initdb (trust auth) in `dir`/pg, a free port on 127.0.0.1, its
 * socket in the data directory. As root, it runs as the `postgres` user.
 */
export async function startOwnPostgres(dir: string, log: (line: string) => void = () => {}): Promise<OwnServer> {
  const binDir = postgresBinDir();
  if (binDir === undefined) throw new Error('Postgres binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/<version>/bin or on PATH');
  const asPostgres = process.getuid?.() === 0;
  const data = join(dir, 'pg');
  const logFile = join(dir, 'postgres.log');
  mkdirSync(data, { recursive: true, mode: 0o700 });
  if (asPostgres) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (ids.status !== 0) throw new Error('running as root, but there is no postgres user to run Postgres as');
    chownSync(data, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  run(binDir, ['initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8'], asPostgres);
  const port = await freePort();
  // fsync off: only the process is killed, never the machine, so the OS keeps every write;
  // synchronous_commit stays on, so a commit the services saw survives the immediate shutdown.
  const opts = `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c full_page_writes=off`;
  const start = (): void => run(binDir, ['pg_ctl', '-D', data, '-l', logFile, '-o', opts, '-w', '-t', '60', 'start'], asPostgres);
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  log(`own Postgres ${url} (data ${data})`);
  let stopped = false;
  return {
    url,
    port,
    restart: async (pauseMs) => {
      run(binDir, ['pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop'], asPostgres);
      await sleep(pauseMs);
      start();
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      run(binDir, ['pg_ctl', '-D', data, '-m', 'fast', '-w', 'stop'], asPostgres);
    },
  };
}
