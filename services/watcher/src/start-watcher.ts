// startWatcher: the watcher with its real adapters (client-node informers, NATS JetStream),
// for main.ts, `npm start` (the whole stack in one process) and the tests.

import { foreignSliceSelector, ownManagers } from '@slicemesh/contracts';
import { buildKubeConfig, DEFAULT_MAX_OBJECT_BYTES, ObjectWatch, serverOf } from '@slicemesh/kube';
import type { KubeConfig } from '@slicemesh/kube';
import { connectNats, natsConnectionOf, ensureStreams, jetstreamManager } from '@slicemesh/nats';
import type { NatsConnection } from '@slicemesh/nats';
import { createLogger, createMetrics, exponentialBackoff, realClock } from '@slicemesh/runtime';
import type { Clock, Logger, Metrics } from '@slicemesh/runtime';
import { kubeConnectionOf, streamNamesOf } from './config.ts';
import type { WatcherConfig } from './config.ts';
import { natsKubeLog } from './kube-log.ts';
import type { KubeLog } from './kube-log.ts';
import { runWatcher } from './watcher.ts';
import type { OpenWatch, RunningWatcher, WatcherStats } from './watcher.ts';
import { watcherMetrics } from './watcher-metrics.ts';

/** Headroom left under the server's max_payload for the envelope around the object. */
const ENVELOPE_BYTES = 16 * 1024;

export interface WatcherDeps {
  /** A connection to share; when absent one is opened from natsUrl and closed by close(). */
  readonly nc?: NatsConnection;
  /** Defaults to the one the config's connection settings describe. */
  readonly kubeConfig?: KubeConfig;
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly clock?: Clock;
  /** Environment for the in-cluster default. Defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Replaces the NATS side (unit tests). */
  readonly kubeLog?: KubeLog;
  /** Replaces the informers (unit tests). */
  readonly openWatch?: OpenWatch;
  /** Delay before informer restart `attempt`, ms. Defaults to 0.5 s doubling to 30 s, 20% jitter. */
  readonly restartDelayMs?: (attempt: number) => number;
  /** How often a kind the API does not serve (ServiceExport without the MCS CRDs) is listed again, ms. Defaults to 60 s. */
  readonly notServedRetryMs?: number;
}

export interface WatcherHandle extends RunningWatcher {
  readonly metrics: Metrics;
}

/**
 * Connects to the API server and NATS, declares the streams (unless disabled), and runs the
 * watcher (see watcher.ts). Returns at once; `ready` resolves once the initial lists are in
 * KUBE and rejects when startup fails (bad kube connection, NATS unreachable, ...).
 *
 * ### Examples
 * ```ts
 * const w = startWatcher(watcherConfigWith({ cluster: 'c1', kubeServer: sim.url }));
 * await w.ready;
 * await w.close();
 * ```
 */
export function startWatcher(config: WatcherConfig, deps: WatcherDeps = {}): WatcherHandle {
  const baseLog = deps.logger ?? createLogger({ service: 'watcher', level: config.logLevel });
  const log = baseLog.child({ cluster: config.cluster });
  const metrics = deps.metrics ?? createMetrics('watcher');
  const clock = deps.clock ?? realClock;
  const names = streamNamesOf(config);
  let ownNc: NatsConnection | undefined;
  let inner: RunningWatcher | undefined;
  let closed = false;
  let closing: Promise<void> | undefined;

  async function start(): Promise<void> {
    const kubeConfig = deps.kubeConfig ?? (deps.openWatch ? undefined : buildKubeConfig(kubeConnectionOf(config, deps.env ?? process.env)));
    let maxObjectBytes = config.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    let kubeLog = deps.kubeLog;
    if (kubeLog === undefined) {
      const nc = deps.nc ?? (ownNc = await connectNats({ url: config.natsUrl, role: 'watcher', ...natsConnectionOf(config), name: `watcher-${config.cluster}`, log: (s) => log.info({ nats: s }, 'NATS status') }));
      if (closed) {
        await ownNc?.drain();
        throw new Error('watcher closed before it was ready');
      }
      if (config.ensureStreams) await ensureStreams(await jetstreamManager(nc), names, { replicas: config.natsReplicas, onReplicasChanged: (c) => log.warn({ stream: c.stream, from: c.from, to: c.to }, 'replicas changed to NATS_REPLICAS') });
      const maxPayload = nc.info?.max_payload;
      if (maxPayload !== undefined) maxObjectBytes = Math.min(maxObjectBytes, maxPayload - ENVELOPE_BYTES);
      kubeLog = natsKubeLog(nc, names);
    }
    const restartDelayMs = deps.restartDelayMs ?? exponentialBackoff({ baseMs: 500, maxMs: 30_000, jitter: 0.2 });
    const own = ownManagers(config.managedBy);
    // Our own slices are left out by the API server already (the watcher checks again): they are
    // most of the cluster's slices, and would only be received, held and dropped.
    const selectorOf = (kind: string) => (kind === 'EndpointSlice' ? { labelSelector: foreignSliceSelector(own) } : {});
    const openWatch: OpenWatch =
      deps.openWatch ??
      ((kind, seed, handlers) =>
        new ObjectWatch({
          kubeConfig: kubeConfig as KubeConfig, kind, seed, onEvent: handlers.onEvent, onStatus: handlers.onStatus, restartDelayMs, ...selectorOf(kind),
          ...(deps.notServedRetryMs !== undefined ? { notServedRetryMs: deps.notServedRetryMs } : {}),
        }));
    if (kubeConfig) log.info({ server: serverOf(kubeConfig), partitions: config.partitions, maxObjectBytes }, 'watching');
    if (closed) throw new Error('watcher closed before it was ready');
    inner = runWatcher(
      {
        cluster: config.cluster,
        layout: { partitions: config.partitions, prefix: names.prefix },
        maxObjectBytes,
        publishWindow: config.publishWindow,
        ownManagers: own,
        // At most 1 s between tries: a NATS cluster elects a new KUBE leader in 2-7 s, and with a
        // 10 s cap the watcher slept through the new leader's first seconds (KUBE stored nothing
        // for up to 9.9 s per lost server); retries of a change that fails fast cost little.
        retryDelayMs: exponentialBackoff({ baseMs: 200, maxMs: 1000, jitter: 0.2 }),
      },
      { kubeLog, openWatch, clock, log: baseLog, metrics: watcherMetrics(metrics) },
    );
    await inner.ready;
  }

  async function close(): Promise<void> {
    closed = true;
    await inner?.close();
    if (ownNc !== undefined && !ownNc.isClosed()) await ownNc.drain();
  }

  const ready = start();
  ready.catch((err: unknown) => log.error({ err }, 'watcher failed to start'));
  const none: WatcherStats = { published: 0, duplicates: 0, deadLetters: 0, skipped: 0 };
  return {
    ready,
    metrics,
    stats: () => inner?.stats() ?? none,
    close: () => (closing ??= close()),
  };
}
