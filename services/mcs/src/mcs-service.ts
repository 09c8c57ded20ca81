// The multi-cluster service of one cluster (MCS, KEP-1645; docs/multicluster.md). It feeds
// ClusterSetState with this cluster's Services, ServiceExports and Nodes (KUBE; ServiceExports
// only where the API serves the MCS CRDs, else the annotation exports), its finished slices (the hinted
// bucket) and every cluster's exports and heartbeats (the shared exports bucket, on the hub),
// then writes the difference: this cluster's exports and heartbeat to the hub, the imports'
// derived Services and zone views to this cluster's buckets, where the agents read them, and the
// ServiceExports' status and the imports' ServiceImports to the buckets the publisher writes to the API.
//
// The hub may be out of reach (a cut leafnode): the local side goes on, the writes to the hub are
// retried, and the other clusters fall out of the imports one TTL after their last heartbeat.

import { createHash } from 'node:crypto';
import type { EndpointSlice, Node, Service, ServiceExport } from '@slicemesh/model';
import { validateEndpointSlice } from '@slicemesh/model';
import { ClusterSetState, LABEL_MCS_SERVICE_NAME, isDerivedServiceName } from '@slicemesh/multicluster';
import type { DesiredImports } from '@slicemesh/multicluster';
import type { KV, NatsConnection } from '@slicemesh/nats';
import {
  DELETED, EXPORT_RECORD_VERSION, connectNats, decodeKubeMessage, ensureKv, followSubject, heartbeatKey, kubeKindFilter, kubeNodesFilter, kvDelete, kvKeys, kvPutJson, kvWatchJson, natsConnectionOf, openKv,
  exportStatusFilter, parseClusterHeartbeat, serviceImportFilter, parseExportsKey, parseHintedKey, parseServiceExportRecord, parseSvcKey, parseViewKey, svcClusterFilter,
} from '@slicemesh/nats';
import type { HostedService, Logger, Metrics } from '@slicemesh/runtime';
import { createLogger, createMetrics } from '@slicemesh/runtime';
import type { McsConfig } from './config.ts';
import { mcsConfigProblem } from './config.ts';
import { mcsMetrics } from './mcs-metrics.ts';

export interface McsDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** A shared connection; close() leaves it open. */
  readonly nc?: NatsConnection;
  /** The clock liveness is measured by (tests move it). */
  readonly now?: () => number;
}

export interface McsHandle extends HostedService {
  /** The imports as last written, for tests and the stack. */
  lastImports(): DesiredImports | undefined;
}

const RETRY_MS = 1000;
const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');
const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((r) => {
    const t = setTimeout(r, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });

/** Puts what changed and deletes what is no longer wanted; `written` follows every success. Returns the writes made. */
async function writeDiff(kv: KV, desired: ReadonlyMap<string, unknown>, written: Map<string, string>, count: (op: 'put' | 'delete') => void): Promise<number> {
  let writes = 0;
  for (const [key, value] of desired) {
    const d = digest(value);
    if (written.get(key) === d) continue;
    await kvPutJson(kv, key, value);
    written.set(key, d);
    count('put');
    writes++;
  }
  for (const key of [...written.keys()]) {
    if (desired.has(key)) continue;
    await kvDelete(kv, key);
    written.delete(key);
    count('delete');
    writes++;
  }
  return writes;
}

export function startMcs(config: McsConfig, deps: McsDeps = {}): McsHandle {
  const log = (deps.logger ?? createLogger({ service: 'mcs', level: config.logLevel as 'info' })).child({ cluster: config.cluster });
  const m = mcsMetrics(deps.metrics ?? createMetrics('mcs'));
  const now = deps.now ?? Date.now;
  const stop = new AbortController();
  const { signal } = stop;
  const state = new ClusterSetState({ cluster: config.cluster, clusterSetCidr: config.clusterSetCidr, ttlMs: config.ttl });
  const written = { exports: new Map<string, string>(), svc: new Map<string, string>(), views: new Map<string, string>(), status: new Map<string, string>(), serviceImports: new Map<string, string>() };
  let last: DesiredImports | undefined;
  let ready = false;
  let nc: NatsConnection | undefined;
  let exportsKv: KV | undefined;
  let hubDown = false;
  const tasks: Promise<void>[] = [];

  // One sync at a time; a change during a sync runs another after it.
  let syncing: Promise<void> | undefined;
  let again = false;
  let expiryTimer: NodeJS.Timeout | undefined;
  const kvs: { svc?: KV; views?: KV; status?: KV; serviceImports?: KV } = {};

  const hubFailed = (err: unknown, what: string): void => {
    m.hubErrors.inc();
    if (!hubDown) log.warn({ err: err instanceof Error ? err.message : String(err), what }, 'the exports bucket is out of reach; retrying (other clusters are withdrawn one TTL after their last heartbeat)');
    hubDown = true;
  };
  const hubBack = (): void => {
    if (hubDown) log.info('the exports bucket answers again');
    hubDown = false;
  };

  const syncOnce = async (): Promise<void> => {
    const t = now();
    if (exportsKv !== undefined) {
      try {
        // Nothing to write says nothing about the hub: only a write that went through does.
        if ((await writeDiff(exportsKv, state.ownExports(), written.exports, (op) => m.writes.inc({ bucket: 'exports', op }))) > 0) hubBack();
      } catch (err) {
        hubFailed(err, 'writing exports');
        schedule(RETRY_MS);
      }
    }
    const imports = state.imports(t);
    if (kvs.svc !== undefined && kvs.views !== undefined) {
      // Views first, then Services: an agent never sees a derived Service before its endpoints.
      await writeDiff(kvs.views, imports.views, written.views, (op) => m.writes.inc({ bucket: 'views', op }));
      await writeDiff(kvs.svc, imports.svc, written.svc, (op) => m.writes.inc({ bucket: 'svc', op }));
    }
    // What each ServiceExport's status should say; the publisher writes it to the API.
    if (kvs.status !== undefined) await writeDiff(kvs.status, state.exportStatuses(imports, new Date(t).toISOString()), written.status, (op) => m.writes.inc({ bucket: 'exportstatus', op }));
    // The ServiceImport of each import, for people and tools (kubectl get svcim); the publisher writes it to the API.
    if (kvs.serviceImports !== undefined) await writeDiff(kvs.serviceImports, state.serviceImports(imports), written.serviceImports, (op) => m.writes.inc({ bucket: 'serviceimports', op }));
    if (last === undefined || last.live.join() !== imports.live.join()) log.info({ live: imports.live }, 'live clusters');
    last = imports;
    m.imports.set(imports.imports.length);
    m.liveClusters.set(imports.live.length);
    for (const i of imports.imports) if (i.conflicts.length > 0) log.warn({ service: `${i.namespace}/${i.name}`, conflicts: i.conflicts }, 'exports conflict (the oldest export wins)');
    const next = state.nextExpiry(t);
    if (expiryTimer !== undefined) clearTimeout(expiryTimer);
    // A cluster's withdrawal is a sync of its own: nothing else may happen meanwhile.
    if (next !== undefined) expiryTimer = setTimeout(() => schedule(0), Math.max(0, next - now()) + 5);
  };
  const runSync = async (): Promise<void> => {
    do {
      again = false;
      try {
        await syncOnce();
      } catch (err) {
        if (signal.aborted) return;
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'writing the imports failed; retrying');
        await sleep(RETRY_MS, signal);
        again = true;
      }
    } while (again && !signal.aborted);
  };
  let pending: NodeJS.Timeout | undefined;
  function schedule(delayMs = 20): void {
    if (signal.aborted || !ready) return;
    if (pending !== undefined) return;
    pending = setTimeout(() => {
      pending = undefined;
      if (syncing !== undefined) {
        again = true;
        return;
      }
      syncing = runSync().finally(() => (syncing = undefined));
    }, delayMs);
  }

  /** Follows one KUBE filter (last message per subject, then every new one), for ever. */
  const followKube = (filter: string, apply: (deleted: boolean, object: Service | Node | ServiceExport) => void, loaded: () => void): Promise<void> =>
    (async () => {
      let first = true;
      while (!signal.aborted) {
        try {
          const done = (): void => {
            if (first) {
              first = false;
              loaded();
            }
          };
          // Its role may not delete consumers: the server removes the follower a minute after it stops.
          for await (const msg of followSubject(nc as NatsConnection, { stream: config.kubeStream, subject: filter, signal, onInitialDone: done, deleteOnClose: false })) {
            const d = decodeKubeMessage(msg, { cluster: config.cluster, prefix: config.subjectPrefix });
            if (!d.ok) {
              log.warn({ subject: msg.subject, reason: d.rejection.reason }, 'skipped a KUBE message');
              continue;
            }
            apply(d.change.type === DELETED, d.change.object as Service | Node | ServiceExport);
            schedule();
          }
        } catch (err) {
          if (signal.aborted) return;
          log.warn({ filter, err: err instanceof Error ? err.message : String(err) }, 'following KUBE failed; again');
          await sleep(RETRY_MS, signal);
        }
      }
    })();

  /** Watches a bucket for ever (a watch that ends is started again). */
  const watchBucket = (open: () => Promise<KV>, filter: string, apply: (key: string, value: unknown) => void, loaded: () => void, onError: (err: unknown) => void): Promise<void> =>
    (async () => {
      let first = true;
      while (!signal.aborted) {
        try {
          const kv = await open();
          const done = (): void => {
            if (first) {
              first = false;
              loaded();
            }
          };
          for await (const c of kvWatchJson(kv, { key: filter, signal, onInitialDone: done })) {
            apply(c.key, c.op === 'PUT' ? c.value : undefined);
            schedule();
          }
        } catch (err) {
          if (signal.aborted) return;
          onError(err);
          await sleep(RETRY_MS, signal);
        }
      }
    })();

  const startup = (async () => {
    const problem = mcsConfigProblem(config);
    if (problem !== undefined) throw new Error(problem);
    nc = deps.nc ?? (await connectNats({ url: config.natsUrl, role: 'mcs', ...natsConnectionOf(config), name: `mcs-${config.cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') }));
    const conn = nc;
    kvs.svc = await openKv(conn, config.svcBucket);
    kvs.views = await openKv(conn, config.viewsBucket);
    // What earlier runs wrote: their ClusterSet IPs are kept, keys no import wants are deleted.
    for (const key of await kvKeys(kvs.svc, svcClusterFilter(config.cluster))) {
      const a = parseSvcKey(key);
      if (!isDerivedServiceName(a.name)) continue;
      written.svc.set(key, '');
      const e = await kvs.svc.get(key);
      const s = e?.operation === 'PUT' ? (e.json() as Service) : undefined;
      const ip = s?.spec.clusterIP;
      const name = s?.metadata.labels?.[LABEL_MCS_SERVICE_NAME];
      if (ip !== undefined && ip !== 'None' && name !== undefined) state.adoptClusterSetIp(a.namespace, name, ip);
    }
    for (const key of await kvKeys(kvs.views, svcClusterFilter(config.cluster))) if (isDerivedServiceName(parseViewKey(key).service)) written.views.set(key, '');
    kvs.status = await ensureKv(conn, config.exportStatusBucket, config.natsReplicas !== undefined ? { replicas: config.natsReplicas } : {});
    for (const key of await kvKeys(kvs.status, exportStatusFilter(config.cluster))) written.status.set(key, '');
    kvs.serviceImports = await ensureKv(conn, config.serviceImportsBucket, config.natsReplicas !== undefined ? { replicas: config.natsReplicas } : {});
    for (const key of await kvKeys(kvs.serviceImports, serviceImportFilter(config.cluster))) written.serviceImports.set(key, '');

    const loads = { services: false, serviceExports: false, nodes: false, hinted: false, exports: false };
    let markLoaded: () => void = () => {};
    const allLoaded = new Promise<void>((r) => (markLoaded = r));
    const loaded = (what: keyof typeof loads) => (): void => {
      loads[what] = true;
      if (Object.values(loads).every(Boolean)) markLoaded();
    };
    const opts = { prefix: config.subjectPrefix };
    tasks.push(
      followKube(
        kubeKindFilter(config.cluster, 'Service', opts),
        (deleted, o) => state.setService(o.metadata.namespace ?? 'default', o.metadata.name, deleted ? null : (o as Service)),
        loaded('services'),
      ),
      followKube(
        kubeKindFilter(config.cluster, 'ServiceExport', opts),
        (deleted, o) => state.setServiceExport(o.metadata.namespace ?? 'default', o.metadata.name, deleted ? null : (o as ServiceExport)),
        loaded('serviceExports'),
      ),
      followKube(kubeNodesFilter(config.cluster, opts), (deleted, o) => state.setNode(o.metadata.name, deleted ? null : (o as Node)), loaded('nodes')),
      watchBucket(
        () => openKv(conn, config.hintedBucket),
        svcClusterFilter(config.cluster),
        (key, value) => {
          const a = parseHintedKey(key);
          let slice: EndpointSlice | null = null;
          if (value !== undefined) {
            try {
              slice = validateEndpointSlice(value, `hinted ${key}`);
            } catch (err) {
              log.warn({ key, err: err instanceof Error ? err.message : String(err) }, 'skipped a hinted slice');
              return;
            }
          }
          state.setSlice(a.namespace, a.service, a.slice, slice);
        },
        loaded('hinted'),
        (err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'watching the hinted bucket failed; again'),
      ),
      watchBucket(
        async () => {
          const kv = await ensureKv(conn, config.exportsBucket, { ...(config.exportsDomain !== undefined ? { domain: config.exportsDomain } : {}), ...(config.natsReplicas !== undefined ? { replicas: config.natsReplicas } : {}) });
          exportsKv = kv;
          hubBack();
          return kv;
        },
        '>',
        (key, value) => applyExportsEntry(key, value),
        loaded('exports'),
        (err) => {
          hubFailed(err, 'watching the exports bucket');
          // Not reachable at start: go on without it (the others join once it answers).
          loaded('exports')();
        },
      ),
    );

    function applyExportsEntry(key: string, value: unknown): void {
      let addr;
      try {
        addr = parseExportsKey(key);
      } catch {
        log.warn({ key }, 'skipped an exports key');
        return;
      }
      if (addr.kind === 'hb') {
        if (value === undefined) return;
        const hb = parseClusterHeartbeat(key, value);
        if (!hb.ok) return void log.warn({ key, reason: hb.rejection.reason }, 'skipped a heartbeat');
        // Seen now; a heartbeat found when the watch starts counts from its own time (never later than now).
        const at = ready ? now() : Math.min(now(), Date.parse(hb.value.at) || 0);
        state.heartbeatSeen(addr.cluster, at);
        return;
      }
      if (addr.cluster === config.cluster) {
        // This cluster's own entries as the hub holds them: what earlier runs wrote.
        if (value === undefined) written.exports.delete(key);
        else written.exports.set(key, digest(value));
        return;
      }
      if (value === undefined) return state.setRemoteExport(key, null, addr.cluster);
      const r = parseServiceExportRecord(key, value);
      if (!r.ok) return void log.warn({ key, reason: r.rejection.reason }, 'skipped an export record');
      state.setRemoteExport(key, r.value, addr.cluster);
    }

    // The heartbeat: while it reaches the hub, the other clusters import this one.
    tasks.push(
      (async () => {
        while (!signal.aborted) {
          if (exportsKv !== undefined) {
            try {
              await kvPutJson(exportsKv, heartbeatKey(config.cluster), { v: EXPORT_RECORD_VERSION, cluster: config.cluster, at: new Date(now()).toISOString() });
              m.heartbeats.inc();
              hubBack();
            } catch (err) {
              hubFailed(err, 'writing the heartbeat');
            }
          }
          await sleep(config.heartbeat, signal);
        }
      })(),
    );

    await Promise.race([allLoaded, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('closed while starting')), { once: true }))]);
    ready = true;
    await runSync();
    log.info({ imports: last?.imports.length ?? 0, live: last?.live }, 'ready');
  })();
  startup.catch(() => {});

  let closing: Promise<void> | undefined;
  return {
    ready: startup,
    readiness: () => (ready ? { ready: true } : { ready: false, reason: 'loading this cluster\'s Services, Nodes and slices' }),
    lastImports: () => last,
    close: () =>
      (closing ??= (async () => {
        stop.abort();
        if (pending !== undefined) clearTimeout(pending);
        if (expiryTimer !== undefined) clearTimeout(expiryTimer);
        await startup.catch(() => {});
        await Promise.all(tasks.map((t) => t.catch(() => {})));
        await syncing?.catch(() => {});
        if (deps.nc === undefined) await nc?.close();
      })()),
  };
}
