// The ServiceImport writer: a fourth component of the publisher's process. It watches the
// serviceimports bucket (the ServiceImport the multi-cluster service computed for each import of
// this cluster) and writes each one to the Kubernetes API — created, or replaced when its spec
// differs, then its status.clusters through the status subresource — and deletes it when its
// entry is deleted. In shadow mode it counts what it would write. The API stays written by the
// publisher alone.
//
// It only ever touches ServiceImports labelled as ours (app.kubernetes.io/managed-by:
// slicemesh-mcs), which it labels so: one written by another MCS controller is left alone. Once the
// bucket has been read, labelled ServiceImports the bucket does not hold are deleted (entries
// deleted while the publisher was away). Each entry is applied once per content (by digest); a
// failed write is retried with backoff until it succeeds or a newer entry replaces it. A create
// answered 404 (no ServiceImport CRD, or no such namespace) is counted as unserved and not
// retried: the entry's next change tries again.

import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ServiceImportApi } from '@slicemesh/kube';
import { KubeWriteError, buildKubeConfig, serverOf, serviceImportApi } from '@slicemesh/kube';
import type { ServiceImport } from '@slicemesh/model';
import type { KV, NatsConnection, ServiceImportEntry } from '@slicemesh/nats';
import {
  LABEL_APP_MANAGED_BY, SERVICE_IMPORT_MANAGED_BY, connectNats, kvWatchJson, natsConnectionOf, openKv, parseServiceImportEntry, serviceImportFilter, serviceImportKey, serviceImportObject,
} from '@slicemesh/nats';
import type { Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { sleepOn } from '../apply.ts';
import { defaultRetryDelayMs, keyedWrites } from '../keyed-writes.ts';
import type { PublisherConfig } from '../config.ts';
import { kubeConnectionOf } from '../config.ts';

export type ImportWriterConfig = Pick<
  PublisherConfig,
  'mode' | 'natsUrl' | 'natsNkeySeedFile' | 'natsCredsFile' | 'natsJsDomain' | 'cluster' | 'serviceImportsBucket' | 'kubeServer' | 'kubeconfig' | 'kubeContext' | 'inCluster' | 'requestTimeout' | 'logLevel'
>;

export interface ImportWriterDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The API (tests put a counting or failing wrapper here). */
  readonly api?: ServiceImportApi;
  /** Backoff between attempts of one write, ms, by attempt (1-based). */
  readonly retryDelayMs?: (attempt: number) => number;
  /** A connection the caller owns (the publisher process shares one): used, never closed here. Defaults to a connection of its own. */
  readonly nats?: Promise<NatsConnection>;
}

export interface ImportWriterCounts {
  /** ServiceImports created or updated (or that would be, in shadow mode). */
  readonly written: number;
  /** ServiceImports deleted (or that would be). */
  readonly deleted: number;
  /** ServiceImports left alone: not labelled as ours. */
  readonly foreign: number;
  /** ServiceImports the API could not take (404 on create: no CRD, or no such namespace). */
  readonly unserved: number;
  /** Failed attempts (each retried). */
  readonly failures: number;
}

export interface ImportWriterHandle {
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  counts(): ImportWriterCounts;
  close(): Promise<void>;
}

/** What one key should be: its entry, or null once the entry is deleted. */
interface Wanted {
  readonly namespace: string;
  readonly name: string;
  readonly entry: ServiceImportEntry | null;
  readonly digest: string;
}

type Outcome = 'written' | 'unchanged' | 'deleted' | 'gone' | 'foreign' | 'unserved';

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');
const DELETED = 'deleted';
const OURS = `${LABEL_APP_MANAGED_BY}=${SERVICE_IMPORT_MANAGED_BY}`;
const isOurs = (o: ServiceImport): boolean => o.metadata.labels?.[LABEL_APP_MANAGED_BY] === SERVICE_IMPORT_MANAGED_BY;

export function startImportWriter(config: ImportWriterConfig, deps: ImportWriterDeps = {}): ImportWriterHandle {
  const log = (deps.logger ?? createLogger({ service: 'publisher', level: config.logLevel as 'info' })).child({ writer: 'service-imports', cluster: config.cluster, mode: config.mode });
  const metrics = deps.metrics ?? createMetrics('publisher');
  const writes = metrics.counter({
    name: 'publisher_service_import_writes_total',
    help: 'ServiceImport writes by outcome (written, deleted, unchanged, gone, foreign, unserved, would-write, would-delete, failed).',
    labelNames: ['outcome'],
  });
  const stop = new AbortController();
  const { signal } = stop;
  const counts = { written: 0, deleted: 0, foreign: 0, unserved: 0, failures: 0 };
  const retryDelay = deps.retryDelayMs ?? defaultRetryDelayMs;
  let ready = false;
  let nc: NatsConnection | undefined;
  let api: ServiceImportApi;
  if (deps.api !== undefined) api = deps.api;
  else {
    const kc = buildKubeConfig(kubeConnectionOf(config, deps.env ?? process.env));
    log.info({ server: serverOf(kc) }, 'kubernetes API (ServiceImports)');
    api = serviceImportApi(kc, { timeoutMs: config.requestTimeout });
  }

  /** Deletes the ServiceImport if it is ours. */
  async function remove(namespace: string, name: string): Promise<Outcome> {
    const found = await api.get(namespace, name);
    if (found === undefined) return 'gone';
    if (!isOurs(found)) return 'foreign';
    const { uid, resourceVersion } = found.metadata;
    if (uid === undefined || resourceVersion === undefined) throw new Error(`ServiceImport ${namespace}/${name} has no uid or resourceVersion`);
    return (await api.delete(namespace, name, { uid, resourceVersion })) ? 'deleted' : 'gone';
  }

  /** Creates or replaces the ServiceImport of `entry`, then its status; nothing when both are already so. */
  async function put(entry: ServiceImportEntry): Promise<Outcome> {
    const want = serviceImportObject(entry);
    let found = await api.get(entry.namespace, entry.name);
    if (found !== undefined && !isOurs(found)) return 'foreign';
    let wrote = false;
    if (found === undefined) {
      try {
        found = await api.create(want);
      } catch (err) {
        if (err instanceof KubeWriteError && err.statusCode === 404) return 'unserved';
        throw err;
      }
      wrote = true;
    } else if (!isDeepStrictEqual(found.spec, want.spec)) {
      // Conditional on the resourceVersion read: a concurrent change is a 409, retried from a new read.
      found = await api.replace({ ...found, metadata: { ...found.metadata, labels: { ...found.metadata.labels, ...want.metadata.labels } }, spec: want.spec });
      wrote = true;
    }
    if (!isDeepStrictEqual(found.status?.clusters ?? [], entry.status.clusters)) {
      if (!(await api.patchStatus(entry.namespace, entry.name, entry.status))) throw new Error(`ServiceImport ${entry.namespace}/${entry.name} was deleted while its status was written`);
      wrote = true;
    }
    return wrote ? 'written' : 'unchanged';
  }

  function record(outcome: Outcome | 'would-write' | 'would-delete'): void {
    writes.inc({ outcome });
    if (outcome === 'written' || outcome === 'would-write') counts.written++;
    else if (outcome === 'deleted' || outcome === 'would-delete') counts.deleted++;
    else if (outcome === 'foreign') counts.foreign++;
    else if (outcome === 'unserved') counts.unserved++;
  }

  const writer = keyedWrites<Wanted>({
    signal,
    retryDelayMs: retryDelay,
    write: async (want) => {
      if (config.mode === 'shadow') return record(want.entry === null ? 'would-delete' : 'would-write');
      const outcome = want.entry === null ? await remove(want.namespace, want.name) : await put(want.entry);
      record(outcome);
      if (outcome === 'foreign') log.warn({ serviceImport: `${want.namespace}/${want.name}` }, `a ServiceImport not labelled ${OURS} is left alone`);
      if (outcome === 'unserved') log.warn({ serviceImport: `${want.namespace}/${want.name}` }, 'the API has no ServiceImports (no mcs-api CRD) or no such namespace: not written until the import changes');
    },
    failed: (want, err, attempt) => {
      counts.failures++;
      writes.inc({ outcome: 'failed' });
      const status = err instanceof KubeWriteError ? err.statusCode : undefined;
      log.warn({ serviceImport: `${want.namespace}/${want.name}`, status, attempt, err: err instanceof Error ? err.message : String(err) }, 'ServiceImport write failed; retrying');
    },
  });
  const want = (key: string, w: Wanted): void => writer.want(key, w);

  /** Our ServiceImports in the API that the bucket does not hold are deleted; a failed list is retried. */
  async function sweep(): Promise<void> {
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        for (const o of await api.list(OURS)) {
          const namespace = o.metadata.namespace ?? 'default';
          const key = serviceImportKey({ cluster: config.cluster, namespace, name: o.metadata.name });
          const w = writer.latest(key);
          if (w === undefined || w.entry === null) want(key, { namespace, name: o.metadata.name, entry: null, digest: DELETED });
        }
        return;
      } catch (err) {
        // No ServiceImport CRD: there is nothing of ours to delete.
        if (err instanceof KubeWriteError && err.statusCode === 404) return;
        counts.failures++;
        log.warn({ attempt, err: err instanceof Error ? err.message : String(err) }, 'listing our ServiceImports failed; retrying');
        await sleepOn(realClock, retryDelay(attempt), signal).catch(() => {});
      }
    }
  }

  let kv: KV | undefined;
  let markReady: () => void = () => {};
  const initial = new Promise<void>((r) => (markReady = r));
  const sweeps: Promise<void>[] = [];
  const loop = (async () => {
    nc = await (deps.nats ?? connectNats({ url: config.natsUrl, role: 'publisher', ...natsConnectionOf(config), name: `publisher-service-imports-${config.cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') }));
    while (!signal.aborted) {
      try {
        // The bucket is the multi-cluster service's: it may not exist yet (no mcs, or not started).
        kv ??= await openKv(nc, config.serviceImportsBucket);
        // Keys seen by this watch: after a reconnect, what was wanted and is no longer in the bucket goes.
        const seen = new Set<string>();
        const loaded = (): void => {
          for (const [key, w] of [...writer.entries()]) if (w.entry !== null && !seen.has(key)) want(key, { ...w, entry: null, digest: DELETED });
          sweeps.push(sweep());
          markReady();
        };
        for await (const c of kvWatchJson(kv, { key: serviceImportFilter(config.cluster), signal, onInitialDone: loaded })) {
          const key = c.key as string;
          seen.add(key);
          if (c.op !== 'PUT') {
            // A key never seen put is one deleted before this run: the sweep after loading finds
            // its ServiceImport, if it is still in the API, without a GET per old delete marker.
            const was = writer.latest(key);
            if (was !== undefined) want(key, { ...was, entry: null, digest: DELETED });
            continue;
          }
          const e = parseServiceImportEntry(key, c.value, config.cluster);
          if (!e.ok) {
            log.warn({ key, reason: e.rejection.reason }, 'malformed ServiceImport entry skipped');
            continue;
          }
          want(key, { namespace: e.value.namespace, name: e.value.name, entry: e.value, digest: digest(e.value) });
        }
      } catch (err) {
        if (signal.aborted) return;
        markReady(); // no bucket yet: nothing to write so far
        log.info({ bucket: config.serviceImportsBucket, err: err instanceof Error ? err.message : String(err) }, 'no ServiceImports to watch yet; again in 5 s');
        await sleepOn(realClock, 5000, signal).catch(() => {});
      }
    }
  })();
  // Ready once the bucket's current entries are read (or it is known to be missing); a failed connect fails the start.
  const readyPromise = Promise.race([initial, loop.then(() => {})]).then(() => {
    ready = true;
  });
  readyPromise.catch(() => {});
  return {
    ready: readyPromise,
    readiness: () => (ready ? { ready: true } : { ready: false, reason: 'reading the ServiceImports' }),
    counts: () => ({ ...counts }),
    close: async () => {
      stop.abort();
      await loop.catch(() => {});
      await Promise.all(sweeps);
      await writer.idle();
      if (deps.nats === undefined) await nc?.close();
    },
  };
}
