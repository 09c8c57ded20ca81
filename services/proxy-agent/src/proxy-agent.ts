// startProxyAgent: wires config → adapters (NATS buckets, exec in the node's namespace, the
// backend) → ViewState + ProxySyncer + BoundedFrequencyRunner + ProxyAgent, plus the proxier
// health (D.9.3), the health-check node port servers (D.9.1), the UDP conntrack cleaner (D.7)
// and the NodeFollower that moves the agent to its Node's zone, and returns a handle. Every
// adapter can be injected, so tests and the all-in-one process share this.

import { dirname } from 'node:path';
import { appendFile as fsAppendFile, mkdir, readFile as fsReadFile, rename, writeFile as fsWriteFile } from 'node:fs/promises';
import type { KvChange, NatsConnection } from '@slicemesh/nats';
import { connectNats, natsConnectionOf, followSubject, kubeNodeSubject, kvFeedSubjectPrefix, kvFeedWatchJson, openKv, svcClusterFilter, zoneViewsFilter } from '@slicemesh/nats';
import type { Exec, Listen } from '@slicemesh/netfilter';
import { Conntrack, listenTcp, netnsExec, spawnExec } from '@slicemesh/netfilter';
import type { ProxierHealthStatus } from '@slicemesh/proxy-state';
import { ProxierHealth } from '@slicemesh/proxy-state';
import type { Clock, Logger, Metrics } from '@slicemesh/runtime';
import { BoundedFrequencyRunner, createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import type { KvChangeSource } from './agent.ts';
import { ProxyAgent } from './agent.ts';
import type { Backend } from './backend.ts';
import { createBackend } from './backends/create-backend.ts';
import type { ConntrackCleaner } from './conntrack-cleaner.ts';
import { KernelConntrackCleaner, RecordingConntrackCleaner } from './conntrack-cleaner.ts';
import type { ProxyAgentConfig } from './config.ts';
import { ipFamiliesOf } from './config.ts';
import type { NodeSettings } from './dp-model.ts';
import { HealthCheckServers } from './health-check-servers.ts';
import { createProxyMetrics } from './metrics.ts';
import type { NodeMessageSource } from './node-follower.ts';
import { NodeFollower } from './node-follower.ts';
import type { ZoneDecision } from './node-zone.ts';
import { describeZoneDecision, initialZoneDecision, viewOfZone, zoneOfView } from './node-zone.ts';
import type { SyncReport } from './sync.ts';
import { ProxySyncer } from './sync.ts';
import { ViewState } from './view-state.ts';

export interface ProxyAgentDeps {
  /** Used for the buckets unless `sources` is given; closed by close() only if created here. */
  readonly nc?: NatsConnection;
  /** The svc and views buckets; defaults to kvSource (the shared feeds) over the configured buckets. */
  readonly sources?: { readonly services: KvChangeSource; readonly views: KvChangeSource };
  /**
   * This node's KUBE messages, followed for its zone when NODE_ZONE is empty; defaults to
   * followSubject over `kube.<cluster>.node.<NODE_NAME>`, except that with injected `sources`
   * and no `node` the zone stays what the configuration says.
   */
  readonly node?: NodeMessageSource;
  /** Runs the tools (wrapped for NETNS here); defaults to spawnExec(). */
  readonly exec?: Exec;
  /** Replaces the configured backend entirely. */
  readonly backend?: Backend;
  /** With DUAL_STACK: replaces the second family's backend. */
  readonly secondaryBackend?: Backend;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly metrics?: Metrics;
  /** dry-run output; defaults to an atomic write (temporary file, then rename). */
  readonly writeFile?: (path: string, text: string) => Promise<void>;
  /** dry-run conntrack record (`<dry-run file>.conntrack`); defaults to fs appendFile. */
  readonly appendFile?: (path: string, text: string) => Promise<void>;
  /** Re-watch delay by attempt after a watch fails. */
  readonly restartDelay?: (attempt: number) => number;
  /** Opens the health-check node port sockets; defaults to listenTcp (in NETNS when set). */
  readonly listen?: Listen;
}

export interface ProxyAgentHandle {
  /** Resolves after the first successful sync (the initial state is programmed); rejects if startup fails. */
  readonly ready: Promise<void>;
  /** True once `ready` has resolved. */
  isReady(): boolean;
  /** The last sync's outcome; null before the first. */
  readonly lastSync: SyncReport | null;
  /** The watch filters in use: `svc` and the one `views` wildcard (it moves with the zone). */
  readonly filters: Readonly<{ svc: string; views: string }>;
  /**
   * The zone: the decision (where it comes from, what is known of the Node) and the view whose
   * entries are loaded (null before the first).
   */
  zone(): ZoneStatus;
  readonly metrics: Metrics;
  /**
   * kube-proxy's proxier health (D.9.3): false once a change has waited longer than
   * HEALTHZ_TIMEOUT for a successful sync. Answers /healthz.
   */
  healthy(): boolean;
  /** The same with its times: when the rules were last brought up to date, what waits. */
  health(): ProxierHealthStatus;
  /** The health-check node ports being served, by `<ns>/<name>` (D.9.1). */
  healthCheckPorts(): ReadonlyMap<string, number>;
  /** Stops watching and syncing (rules stay in place, as kube-proxy leaves them). */
  close(): Promise<void>;
}

/** What the handle says about the zone. */
export interface ZoneStatus extends ZoneDecision {
  /** The view whose entries are loaded and programmed; null before the first is in. */
  readonly view: string | null;
  /** One line: where the zone comes from and what is known of the Node. */
  readonly description: string;
}

/** The file's text; null when it does not exist. */
async function readIfExists(path: string): Promise<string | null> {
  try {
    return await fsReadFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

async function atomicWrite(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  await fsWriteFile(tmp, text);
  await rename(tmp, path);
}

/**
 * A bucket as a change source, through the shared feed of the agent's filter (kv-feed.ts): one
 * JetStream delivery per change for all the agents of a zone. A bucket that does not exist yet
 * fails the watch, which is retried.
 */
export function kvSource(nc: NatsConnection, bucket: string, cluster: string, onResync?: (why: string) => void): KvChangeSource {
  const subjectPrefix = kvFeedSubjectPrefix(bucket, cluster);
  return {
    async *watch(filter, opts): AsyncIterable<KvChange> {
      const kv = await openKv(nc, bucket);
      yield* kvFeedWatchJson(nc, kv, { key: filter, subjectPrefix, onInitialDone: opts.onInitialDone, signal: opts.signal, ...(onResync ? { onResync } : {}) });
    },
  };
}

/** This node's subject in KUBE as a followed source (the last message first, then new ones). */
function kubeNodeSource(nc: NatsConnection, config: ProxyAgentConfig): NodeMessageSource {
  const subject = kubeNodeSubject({ cluster: config.cluster, name: config.nodeName }, { prefix: config.subjectPrefix });
  // Agents may not delete consumers (permissions.ts): the server drops the follower a minute after it stops.
  return { follow: (opts) => followSubject(nc, { stream: config.kubeStream, subject, onInitialDone: opts.onInitialDone, signal: opts.signal, deleteOnClose: false }) };
}

/** The node settings the model and renderers use for `family` (default IP_FAMILY), from configuration: its node IPs and pod CIDR. */
export function nodeSettingsOf(config: ProxyAgentConfig, family: ProxyAgentConfig['ipFamily'] = config.ipFamily): NodeSettings {
  const v6 = family === 'IPv6';
  return {
    nodeName: config.nodeName,
    zone: config.nodeZone,
    family,
    nodeIPs: config.nodeIPs.filter((ip) => ip.includes(':') === v6),
    podCIDR: config.podCIDR !== undefined && config.podCIDR.includes(':') === v6 ? config.podCIDR : null,
    masqueradeAll: config.masqueradeAll,
    masqueradeBit: config.masqueradeBit,
  };
}

export function startProxyAgent(config: ProxyAgentConfig, deps: ProxyAgentDeps = {}): ProxyAgentHandle {
  const clock = deps.clock ?? realClock;
  const log = (deps.log ?? createLogger({ service: 'proxy-agent', level: config.logLevel })).child({ node: config.nodeName, cluster: config.cluster });
  const metrics = deps.metrics ?? createMetrics('proxy-agent');
  const abort = new AbortController();
  const settings = nodeSettingsOf(config);
  const secondFamily = ipFamiliesOf(config)[1];
  // The zone: NODE_ZONE when set; otherwise the Node's label, and the views watch waits for
  // the first read of the Node (found or not) so that the first sync already has the zone.
  const followNode = config.nodeZone === '' && (deps.node !== undefined || deps.sources === undefined);
  let decision = initialZoneDecision(config.nodeZone);
  const view = followNode ? null : viewOfZone(decision.zone);
  const state = new ViewState({ cluster: config.cluster, view: view ?? viewOfZone(''), nodeName: config.nodeName, family: config.ipFamily, ...(secondFamily !== undefined ? { secondaryFamily: secondFamily } : {}) });
  let agentRef: ProxyAgent | null = null;
  let moveAskedAt: number | null = null;

  let ready = false;
  let resolveReady: () => void = () => {};
  let rejectReady: (e: unknown) => void = () => {};
  const readyPromise = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  readyPromise.catch(() => {}); // callers that never await it must not crash the process

  let syncer: ProxySyncer | null = null;
  let inFlight: Promise<unknown> = Promise.resolve();
  let retry: (ms: number) => void = () => {};
  const proxierHealth = new ProxierHealth(config.healthzTimeout ?? 2 * config.syncPeriod);
  const runner = new BoundedFrequencyRunner({
    name: 'sync-proxy-rules',
    minIntervalMs: config.minSyncPeriod,
    maxIntervalMs: config.syncPeriod,
    clock,
    fn: async () => {
      if (syncer === null) return;
      const run = syncer.sync();
      inFlight = run;
      const report = await run;
      if (report.ok) proxierHealth.updated(clock.now());
      if (report.ok && !ready) {
        ready = true;
        resolveReady();
      }
    },
    onError: (err) => log.error({ err }, 'sync runner error'),
  });
  retry = (ms) => runner.retryAfter(ms);
  // As kube-proxy: the loop's start counts as up to date, and every change that asks for a
  // sync is queued for the health check until a sync succeeds (D.9.3).
  const healthRunner = {
    start: () => {
      proxierHealth.updated(clock.now());
      runner.start();
    },
    run: () => {
      proxierHealth.queued(clock.now());
      runner.run();
    },
  };
  let hcServers: HealthCheckServers | null = null;
  let backendRef: Backend | null = null;

  let ownNc: NatsConnection | null = null;
  const agentPromise = (async () => {
    const exec = netnsExec(deps.exec ?? spawnExec(), config.netns);
    const backendDeps = {
      exec,
      clock,
      writeFile: deps.writeFile ?? atomicWrite,
      readFile: readIfExists,
      onStateError: (err: unknown) => log.warn({ err }, 'the nftables state file could not be read or saved; the next start does a full sync'),
    };
    const backend = deps.backend ?? (await createBackend(config, backendDeps));
    backendRef = backend;
    const secondary =
      secondFamily === undefined
        ? undefined
        : { settings: nodeSettingsOf(config, secondFamily), backend: deps.secondaryBackend ?? (await createBackend({ ...config, ipFamily: secondFamily }, backendDeps)) };
    const pm = createProxyMetrics(metrics, backend.kind);
    if (!followNode) pm.zoneInfo.set({ view: state.view, source: decision.source }, 1);
    if (config.healthCheckServers === 'on' || (config.healthCheckServers === 'auto' && backend.kind !== 'dry-run')) {
      hcServers = new HealthCheckServers({
        addresses: settings.nodeIPs,
        family: config.ipFamily,
        ...(config.netns !== undefined ? { netns: config.netns } : {}),
        listen: deps.listen ?? listenTcp,
        proxyHealthy: () => proxierHealth.status(clock.now()).healthy,
        log,
        metrics: pm,
      });
    }
    const servers = hcServers;
    let conntrack: ConntrackCleaner | undefined;
    if (config.conntrackCleanup && backend.kind === 'dry-run') {
      conntrack = new RecordingConntrackCleaner({ file: `${config.dryRunFile}.conntrack`, appendFile: deps.appendFile ?? ((p, t) => fsAppendFile(p, t)), clock });
    } else if (config.conntrackCleanup) {
      // Not probed at start (nothing runs before the initial state is in); a missing tool
      // shows in the warning of the first cleanup and in the failed-result counter.
      conntrack = new KernelConntrackCleaner({ conntrack: new Conntrack({ exec }) });
    }
    syncer = new ProxySyncer({
      state,
      backend,
      settings,
      ...(secondary !== undefined ? { secondary } : {}),
      clock,
      metrics: pm,
      log,
      ...(servers !== null ? { onSynced: (health) => servers.sync(health) } : {}),
      ...(conntrack !== undefined ? { conntrack } : {}),
      fullSyncPeriodMs: config.fullSyncPeriod,
      retryAfter: (ms) => retry(ms),
      retryDelayMs: config.syncPeriod,
    });
    let sources = deps.sources;
    let nodeSource = deps.node;
    if (sources === undefined) {
      const nc = deps.nc ?? (ownNc = await connectNats({ url: config.natsUrl, role: 'agent', ...natsConnectionOf(config), name: `proxy-agent-${config.nodeName}`, log: (e) => log.info({ event: e.type, detail: e.detail }, 'nats status') }));
      const resynced = (bucket: string) => (why: string) => {
        pm.feedResyncs.inc({ bucket });
        log.warn({ bucket, why }, 'read the bucket again: its shared feed missed deliveries');
      };
      sources = {
        services: kvSource(nc, config.svcBucket, config.cluster, resynced(config.svcBucket)),
        views: kvSource(nc, config.viewsBucket, config.cluster, resynced(config.viewsBucket)),
      };
      nodeSource ??= kubeNodeSource(nc, config);
    }
    const syncerNow = syncer;
    const agent = new ProxyAgent({
      cluster: config.cluster,
      view,
      state,
      runner: healthRunner,
      services: sources.services,
      views: sources.views,
      clock,
      log,
      ...(deps.restartDelay ? { restartDelay: deps.restartDelay } : {}),
      // The new view's entries are in: endpoint selection takes the new zone, the next sync is
      // a full one, and the move is logged once.
      onViewLoaded: (loaded, previous, entries) => {
        const zone = zoneOfView(loaded);
        syncerNow.setZone(zone);
        pm.zoneInfo.reset();
        pm.zoneInfo.set({ view: loaded, source: decision.source }, 1);
        if (previous === null) {
          if (followNode) log.info({ zone, view: loaded, entries, reason: describeZoneDecision(decision, config.nodeName) }, 'reading the views of this node\'s zone');
          return;
        }
        pm.zoneMoves.inc();
        const tookMs = moveAskedAt === null ? null : clock.now() - moveAskedAt;
        log.info({ from: zoneOfView(previous), to: zone, view: loaded, entries, tookMs, reason: describeZoneDecision(decision, config.nodeName) }, 'moved to the views of the new zone; one full sync follows');
      },
    });
    agentRef = agent;
    if (config.nodeZone !== '') log.info({ zone: config.nodeZone }, 'NODE_ZONE is set: the Node\'s zone label is not followed');
    log.info({ backend: backend.kind, view, followNode: followNode && nodeSource !== undefined, netns: config.netns ?? null, filters: agent.filters }, 'proxy agent starting');
    const follower =
      followNode && nodeSource !== undefined
        ? new NodeFollower({
            decode: { cluster: config.cluster, prefix: config.subjectPrefix },
            nodeName: config.nodeName,
            source: nodeSource,
            initial: decision,
            clock,
            log,
            ...(deps.restartDelay ? { restartDelay: deps.restartDelay } : {}),
            onDecision: (next) => {
              decision = next;
              const want = viewOfZone(next.zone);
              if (want !== agent.view) moveAskedAt = clock.now();
              agent.moveTo(want);
            },
          })
        : null;
    return { agent, follower };
  })();

  const running = agentPromise.then(
    ({ agent, follower }) => Promise.all([agent.run(abort.signal), follower?.run(abort.signal)]).then(() => {}),
    (err: unknown) => {
      log.error({ err }, 'proxy agent failed to start');
      rejectReady(err);
    },
  );

  return {
    ready: readyPromise,
    isReady: () => ready,
    get lastSync() {
      return syncer?.lastSync ?? null;
    },
    get filters() {
      return agentRef?.filters ?? { svc: svcClusterFilter(config.cluster), views: zoneViewsFilter(config.cluster, view ?? state.view) };
    },
    zone: () => {
      const loaded = agentRef?.loadedView ?? null;
      return { ...decision, view: loaded, description: describeZoneDecision(decision, config.nodeName) };
    },
    metrics,
    healthy: () => proxierHealth.status(clock.now()).healthy,
    health: () => proxierHealth.status(clock.now()),
    healthCheckPorts: () => hcServers?.ports ?? new Map(),
    async close() {
      abort.abort();
      runner.stop();
      await running;
      await inFlight.catch(() => {});
      await hcServers?.close();
      await backendRef?.close?.();
      if (ownNc !== null) await ownNc.close();
      rejectReady(new Error('proxy agent closed before its first sync'));
    },
  };
}
