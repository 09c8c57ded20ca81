// The whole pipeline in this process: cluster-sim → watcher → slicer → hints → one proxy-agent
// per node namespace, on isolated streams, buckets, durables and a fresh Postgres schema.
// Every part started is registered for close(), so a failed start-up still cleans up.

import { performance } from 'node:perf_hooks';
import { EMPTY_SCENARIO, startClusterSim } from '@slicemesh/cluster-sim';
import type { ClusterSim } from '@slicemesh/cluster-sim';
import { withTestDb } from '@slicemesh/db/testing';
import type { TestDb } from '@slicemesh/db/testing';
import { startHints, hintsConfigWith } from '@slicemesh/hints';
import type { EndpointSlice } from '@slicemesh/model';
import { ensureStreams, kvWatchJson, openKv, parseViewKey } from '@slicemesh/nats';
import { withJetStream } from '@slicemesh/nats/testing';
import { mcsConfigWith, startMcs } from '@slicemesh/mcs';
import type { McsConfig, McsHandle } from '@slicemesh/mcs';
import { parseProxyAgentConfig, startProxyAgent } from '@slicemesh/proxy-agent';
import type { ProxyAgentHandle } from '@slicemesh/proxy-agent';
import { createLogger } from '@slicemesh/runtime';
import { slicerConfigWith, startSlicer } from '@slicemesh/slicer';
import { startWatcher, watcherConfigWith } from '@slicemesh/watcher';
import type { NetnsCluster } from './netns-cluster.ts';
import { POD_CIDR } from './netns-cluster.ts';

export type Backend = 'iptables' | 'nftables';
type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface PipelineOptions {
  readonly cluster: string;
  readonly backend: Backend;
  /** The nodes to run an agent for (its name, zone and namespace). */
  readonly lab: { readonly nodes: readonly Pick<NetnsCluster['nodes'][number], 'name' | 'zone' | 'ns'>[] };
  /** Settings for every agent over the defaults (e.g. IP_FAMILY and an IPv6 POD_CIDR). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly partitions: number;
  readonly logLevel: Level;
  /** Writes the initial objects into the store before the watcher lists them. */
  readonly seed: (sim: ClusterSim) => void;
  /** The NATS this cluster's services use (a leaf node of a cluster set); default NATS_URL or a container. */
  readonly natsUrl?: string;
  /** Runs the multi-cluster service too, with these settings over the defaults. */
  readonly mcs?: Partial<McsConfig>;
}

/** The endpoints of one service in one zone's view: address → ready. */
export type ViewEndpoints = ReadonlyMap<string, boolean>;

/** Keeps the views bucket's current content and wakes waiters on every change. */
export class ViewRecorder {
  readonly cluster: string;
  readonly #entries = new Map<string, EndpointSlice>();
  readonly #waiters = new Set<() => void>();

  constructor(cluster: string) {
    this.cluster = cluster;
  }

  apply(key: string, slice: EndpointSlice | undefined): void {
    if (slice === undefined) this.#entries.delete(key);
    else this.#entries.set(key, slice);
    for (const w of [...this.#waiters]) w();
  }

  /** Every endpoint address of `service` in `zone`'s view, with its ready condition. */
  endpoints(zone: string, service: string): ViewEndpoints {
    const out = new Map<string, boolean>();
    for (const [key, slice] of this.#entries) {
      const a = parseViewKey(key);
      if (a.cluster !== this.cluster || a.zone !== zone || a.service !== service) continue;
      for (const ep of slice.endpoints) for (const ip of ep.addresses) out.set(ip, ep.conditions?.ready !== false);
    }
    return out;
  }

  /** Resolves with performance.now() at the first change after which `done()` holds (or now, if it holds). */
  until(done: () => boolean, timeoutMs: number, what: string): Promise<number> {
    if (done()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!done()) return;
        this.#waiters.delete(check);
        clearTimeout(timer);
        resolve(performance.now());
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`views: not within ${timeoutMs} ms: ${what}`));
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }
}

export class Pipeline {
  readonly opts: PipelineOptions;
  readonly views: ViewRecorder;
  readonly agents = new Map<string, ProxyAgentHandle>();
  /** The multi-cluster service, when asked for. */
  mcs: McsHandle | undefined;
  /** Milliseconds from start() to each stage being ready. */
  readonly startup: Record<string, number> = {};
  #sim: ClusterSim | undefined;
  readonly #closers: (() => Promise<void>)[] = [];
  readonly #stopWatch = new AbortController();

  constructor(opts: PipelineOptions) {
    this.opts = opts;
    this.views = new ViewRecorder(opts.cluster);
  }

  get sim(): ClusterSim {
    if (this.#sim === undefined) throw new Error('pipeline not started');
    return this.#sim;
  }

  async start(): Promise<void> {
    const { cluster, backend, lab, partitions, logLevel } = this.opts;
    const t0 = performance.now();
    const mark = (stage: string): void => void (this.startup[stage] = Math.round(performance.now() - t0));
    const logger = (service: string) => createLogger({ service, level: logLevel });

    const js = await withJetStream(this.opts.natsUrl === undefined ? {} : { env: { NATS_URL: this.opts.natsUrl } });
    this.#closers.push(() => js.cleanup());
    const db: TestDb = await withTestDb();
    this.#closers.push(() => db.close());
    await ensureStreams(js.jsm, js.names);
    const streams = { kubeStream: js.names.kube, slicesStream: js.names.slices, dlqStream: js.names.dlq, eventsStream: js.names.events ?? 'EVENTS', subjectPrefix: js.names.prefix };

    // A day-long readiness delay: the simulated kubelet must never flip readiness by itself;
    // the test owns every pod's Ready condition.
    const sim = await startClusterSim({ scenario: EMPTY_SCENARIO, apiPodReadinessDelayMs: 86_400_000, bookmarkIntervalMs: 1000 });
    this.#sim = sim;
    this.#closers.push(() => sim.close());
    this.opts.seed(sim);

    const watcher = startWatcher(watcherConfigWith({ cluster, kubeServer: sim.url, natsUrl: js.url, partitions, ...streams, logLevel }), { logger: logger('watcher') });
    this.#closers.push(() => watcher.close());
    await watcher.ready;
    mark('watcher');

    const slicer = startSlicer(
      slicerConfigWith({ cluster, natsUrl: js.url, databaseUrl: db.url, dbSchema: db.schema, partitions, ...streams, durablePrefix: `slicer-${js.id}`, healthPort: 0, logLevel }),
      { logger: logger('slicer') },
    );
    this.#closers.push(() => slicer.close());
    await slicer.ready;
    mark('slicer');

    const hints = startHints(
      hintsConfigWith({
        cluster, natsUrl: js.url, databaseUrl: db.url, dbSchema: db.schema, partitions, ...streams,
        svcBucket: js.names.svc, viewsBucket: js.names.views, hintedBucket: js.names.hinted, durablePrefix: `hints${js.id}`, logLevel,
      }),
      { logger: logger('hints') },
    );
    this.#closers.push(() => hints.close());
    await hints.ready;
    mark('hints');
    this.#watchViews(await openKv(js.nc, js.names.views));

    if (this.opts.mcs !== undefined) {
      const mcs = startMcs(
        mcsConfigWith({ cluster, natsUrl: js.url, kubeStream: js.names.kube, subjectPrefix: js.names.prefix, svcBucket: js.names.svc, viewsBucket: js.names.views, hintedBucket: js.names.hinted, healthPort: 0, logLevel, ...this.opts.mcs }),
        { logger: logger('mcs') },
      );
      this.mcs = mcs;
      this.#closers.push(() => mcs.close());
      await mcs.ready;
      mark('mcs');
    }

    for (const node of lab.nodes) {
      const config = parseProxyAgentConfig([], {
        NATS_URL: js.url,
        CLUSTER: cluster,
        NODE_NAME: node.name,
        NODE_ZONE: node.zone,
        BACKEND: backend,
        NETNS: node.ns,
        POD_CIDR,
        SVC_BUCKET: js.names.svc,
        VIEWS_BUCKET: js.names.views,
        LOG_LEVEL: logLevel,
        ...this.opts.agentEnv,
      });
      const agent = startProxyAgent(config, { log: logger('proxy-agent') });
      this.agents.set(node.name, agent);
      this.#closers.push(() => agent.close());
    }
    await Promise.all([...this.agents.values()].map((a) => a.ready));
    mark('agents');
  }

  #watchViews(kv: Awaited<ReturnType<typeof openKv>>): void {
    const signal = this.#stopWatch.signal;
    const loop = (async () => {
      for await (const c of kvWatchJson(kv, { key: '>', signal })) {
        this.views.apply(c.key, c.op === 'PUT' ? (c.value as EndpointSlice) : undefined);
      }
    })();
    loop.catch(() => {}); // ends with an error when the bucket is deleted at cleanup
    this.#closers.push(async () => {
      this.#stopWatch.abort();
      await loop.catch(() => {});
    });
  }

  /** Closes everything started, newest first; keeps going past failures and throws the first. */
  async close(): Promise<void> {
    let first: unknown;
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}
