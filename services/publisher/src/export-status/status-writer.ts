// The ServiceExport status writer: a third component of the publisher's process. It watches the
// exportstatus bucket (what the multi-cluster service decided each of this cluster's
// ServiceExports should say: conditions Valid and Conflict) and writes it to the status
// subresource — in write mode; in shadow mode it counts what it would write. The API stays
// written by the publisher alone.
//
// Each entry is applied once per content (by digest); a failed write is retried with backoff
// until it succeeds or a newer entry replaces it. A ServiceExport that is gone (404) is skipped:
// the next entry, if the object comes back, is written then.

import { createHash } from 'node:crypto';
import type { ServiceExportApi } from '@slicemesh/kube';
import { KubeWriteError, buildKubeConfig, serverOf, serviceExportApi } from '@slicemesh/kube';
import type { KV, NatsConnection } from '@slicemesh/nats';
import { connectNats, exportStatusFilter, kvWatchJson, natsConnectionOf, openKv, parseServiceExportStatus } from '@slicemesh/nats';
import type { Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { sleepOn } from '../apply.ts';
import { defaultRetryDelayMs, keyedWrites } from '../keyed-writes.ts';
import type { PublisherConfig } from '../config.ts';
import { kubeConnectionOf } from '../config.ts';

export type StatusWriterConfig = Pick<
  PublisherConfig,
  'mode' | 'natsUrl' | 'natsNkeySeedFile' | 'natsCredsFile' | 'natsJsDomain' | 'cluster' | 'exportStatusBucket' | 'kubeServer' | 'kubeconfig' | 'kubeContext' | 'inCluster' | 'requestTimeout' | 'logLevel'
>;

export interface StatusWriterDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The API (tests put a fake or a counting wrapper here). */
  readonly api?: ServiceExportApi;
  /** Backoff between attempts of one write, ms, by attempt (1-based). */
  readonly retryDelayMs?: (attempt: number) => number;
  /** A connection the caller owns (the publisher process shares one): used, never closed here. Defaults to a connection of its own. */
  readonly nats?: Promise<NatsConnection>;
}

export interface StatusWriterHandle {
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  /** Writes made (or counted, in shadow mode), ServiceExports found gone, and failed attempts. */
  counts(): { readonly written: number; readonly gone: number; readonly failures: number };
  close(): Promise<void>;
}

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');

export function startStatusWriter(config: StatusWriterConfig, deps: StatusWriterDeps = {}): StatusWriterHandle {
  const log = (deps.logger ?? createLogger({ service: 'publisher', level: config.logLevel as 'info' })).child({ writer: 'export-status', cluster: config.cluster, mode: config.mode });
  const metrics = deps.metrics ?? createMetrics('publisher');
  const writes = metrics.counter({ name: 'publisher_export_status_writes_total', help: 'ServiceExport status writes by outcome (written, would-write, gone, failed).', labelNames: ['outcome'] });
  const stop = new AbortController();
  const counts = { written: 0, gone: 0, failures: 0 };
  const retryDelay = deps.retryDelayMs ?? defaultRetryDelayMs;
  let ready = false;
  let nc: NatsConnection | undefined;
  let api: ServiceExportApi;
  if (deps.api !== undefined) api = deps.api;
  else {
    const kc = buildKubeConfig(kubeConnectionOf(config, deps.env ?? process.env));
    log.info({ server: serverOf(kc) }, 'kubernetes API (ServiceExport status)');
    api = serviceExportApi(kc, { timeoutMs: config.requestTimeout });
  }
  const writer = keyedWrites<{ namespace: string; name: string; conditions: unknown; digest: string }>({
    signal: stop.signal,
    retryDelayMs: retryDelay,
    write: async (want) => {
      if (config.mode === 'shadow') {
        counts.written++;
        writes.inc({ outcome: 'would-write' });
        return;
      }
      if (await api.patchStatus(want.namespace, want.name, want.conditions as never)) {
        counts.written++;
        writes.inc({ outcome: 'written' });
      } else {
        counts.gone++;
        writes.inc({ outcome: 'gone' });
      }
    },
    failed: (want, err, attempt) => {
      counts.failures++;
      writes.inc({ outcome: 'failed' });
      const status = err instanceof KubeWriteError ? err.statusCode : undefined;
      log.warn({ serviceExport: `${want.namespace}/${want.name}`, status, attempt, err: err instanceof Error ? err.message : String(err) }, 'ServiceExport status write failed; retrying');
    },
  });

  let kv: KV | undefined;
  let markReady: () => void = () => {};
  const initial = new Promise<void>((r) => (markReady = r));
  const loop = (async () => {
    nc = await (deps.nats ?? connectNats({ url: config.natsUrl, role: 'publisher', ...natsConnectionOf(config), name: `publisher-export-status-${config.cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') }));
    while (!stop.signal.aborted) {
      try {
        // The bucket is the multi-cluster service's: it may not exist yet (no mcs, or not started).
        kv ??= await openKv(nc, config.exportStatusBucket);
        for await (const c of kvWatchJson(kv, { key: exportStatusFilter(config.cluster), signal: stop.signal, onInitialDone: markReady })) {
          if (c.op !== 'PUT') continue; // a ServiceExport gone: nothing to write
          const e = parseServiceExportStatus(c.key as string, c.value, config.cluster);
          if (!e.ok) {
            log.warn({ key: c.key, reason: e.rejection.reason }, 'malformed ServiceExport status skipped');
            continue;
          }
          writer.want(c.key, { namespace: e.value.namespace, name: e.value.name, conditions: e.value.conditions, digest: digest(e.value.conditions) });
        }
      } catch (err) {
        if (stop.signal.aborted) return;
        markReady(); // no bucket yet: nothing to write so far
        log.info({ bucket: config.exportStatusBucket, err: err instanceof Error ? err.message : String(err) }, 'no ServiceExport status to watch yet; again in 5 s');
        await sleepOn(realClock, 5000, stop.signal).catch(() => {});
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
    readiness: () => (ready ? { ready: true } : { ready: false, reason: 'reading the ServiceExports\' status' }),
    counts: () => ({ ...counts }),
    close: async () => {
      stop.abort();
      await loop.catch(() => {});
      await writer.idle();
      if (deps.nats === undefined) await nc?.close();
    },
  };
}
