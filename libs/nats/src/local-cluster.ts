// A local NATS server or JetStream cluster of `nats-server` processes on free ports of 127.0.0.1,
// for tests, the local stack (`npm start -- --nats-cluster 3`) and the fault campaign. Each server
// has its own store directory under `dir` and can be killed (-9) and started again on the same
// ports with the same store. Size 1 is a plain single server (no cluster options).
//
// The argument building (planLocalCluster, natsServerArgs) is pure and apart from the spawning.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { StorageType } from '@nats-io/jetstream';
import { jetstreamManager } from './js-domain.ts';
import { nuid } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from './connect.ts';

/** The two ports of one server. */
export interface LocalNatsPorts {
  /** Client port (nats://127.0.0.1:<client>). */
  readonly client: number;
  /** Cluster (route) port; unused when the cluster has one server. */
  readonly cluster: number;
  /** HTTP monitoring port (-m), for clientNames(); none when unset. */
  readonly monitor?: number;
}

/** One server of a planned cluster: everything its command line is built from. */
export interface LocalNatsServerSpec {
  /** server_name, also the name of its store directory and log file: `<namePrefix>-<i>` (1-based). */
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  /** HTTP monitoring port (-m); undefined: none. */
  readonly monitorPort?: number;
  /** `<dir>/<name>`. */
  readonly storeDir: string;
  /** `<dir>/<name>.log`: the server's own log (-l). */
  readonly logFile: string;
  /** Cluster ports of the other servers (routes), empty for a single server. */
  readonly routes: readonly number[];
  /** Cluster name shared by all servers; undefined for a single server. */
  readonly clusterName: string | undefined;
  /** `<dir>/<name>.conf`, the config file (-c) holding the authorization block; undefined: an open server. */
  readonly configFile?: string;
}

export interface PlanLocalClusterOptions {
  /** Number of servers, >= 1. */
  readonly size: number;
  /** Parent directory of the store directories and logs. */
  readonly dir: string;
  /** One entry per server; its length must equal size. */
  readonly ports: readonly LocalNatsPorts[];
  /** Defaults to 'nats'. */
  readonly namePrefix?: string;
  /** Defaults to 'slicemesh'. */
  readonly clusterName?: string;
  /** Each server reads a config file of its own (for the authorization block). */
  readonly withConfigFile?: boolean;
}

/** The servers of a cluster (pure: no files, no ports taken). */
export function planLocalCluster(opts: PlanLocalClusterOptions): LocalNatsServerSpec[] {
  const { size, dir, ports } = opts;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`cluster size must be an integer >= 1, got ${size}`);
  if (ports.length !== size) throw new RangeError(`cluster of ${size} needs ${size} port pairs, got ${ports.length}`);
  const monitors = ports.flatMap((p) => (p.monitor === undefined ? [] : [p.monitor]));
  const clientPorts = ports.map((p) => p.client);
  const used = size === 1 ? [...clientPorts, ...monitors] : [...ports.flatMap((p) => [p.client, p.cluster]), ...monitors];
  if (new Set(used).size !== used.length) throw new RangeError(`ports must all differ, got ${used.join(', ')}`);
  const prefix = opts.namePrefix ?? 'nats';
  const clusterName = size === 1 ? undefined : (opts.clusterName ?? 'slicemesh');
  return ports.map((p, i) => {
    const name = `${prefix}-${i + 1}`;
    return {
      name,
      port: p.client,
      clusterPort: p.cluster,
      ...(p.monitor === undefined ? {} : { monitorPort: p.monitor }),
      storeDir: join(dir, name),
      logFile: join(dir, `${name}.log`),
      routes: size === 1 ? [] : ports.filter((_, j) => j !== i).map((o) => o.cluster),
      clusterName,
      ...(opts.withConfigFile === true ? { configFile: join(dir, `${name}.conf`) } : {}),
    };
  });
}

/** The nats-server command line (without the binary) of one planned server. */
export function natsServerArgs(spec: LocalNatsServerSpec): string[] {
  // Flags after -c override the file, which only adds what has no flag (authorization).
  const args = [...(spec.configFile === undefined ? [] : ['-c', spec.configFile]), '-a', '127.0.0.1', '-p', String(spec.port), '--server_name', spec.name, '-js', '-sd', spec.storeDir, '-l', spec.logFile];
  if (spec.monitorPort !== undefined) args.push('-m', String(spec.monitorPort));
  if (spec.clusterName !== undefined) {
    args.push('--cluster_name', spec.clusterName, '--cluster', `nats://127.0.0.1:${spec.clusterPort}`);
    if (spec.routes.length > 0) args.push('--routes', spec.routes.map((p) => `nats://127.0.0.1:${p}`).join(','));
  }
  return args;
}

/** `nats-server` on PATH or in the usual system directories, or undefined. */
export function findNatsServerBinary(): string | undefined {
  const dirs = [...(process.env['PATH'] ?? '').split(':').filter((d) => d !== ''), '/usr/sbin', '/usr/local/bin', '/usr/bin'];
  return dirs.map((d) => join(d, 'nats-server')).find((p) => existsSync(p));
}

/** A free TCP port on 127.0.0.1 right now (the server binds it moments later). */
export function freeLocalPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface LocalNatsServer {
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  /** Client URL, nats://127.0.0.1:<port>. */
  readonly url: string;
  readonly storeDir: string;
  readonly logFile: string;
  /** The running process's pid; undefined while stopped. */
  readonly pid: number | undefined;
  /** True while the process runs. */
  readonly running: boolean;
  /** Sends `signal` (default SIGKILL) and resolves once the process has exited; no-op if stopped. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again (same ports, same store); resolves once it accepts clients. No-op if running. */
  start(): Promise<void>;
  /** The names of the clients connected to it now (its monitoring port's /connz); undefined without a monitoring port or an answer. */
  clientNames(): Promise<readonly string[] | undefined>;
}

export interface LocalNatsCluster {
  /** Client URLs, one per server. */
  readonly urls: readonly string[];
  /** The client URLs comma-joined: a NATS_URL. */
  readonly url: string;
  readonly servers: readonly LocalNatsServer[];
  /**
   * Resolves once JetStream answers and can place a stream with one replica per server: the meta
   * leader is elected and every server is a peer. Rejects after `timeoutMs` (default 30000).
   */
  waitForMeta(timeoutMs?: number): Promise<void>;
  /** SIGTERM to every server (SIGKILL after 10 s) and waits for their exit. Keeps the stores. */
  stop(): Promise<void>;
}

export interface StartLocalNatsClusterOptions {
  /** Number of servers, >= 1; 1 is a plain single server. */
  readonly size: number;
  /** Parent directory of the stores (`<dir>/<name>`) and logs (`<dir>/<name>.log`); created if missing. */
  readonly dir: string;
  /** Fixed ports, one pair per server; default: free ports. */
  readonly ports?: readonly LocalNatsPorts[];
  /** Receives one line per server started/stopped. */
  readonly log?: (line: string) => void;
  /** Defaults to 'nats'. */
  readonly namePrefix?: string;
  /** Defaults to 'slicemesh'. */
  readonly clusterName?: string;
  /** The nats-server binary; default: found on PATH, /usr/sbin, /usr/local/bin, /usr/bin. */
  readonly binary?: string;
  /** How long each server may take to accept clients, ms. Defaults to 20000. */
  readonly startTimeoutMs?: number;
  /**
   * Locks the servers down: `block` (an `authorization { ... }` block, auth-config.ts) goes into
   * each server's config file, and the probes here connect with the nkey seed in `seedFile` (an
   * admin's). Unset: open servers.
   */
  readonly authorization?: { readonly block: string; readonly seedFile: string };
  /**
   * More server configuration, in nats-server syntax, for what has no flag: a JetStream domain
   * (`jetstream { domain: hub }`), leafnode listeners and remotes.
   */
  readonly config?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The client names a server's /connz lists; undefined when there is no port or no answer within 2 s. */
async function clientNamesAt(monitorPort: number | undefined): Promise<readonly string[] | undefined> {
  if (monitorPort === undefined) return undefined;
  try {
    const res = await fetch(`http://127.0.0.1:${monitorPort}/connz?limit=100000`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { connections?: { name?: string }[] };
    return (body.connections ?? []).map((c) => c.name ?? '');
  } catch {
    return undefined;
  }
}

/**
 * Starts `size` nats-servers (JetStream, clustered when size > 1) and resolves once each accepts
 * clients. Call waitForMeta() before creating replicated streams. The servers are killed if this
 * process exits without stop().
 */
export async function startLocalNatsCluster(opts: StartLocalNatsClusterOptions): Promise<LocalNatsCluster> {
  const binary = opts.binary ?? findNatsServerBinary();
  if (binary === undefined) throw new Error('nats-server not found (PATH, /usr/sbin, /usr/local/bin): install nats-server 2.9 or newer');
  const log = opts.log ?? (() => {});
  const startTimeoutMs = opts.startTimeoutMs ?? 20_000;
  const ports: LocalNatsPorts[] = opts.ports !== undefined ? [...opts.ports] : [];
  if (opts.ports === undefined) {
    const taken = new Set<number>();
    const next = async (): Promise<number> => {
      for (;;) {
        const p = await freeLocalPort();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    for (let i = 0; i < opts.size; i++) ports.push({ client: await next(), cluster: await next(), monitor: await next() });
  }
  const auth = opts.authorization;
  const specs = planLocalCluster({
    size: opts.size,
    dir: opts.dir,
    ports,
    ...(opts.namePrefix === undefined ? {} : { namePrefix: opts.namePrefix }),
    ...(opts.clusterName === undefined ? {} : { clusterName: opts.clusterName }),
    withConfigFile: auth !== undefined || opts.config !== undefined,
  });
  mkdirSync(opts.dir, { recursive: true });
  // The block itself, not an include: nats-server resolves includes relative to the config file.
  const fileText = [auth?.block, opts.config].filter((x) => x !== undefined).join('\n');
  for (const s of specs) if (s.configFile !== undefined) writeFileSync(s.configFile, fileText, { mode: 0o600 });
  const probeAuth = auth === undefined ? {} : { nkeySeedFile: auth.seedFile, role: 'admin' as const };

  const children = new Map<string, ChildProcess>();
  const onExit = () => {
    for (const c of children.values()) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  };
  process.once('exit', onExit);

  const servers: LocalNatsServer[] = specs.map((spec) => {
    const url = `nats://127.0.0.1:${spec.port}`;
    const alive = (): ChildProcess | undefined => {
      const c = children.get(spec.name);
      return c !== undefined && c.exitCode === null && c.signalCode === null ? c : undefined;
    };
    const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> => {
      const c = alive();
      if (c === undefined) return;
      const gone = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill(signal);
      await gone;
      log(`nats-server ${spec.name} (${url}) stopped by ${signal}`);
    };
    const start = async (): Promise<void> => {
      if (alive() !== undefined) return;
      mkdirSync(spec.storeDir, { recursive: true });
      const out = openSync(spec.logFile, 'a');
      // Its own process group: a Ctrl-C to the terminal's group must not take the servers down
      // before the stack has cleaned up through them (they are stopped by stop() or at exit).
      const c = spawn(binary, natsServerArgs(spec), { stdio: ['ignore', out, out], detached: true });
      closeSync(out);
      children.set(spec.name, c);
      let spawnError: Error | undefined;
      c.once('error', (err) => (spawnError = err));
      const deadline = Date.now() + startTimeoutMs;
      for (;;) {
        try {
          const nc = await connectNats({ url, name: 'local-cluster-probe', timeoutMs: 500, ...probeAuth });
          await nc.close();
          break;
        } catch (err) {
          const exited = spawnError !== undefined || c.exitCode !== null || c.signalCode !== null;
          if (exited || Date.now() > deadline) {
            if (!exited) c.kill('SIGKILL');
            const why = spawnError?.message ?? (err instanceof Error ? err.message : String(err));
            throw new Error(`nats-server ${spec.name} on port ${spec.port} did not come up (see ${spec.logFile}): ${why}`, { cause: err });
          }
          await sleep(100);
        }
      }
      log(`nats-server ${spec.name} ${url} (cluster port ${spec.clusterPort}, store ${spec.storeDir}, pid ${c.pid})`);
    };
    return {
      name: spec.name,
      port: spec.port,
      clusterPort: spec.clusterPort,
      url,
      storeDir: spec.storeDir,
      logFile: spec.logFile,
      get pid() {
        return alive()?.pid;
      },
      get running() {
        return alive() !== undefined;
      },
      kill,
      start,
      clientNames: () => clientNamesAt(spec.monitorPort),
    };
  });

  const stop = async (): Promise<void> => {
    await Promise.all(
      servers.map(async (s) => {
        const timer = setTimeout(() => void s.kill('SIGKILL'), 10_000);
        try {
          await s.kill('SIGTERM');
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    process.removeListener('exit', onExit);
  };

  try {
    await Promise.all(servers.map((s) => s.start()));
  } catch (err) {
    await stop();
    throw err;
  }

  const urls = servers.map((s) => s.url);
  const url = urls.join(',');
  const waitForMeta = async (timeoutMs = 30_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    const nc: NatsConnection = await connectNats({ url, name: 'local-cluster-meta', timeoutMs: 2000, ...probeAuth });
    try {
      let last = '';
      for (;;) {
        try {
          // JetStream places at most 5 replicas: with more servers, 5 joined is what counts.
          await placeProbe(nc, Math.min(opts.size, 5));
          return;
        } catch (err) {
          last = err instanceof Error ? err.message : String(err);
        }
        if (Date.now() > deadline) throw new Error(`JetStream of the local NATS cluster (${url}) not ready after ${timeoutMs} ms: ${last}`);
        await sleep(250);
      }
    } finally {
      await nc.close();
    }
  };
  return { urls, url, servers, waitForMeta, stop };
}

/** Creates and deletes a memory stream with `replicas` replicas: proves the meta group can place it. */
async function placeProbe(nc: NatsConnection, replicas: number): Promise<void> {
  const jsm = await jetstreamManager(nc, { timeout: 2000 });
  await jsm.getAccountInfo();
  const name = `_local_cluster_probe_${nuid.next()}`;
  await jsm.streams.add({ name, subjects: [`_local_cluster_probe.${name}`], storage: StorageType.Memory, num_replicas: replicas });
  await jsm.streams.delete(name);
}
