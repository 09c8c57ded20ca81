// startStack: the whole pipeline on one machine — cluster-sim, one watcher, one slicer, one
// hints service, optionally the publisher, and dry-run proxy agents — in this process or as child processes, against the
// given NATS and Postgres, under names that isolate it from any other run.

import { createWriteStream, mkdirSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ClusterSim, Scenario } from '@slicemesh/cluster-sim';
import { jsonLog, silentLog, startClusterSim } from '@slicemesh/cluster-sim';
import type { DbHandle } from '@slicemesh/db';
import { createDb, migrateToLatest } from '@slicemesh/db';
import type { JetStreamManager, NatsConnection } from '@slicemesh/nats';
import { connectNats, ensureKv, ensureStreams, jetstreamManager, roleCredentials } from '@slicemesh/nats';
import type { AgentMode, NodeLike } from './agents.ts';
import { pickAgents } from './agents.ts';
import { freePort, startChild } from './child-process.ts';
import type { ServiceProgram } from './child-process.ts';
import type { Component, Incarnation } from './component.ts';
import { restartableComponent } from './component.ts';
import type { LogDestination } from './in-process.ts';
import { agentInProcess, hintsInProcess, publisherInProcess, slicerInProcess, watcherInProcess } from './in-process.ts';
import type { BackboneReading } from './probe.ts';
import { consumersOf, countViewKeys, readBackbone, scrapeMetric } from './probe.ts';
import type { ReplicaCounts } from './replicas.ts';
import { ONE_EACH, hasReplicas, replicaKindOf, replicaNames, replicaReadiness } from './replicas.ts';
import type { RunNames } from './run-names.ts';
import type { AgentSpec, Env, LogLevel, StackLayout, StackPublisherMode } from './service-env.ts';
import { agentEnv, hintsEnv, publisherEnv, slicerEnv, watcherEnv } from './service-env.ts';
import type { SettleOptions, SettleReading } from './settle.ts';
import { waitSettled } from './settle.ts';
import type { StackStatus } from './status.ts';

export type ServiceKind = 'watcher' | 'slicer' | 'hints' | 'publisher' | 'agents';
export const SERVICE_KINDS: readonly ServiceKind[] = ['watcher', 'slicer', 'hints', 'publisher', 'agents'];

export interface StackOptions {
  /** NATS server(s), comma-separated (every server of a cluster). */
  readonly natsUrl: string;
  /** Replicas of every stream and bucket (NATS_REPLICAS of every service); unset: new ones get 1, existing ones keep theirs. 3 on a cluster of 3 or more. */
  readonly natsReplicas?: number;
  readonly databaseUrl: string;
  /** Stream, bucket and schema names (freshRunNames(id) or PERSISTENT_RUN). */
  readonly run: RunNames;
  /** Source cluster id. Defaults to 'local'. */
  readonly cluster?: string;
  /** KUBE partitions. Defaults to 2. */
  readonly partitions?: number;
  /** A simulator the caller started (and closes). Otherwise the stack starts one. */
  readonly sim?: ClusterSim;
  /** Scenario of the simulator the stack starts: a Scenario, a file, or the default scenario. */
  readonly scenario?: Scenario | string;
  readonly speed?: number;
  readonly seed?: string;
  /** Port of the simulator the stack starts. Defaults to 0 (any free port). */
  readonly simPort?: number;
  /** API server the watcher uses. Defaults to the simulator's URL (tests put a proxy between). */
  readonly kubeServer?: string;
  /** Services to run; the others are left out (a test may run them itself). Defaults to all. */
  readonly services?: readonly ServiceKind[];
  /**
   * The publisher: writes the slices to the API server (`write`), only counts what it would
   * write (`shadow`), or does not run (`off`, the default here; `npm start` asks for `write`).
   */
  readonly publisherMode?: StackPublisherMode;
  /** Proxy agents: one per node, one per zone, or none. Defaults to 'node'. */
  readonly agents?: AgentMode;
  /** Run these as child processes (dist/<svc>.js when built, else services/<svc>/src/main.ts); true = all. Defaults to none. */
  readonly processes?: boolean | readonly ServiceKind[];
  /** Child processes run the bundles in <builtRoot>/dist, as deployed, whatever form this process runs in. */
  readonly builtRoot?: string;
  /** Directory of the agents' dry-run rules files (`<node>.rules`); created if missing. */
  readonly runDir: string;
  /** Directory of one log file per component; undefined: logs are dropped. */
  readonly logDir?: string;
  /** Level of every service's log. Defaults to 'info'. */
  readonly logLevel?: LogLevel;
  /** Slicer pod batching window, ms. Defaults to 100. */
  readonly batchPeriodMs?: number;
  /** Slicer ack wait, ms. Defaults to 3000 (redelivery soon after a killed slicer). */
  readonly ackWaitMs?: number;
  /**
   * Copies of the watcher, the slicer and the hints service (missing kinds: 1). One replica keeps
   * the bare name (`slicer`); several are `slicer-0` … with their own health port and log file.
   */
  readonly replicas?: Partial<ReplicaCounts>;
  /**
   * A locked-down NATS: the directory of the role seeds (writeNatsAuth's `<role>.nk`). Each
   * service connects with its role's seed and the stack itself as admin. Unset: no credentials.
   */
  readonly natsAuthDir?: string;
  /** Extra env variables per component name (e.g. one agent's NATS_URL through a proxy); child processes and in-process alike. */
  readonly envOverrides?: (component: string) => Env | undefined;
}

export interface StackUrls {
  readonly kube: string;
  readonly nats: string;
  readonly database: string;
  /** Each component's health server (`/metrics`, `/healthz`, `/readyz`), once listening. */
  readonly health: Readonly<Record<string, string | undefined>>;
}

export interface Stack {
  /** Resolves when every component is ready; rejects naming the first that failed. */
  readonly ready: Promise<void>;
  readonly run: RunNames;
  readonly layout: StackLayout;
  /** The simulator (the caller's or the stack's own); undefined with an external kubeServer only. */
  readonly sim: ClusterSim | undefined;
  readonly agents: readonly AgentSpec[];
  /** The stack's own connections, for probes and tests. */
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly db: DbHandle['db'];
  readonly urls: StackUrls;
  components(): readonly Component[];
  /** How many copies of each replicable service run. */
  readonly replicas: ReplicaCounts;
  /** 'watcher', 'slicer', 'hints' (`slicer-0` … with replicas), 'publisher' or 'agent/<node>'; throws for an unknown name. */
  component(name: string): Component;
  status(): Promise<StackStatus>;
  /** One backbone reading (plus the simulator's resourceVersion). */
  reading(): Promise<SettleReading>;
  /** Waits until nothing is pending or moving anywhere (see settle.ts). */
  settled(opts?: SettleOptions): Promise<SettleReading>;
  /** Stops every component (agents first), then the simulator if the stack started it, then its connections. Idempotent. */
  close(): Promise<void>;
}

const NULL_DESTINATION = { write: (_line: string) => {} };

async function nodesOf(sim: ClusterSim | undefined, kubeServer: string): Promise<NodeLike[]> {
  if (sim !== undefined) return sim.store.list('Node') as unknown as NodeLike[];
  const res = await fetch(`${kubeServer}/api/v1/nodes`);
  if (!res.ok) throw new Error(`listing nodes at ${kubeServer}: HTTP ${res.status}`);
  return ((await res.json()) as { items: NodeLike[] }).items;
}

/**
 * Starts the stack and returns once the backbone is declared and every component is starting;
 * await `ready` for readiness. Rejects when NATS or Postgres cannot be reached (with the
 * adapters' one-line messages) or the scenario is invalid.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const startedAt = Date.now();
  const run = options.run;
  const logLevel = options.logLevel ?? 'info';
  const wanted = new Set(options.services ?? SERVICE_KINDS);
  const asProcess = (k: ServiceKind): boolean => options.processes === true || (Array.isArray(options.processes) && options.processes.includes(k));
  mkdirSync(options.runDir, { recursive: true });
  if (options.logDir !== undefined) mkdirSync(options.logDir, { recursive: true });
  const logFiles: WriteStream[] = [];
  const logFile = (name: string): WriteStream | undefined => {
    if (options.logDir === undefined) return undefined;
    const f = createWriteStream(join(options.logDir, `${name.replace(/\//g, '-')}.log`), { flags: 'a' });
    logFiles.push(f);
    return f;
  };

  // The backbone first: probes and agents need the streams, buckets and tables to exist.
  const nc = await connectNats({ url: options.natsUrl, name: `stack-${run.id || 'persistent'}`, ...roleCredentials(options.natsAuthDir, 'admin') });
  let dbh: DbHandle | undefined;
  let ownSim: ClusterSim | undefined;
  try {
    const jsm = await jetstreamManager(nc);
    // Unset: new streams and buckets get one replica, existing ones keep their count.
    const natsReplicas = options.natsReplicas === undefined ? {} : { replicas: options.natsReplicas };
    await ensureStreams(jsm, run.names, natsReplicas);
    await ensureKv(nc, run.names.svc, natsReplicas);
    await ensureKv(nc, run.names.views, natsReplicas);
    // createDb listens for errors of busy connections too, so a Postgres restart mid-query fails
    // that query instead of ending this process.
    dbh = await createDb({ url: options.databaseUrl, schema: run.schema, max: 4 });
    await migrateToLatest(dbh.db, run.schema);

    if (options.sim === undefined && options.kubeServer === undefined) {
      const simLog = logFile('cluster-sim');
      ownSim = await startClusterSim({
        ...(options.scenario !== undefined ? { scenario: options.scenario } : {}),
        ...(options.speed !== undefined ? { speed: options.speed } : {}),
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        port: options.simPort ?? 0,
        log: simLog === undefined || logLevel === 'silent' ? silentLog : jsonLog(logLevel, (l) => simLog.write(l)),
      });
    }
    const sim = options.sim ?? ownSim;
    const kubeServer = options.kubeServer ?? (sim as ClusterSim).url;
    const layout: StackLayout = {
      natsUrl: options.natsUrl,
      ...(options.natsReplicas !== undefined ? { natsReplicas: options.natsReplicas } : {}),
      databaseUrl: options.databaseUrl,
      schema: run.schema,
      cluster: options.cluster ?? 'local',
      partitions: options.partitions ?? 2,
      names: run.names,
      kubeServer,
      batchPeriodMs: options.batchPeriodMs ?? 100,
      ackWaitMs: options.ackWaitMs ?? 3000,
      logLevel,
      ...(options.natsAuthDir !== undefined ? { natsAuthDir: options.natsAuthDir } : {}),
    };
    const replicas: ReplicaCounts = { ...ONE_EACH, ...options.replicas };
    const agents = wanted.has('agents') ? pickAgents(await nodesOf(sim, kubeServer), options.agents ?? 'node', options.runDir) : [];

    // One component per service: the same Env either parsed here or handed to a child.
    const components: Component[] = [];
    // `after`: the first start waits for it (later restarts do not).
    const add = (name: string, kind: ServiceKind, program: ServiceProgram, baseEnvOf: (port: number) => Env, inProcess: (env: Env, d: LogDestination) => Incarnation, after: Promise<void>): void => {
      const file = logFile(name);
      const envOf = (port: number): Env => ({ ...baseEnvOf(port), ...options.envOverrides?.(name) });
      const once = async (): Promise<Incarnation> => {
        if (!asProcess(kind)) return inProcess(envOf(0), file ?? NULL_DESTINATION);
        // A fixed port per component, so a restarted child serves at the same URL.
        const p = await portFor(name);
        return startChild({ program, env: envOf(p), healthPort: p, ...(options.builtRoot !== undefined ? { builtRoot: options.builtRoot } : {}), ...(file ? { output: (c: Buffer) => void file.write(c) } : {}) });
      };
      let gate = after;
      const start = (): Incarnation => {
        const inc = deferred(gate, once);
        gate = Promise.resolve(); // restarts do not wait for the watcher
        return inc;
      };
      components.push(restartableComponent(name, asProcess(kind) ? 'process' : 'in-process', start));
    };
    const ports = new Map<string, Promise<number>>();
    const portFor = (name: string): Promise<number> => {
      let p = ports.get(name);
      if (p === undefined) ports.set(name, (p = freePort()));
      return p;
    };
    // Staged like upstream's cache sync: the consumers start once the watcher has put the
    // initial lists into KUBE, so their first reconciles see a whole snapshot (a Service read
    // before its pods gets a placeholder slice whose name it then keeps, A.7.4/A.7.6).
    const now = Promise.resolve();
    if (wanted.has('watcher')) for (const name of replicaNames('watcher', replicas.watcher)) add(name, 'watcher', 'watcher', (p) => watcherEnv(layout, p), watcherInProcess, now);
    // Every watcher has put its initial lists into KUBE (the later ones find them stored).
    const watcherReady = components.length === 0 ? now : Promise.all(components.map((c) => c.ready())).then(() => {});
    if (wanted.has('slicer')) replicaNames('slicer', replicas.slicer).forEach((name, i) => add(name, 'slicer', 'slicer', (p) => slicerEnv(layout, p, i), slicerInProcess, watcherReady));
    if (wanted.has('hints')) replicaNames('hints', replicas.hints).forEach((name, i) => add(name, 'hints', 'hints', (p) => hintsEnv(layout, p, i), hintsInProcess, watcherReady));
    const publisherMode = options.publisherMode ?? 'off';
    if (wanted.has('publisher') && publisherMode !== 'off') add('publisher', 'publisher', 'publisher', (p) => publisherEnv(layout, publisherMode, p), publisherInProcess, watcherReady);
    for (const a of agents) add(`agent/${a.node}`, 'agents', 'proxy-agent', (p) => agentEnv(layout, a, p), agentInProcess, watcherReady);

    const ready = Promise.all(
      components.map((c) =>
        c.ready().catch((err: unknown) => {
          throw new Error(`${c.name} failed to start: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
        }),
      ),
    ).then(() => {});
    ready.catch(() => {}); // the caller observes it

    const db = dbh.db;
    const byName = new Map(components.map((c) => [c.name, c]));
    const slicerUrls = (): (string | undefined)[] => components.filter((c) => replicaKindOf(c.name) === 'slicer' && !c.isStopped()).map((c) => c.healthUrl());
    const probe = { nc, jsm, db, layout, slicerUrls };
    const consumers = consumersOf(layout);
    const reading = async (): Promise<SettleReading> => {
      const backbone: BackboneReading = await readBackbone(probe, consumers);
      return sim === undefined ? { backbone } : { backbone, clusterVersion: sim.store.resourceVersion };
    };
    let closing: Promise<void> | undefined;
    const ownDb = dbh;
    return {
      ready,
      run,
      layout,
      sim,
      agents,
      replicas,
      nc,
      jsm,
      db,
      get urls(): StackUrls {
        return { kube: kubeServer, nats: options.natsUrl, database: options.databaseUrl, health: Object.fromEntries(components.map((c) => [c.name, c.healthUrl()])) };
      },
      components: () => components,
      component: (name) => {
        const c = byName.get(name);
        if (c === undefined) throw new Error(`no component ${JSON.stringify(name)}; there are ${[...byName.keys()].join(', ')}`);
        return c;
      },
      reading,
      settled: (opts) => waitSettled(reading, opts),
      status: async () => {
        const publisher = byName.get('publisher');
        const [backbone, viewKeys, objectsSeen, apiWrites] = await Promise.all([
          readBackbone(probe, consumers),
          countViewKeys(probe),
          sumOver(components.filter((c) => replicaKindOf(c.name) === 'watcher').map((c) => c.healthUrl()), 'slicemesh_watcher_events_published_total'),
          publisher === undefined ? undefined : scrapeMetric(publisher.healthUrl(), publisherMode === 'shadow' ? 'slicemesh_publisher_would_writes_total' : 'slicemesh_publisher_writes_total'),
        ]);
        const agentComponents = components.filter((c) => c.name.startsWith('agent/'));
        return {
          ...backbone,
          uptimeMs: Date.now() - startedAt,
          objectsSeen,
          viewKeys,
          ...(apiWrites !== undefined ? { apiWrites: { count: apiWrites, shadow: publisherMode === 'shadow' } } : {}),
          agents: { synced: agentComponents.filter((c) => c.isReady()).length, total: agentComponents.length },
          notReady: components.filter((c) => !c.isReady()).map((c) => c.name).filter((n) => !n.startsWith('agent/')),
          ...(hasReplicas(replicas) ? { replicas: replicaReadiness(components) } : {}),
        };
      },
      close: () =>
        (closing ??= (async () => {
          const isAgent = (c: Component): boolean => c.name.startsWith('agent/');
          await Promise.all(components.filter(isAgent).map((c) => c.stop().catch(() => {})));
          await Promise.all(components.filter((c) => !isAgent(c)).map((c) => c.stop().catch(() => {})));
          await ownSim?.close();
          await nc.close();
          await ownDb.close();
          await Promise.all(logFiles.map((f) => new Promise<void>((r) => f.end(() => r()))));
        })()),
    };
  } catch (err) {
    await ownSim?.close();
    await dbh?.close();
    await nc.close();
    for (const f of logFiles) f.end();
    throw err;
  }
}

/** Sum of `metric` over several health servers (the watchers' published changes); null when none answers. */
async function sumOver(urls: readonly (string | undefined)[], metric: string): Promise<number | null> {
  const values = await Promise.all(urls.map((u) => scrapeMetric(u, metric)));
  return values.some((v) => v !== null) ? values.reduce<number>((n, v) => n + (v ?? 0), 0) : null;
}

/**
 * An Incarnation made once `gate` resolves (and after any await `make` needs, e.g. a port).
 * stop() before that cancels the start instead of waiting for the gate.
 */
function deferred(gate: Promise<unknown>, make: () => Incarnation | Promise<Incarnation>): Incarnation {
  let inc: Incarnation | undefined;
  let stopped = false;
  let cancel: (err: Error) => void = () => {};
  const cancelled = new Promise<never>((_, reject) => (cancel = reject));
  const p = Promise.race([
    gate.then(async () => {
      if (stopped) throw new Error('stopped before it started');
      return (inc = await make());
    }),
    cancelled,
  ]);
  p.catch(() => {});
  const ready = p.then((i) => i.ready);
  ready.catch(() => {});
  return {
    ready,
    isReady: () => inc?.isReady() ?? false,
    healthPort: () => inc?.healthPort(),
    get pid() {
      return inc?.pid;
    },
    stop: async () => {
      stopped = true;
      cancel(new Error('stopped before it started'));
      const i = inc ?? (await p.catch(() => undefined));
      await i?.stop();
    },
    kill: async (signal) => {
      const i = await p;
      if (i.kill === undefined) throw new Error('not a child process');
      await i.kill(signal);
    },
  };
}
