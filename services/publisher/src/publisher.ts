// The publisher: finished slices → the Kubernetes API. One durable consumer reads this
// cluster's slices in stream order, a batch at a time — by default the hints service's `hinted`
// bucket (the slicer's slices with their topology hints, as the EndpointSlice controller writes
// them), or the slicer's SLICES messages (SOURCE=slices, no hints); each batch is coalesced into
// the last action per slice, every action is decided against the live object and carried out
// (apply.ts), and only then is the batch's last sequence recorded in Postgres and the batch
// acked. A restart positions the durable just after the recorded sequence; whatever is
// delivered twice is decided against the live object again and changes nothing.
//
// The backlog found at (re)start is applied as one set: its messages are coalesced as they
// arrive (acked, but not recorded) and applied once the last of them is in. A replay therefore
// writes each slice's final state only, never the history it went through — no stale endpoints
// appear in the API for the length of a catch-up. A crash meanwhile loses nothing: the recorded
// sequence has not moved, and the next start reads the same backlog again.
//
// The recorded sequence is per stream and mode (`publisher:<cluster>:<stream>:<mode>`), so
// switching a deployment from shadow to write, or to another source, reads that source from
// the start into the API instead of resuming after slices that were only counted. The bucket's
// stream keeps the last value of each key, so such a start reads each slice once.

import { performance } from 'node:perf_hooks';
import type { DbHandle } from '@slicemesh/db';
import { advanceOffset, createDb, getOffset, migrateToLatest } from '@slicemesh/db';
import type { EndpointSliceApi } from '@slicemesh/kube';
import { buildKubeConfig, endpointSliceApi, serverOf } from '@slicemesh/kube';
import type { ConsumedMessage, DurableOptions, HandlerOutcome, JetStreamClient, JetStreamManager, NatsConnection, ReplicasChange } from '@slicemesh/nats';
import {
  checkedCount, connectNats, natsConnectionOf, consumeBatchesInOrder, ensureKv, ensureStreams, fnv1a32, hintedStreamFilter, jetstream, jetstreamManager, kvStreamOf, parseHintedEntry,
  SLICE_CHANGED, parseSliceChanged, restartDurableAt, slicesFilter,
} from '@slicemesh/nats';
import type { Parsed, SliceChangedMessage } from '@slicemesh/nats';
import type { Clock, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import type { ActionResult, ApplyDeps, Outcome } from './apply.ts';
import { StoppedError, applyActions, rateLimitedApi, sleepOn } from './apply.ts';
import type { PublisherConfig } from './config.ts';
import { kubeConnectionOf } from './config.ts';
import { ActionSet } from './decide.ts';
import { publisherMetrics } from './publisher-metrics.ts';

export interface PublisherDeps {
  /** Defaults to a pino logger at config.logLevel. */
  readonly logger?: Logger;
  /** Defaults to a fresh registry ('publisher'). */
  readonly metrics?: Metrics;
  /** Defaults to the wall clock. */
  readonly clock?: Clock;
  /** Environment for the in-cluster and kubeconfig lookups. Defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The API without the rate limit (tests wrap it to count or fail requests). Defaults to the one the settings name. */
  readonly api?: EndpointSliceApi;
  /** A connection the caller owns (the publisher process shares one): used, never closed here. Defaults to a connection of its own. */
  readonly nats?: Promise<NatsConnection>;
}

export interface PublisherHandle {
  /** Resolves once the backlog found at start has been applied; rejects if startup fails or close() comes first. */
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  readonly metrics: Metrics;
  /** Outcomes so far, by kind (created, updated, unchanged, foreign, would-create, …). */
  counts(): Readonly<Partial<Record<Outcome, number>>>;
  /** The last SLICES sequence applied and recorded. */
  lastApplied(): number;
  /** Stops consuming (an in-flight batch ends at its next request), closes NATS and Postgres. Idempotent. */
  close(): Promise<void>;
}

/** First wait after a consumer failed; doubles per consecutive failure up to 30 s. */
const CONSUMER_RETRY_MS = 500;

/** `cluster` as a durable-name fragment: itself when [A-Za-z0-9_-], else sanitised plus a hash. */
export function clusterFragment(cluster: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(cluster)) return cluster;
  return `${cluster.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}_${fnv1a32(cluster).toString(16)}`;
}

type SourceSettings = Pick<PublisherConfig, 'cluster' | 'source' | 'slicesStream' | 'hintedBucket' | 'subjectPrefix'>;

/** The stream a publisher reads and the subjects of its cluster on it. */
export function sourceStream(config: SourceSettings): { readonly stream: string; readonly filter: string } {
  if (config.source === 'slices') return { stream: config.slicesStream, filter: slicesFilter(config.cluster, { prefix: config.subjectPrefix }) };
  return { stream: kvStreamOf(config.hintedBucket), filter: hintedStreamFilter(config.hintedBucket, config.cluster) };
}

/**
 * One message of the source as a SliceChanged message (a bucket entry is a change of one slice),
 * so both sources coalesce alike.
 */
function parseSourceMessage(config: SourceSettings, msg: ConsumedMessage): Parsed<SliceChangedMessage> | undefined {
  if (config.source === 'slices') return msg.data === undefined ? undefined : parseSliceChanged(msg.data, msg.subject, { cluster: config.cluster, prefix: config.subjectPrefix });
  const isDelete = msg.headers['KV-Operation'] === 'DEL' || msg.headers['KV-Operation'] === 'PURGE';
  if (msg.data === undefined && !isDelete) return undefined;
  const entry = parseHintedEntry(msg.subject, msg.data, msg.headers, { bucket: config.hintedBucket, cluster: config.cluster });
  if (!entry.ok) return entry;
  const { cluster, namespace, service, name, slice } = entry.value;
  return {
    ok: true,
    value: { type: SLICE_CHANGED, cluster, namespace, service, upserts: slice === null ? [] : [slice], deletes: slice === null ? [name] : [], kubeSeq: null, reconcileID: null },
  };
}

/** The durable's name and the consumer_offsets row of a publisher. */
export function publisherNames(config: SourceSettings & Pick<PublisherConfig, 'durablePrefix' | 'mode'>): { readonly durable: string; readonly offset: string } {
  return {
    durable: `${config.durablePrefix}-${clusterFragment(config.cluster)}-${config.mode}`,
    offset: `publisher:${config.cluster}:${sourceStream(config).stream}:${config.mode}`,
  };
}

/** Starts the publisher; see the file comment. */
export function startPublisher(config: PublisherConfig, deps: PublisherDeps = {}): PublisherHandle {
  const cluster = config.cluster;
  const log = (deps.logger ?? createLogger({ service: 'publisher', level: config.logLevel })).child({ cluster, mode: config.mode });
  const metrics = deps.metrics ?? createMetrics('publisher');
  const m = publisherMetrics(metrics);
  const clock = deps.clock ?? realClock;
  const names = { kube: config.kubeStream, slices: config.slicesStream, dlq: config.dlqStream, prefix: config.subjectPrefix };
  const { durable, offset: offsetName } = publisherNames(config);
  // A rate-limited batch may take minutes (10k slices at QPS 20); a redelivery meanwhile would only
  // be skipped as at or below the offset, and after a crash the durable is re-created at the
  // recorded sequence anyway, so the ack wait is long.
  const source = sourceStream(config);
  const durableOpts: DurableOptions = { durable, filterSubject: source.filter, maxAckPending: config.batch, ackWaitMs: 600_000 };
  const owned = new Set(config.managedBy);
  const stop = new AbortController();
  const counts: Partial<Record<Outcome, number>> = {};
  let offset = 0;
  /** The backlog being gathered: its actions, its last sequence, and how many of its messages are still to come. */
  const held = new ActionSet();
  let heldLast = 0;
  let backlogLeft = 0;
  let backlogApplied: () => void = () => {};
  const backlogDone = new Promise<void>((resolve) => (backlogApplied = resolve));
  let failing: string | undefined;
  let startupStatus: ReadyStatus = { ready: false, reason: 'starting' };
  let nc: NatsConnection | undefined;
  let dbh: DbHandle | undefined;
  let loop: Promise<void> | undefined;

  let api: EndpointSliceApi;
  if (deps.api !== undefined) api = deps.api;
  else {
    const kc = buildKubeConfig(kubeConnectionOf(config, deps.env ?? process.env));
    log.info({ server: serverOf(kc) }, 'kubernetes API');
    api = endpointSliceApi(kc, { timeoutMs: config.requestTimeout });
  }
  const applyDeps: ApplyDeps = {
    api: rateLimitedApi(api, { qps: config.kubeApiQps, burst: config.kubeApiBurst, clock, signal: stop.signal, onWait: (ms) => m.rateLimitWait(ms) }),
    owned,
    mode: config.mode,
    clock,
    signal: stop.signal,
    maxConflicts: config.maxConflicts,
    concurrency: config.concurrency,
    onEvent: (e) => {
      m.event(e);
      if (e.type === 'conflict') log.debug({ slice: `${e.action.namespace}/${e.action.name}`, decision: e.decision, status: e.statusCode, attempt: e.attempt }, 'conflict: reading again');
      else {
        log.warn({ verb: e.verb, status: e.statusCode, waitMs: Math.round(e.waitMs), attempt: e.attempt, detail: e.message }, 'API request failed; retrying');
        // Not ready while the API keeps failing; the next applied batch clears it.
        if (e.attempt >= 2) failing = `API requests failing (${e.attempt + 1} attempts): ${e.message}`;
      }
    },
  };

  function report(r: ActionResult): void {
    counts[r.outcome] = (counts[r.outcome] ?? 0) + 1;
    m.result(r);
    const slice = `${r.action.namespace}/${r.action.name}`;
    if (r.outcome === 'invalid' || r.outcome === 'rejected') {
      log.error({ slice, seq: r.action.seq, decision: r.decision, status: r.error?.statusCode, reason: r.error?.reason, apiMessage: r.error?.apiMessage }, 'the API refused the slice; moving on');
    } else if (r.outcome === 'foreign') {
      log.info({ slice, seq: r.action.seq }, 'slice exists under another manager; left untouched');
    } else if (r.outcome === 'not-owned') {
      log.error({ slice, seq: r.action.seq, owned: [...owned] }, "the slice's managed-by label is not one MANAGED_BY owns (the slicer's MANAGED_BY must be listed); not written");
    } else if (r.outcome === 'created' || r.outcome === 'updated' || r.outcome === 'deleted') {
      log.debug({ slice, seq: r.action.seq, outcome: r.outcome, conflicts: r.conflicts }, 'written');
    }
  }

  /** Positions the durable just after the recorded sequence and starts gathering the backlog it has. */
  async function restartAtOffset(jsm: JetStreamManager): Promise<void> {
    held.clear();
    heldLast = 0;
    const info = await restartDurableAt(jsm, source.stream, durableOpts, offset + 1);
    // A count that cannot be true (num_pending 2^64 − 1 after a server restart) would gather
    // forever and never apply: unknown counts as no backlog, so every batch is applied as it comes.
    backlogLeft = checkedCount(info.num_pending, `consumer ${source.stream}/${info.name} num_pending`, (c) => log.warn({ count: c.what, value: String(c.value) }, 'impossible pending count from NATS; applying batch by batch')) ?? 0;
    if (backlogLeft === 0) backlogApplied();
  }

  async function handle(msgs: readonly ConsumedMessage[]): Promise<HandlerOutcome> {
    const t0 = performance.now();
    let last = Math.max(offset, heldLast);
    backlogLeft -= msgs.length;
    for (const msg of msgs) {
      if (msg.seq <= offset) {
        m.message('redelivered');
        continue;
      }
      last = Math.max(last, msg.seq);
      const parsed = parseSourceMessage(config, msg);
      if (parsed === undefined || !parsed.ok) {
        // Their writers' readers dead-letter these; here they are only skipped.
        m.message('rejected');
        log.warn({ seq: msg.seq, subject: msg.subject, reason: parsed?.ok === false ? parsed.rejection.reason : msg.parseError, field: parsed?.ok === false ? parsed.rejection.field : undefined }, 'malformed source message skipped');
        continue;
      }
      m.message('applied');
      held.add({ seq: msg.seq, message: parsed.value });
    }
    if (backlogLeft > 0) {
      // More of the backlog is coming: keep gathering (acked, not recorded; see the file comment).
      heldLast = last;
      return 'ack';
    }
    const actions = held.actions();
    held.clear();
    heldLast = 0;
    const results = await applyActions(applyDeps, actions);
    for (const r of results) report(r);
    if (last > offset) {
      const db = (dbh as DbHandle).db;
      await db.transaction().execute((trx) => advanceOffset(trx, offsetName, last));
      offset = last;
      m.applied(last);
    }
    m.batch((performance.now() - t0) / 1000, actions.length);
    failing = undefined;
    backlogApplied();
    return 'ack';
  }

  async function supervise(js: JetStreamClient, jsm: JetStreamManager): Promise<void> {
    let failures = 0;
    for (let first = true; !stop.signal.aborted; first = false) {
      try {
        if (!first) await restartAtOffset(jsm);
        await consumeBatchesInOrder(js, source.stream, durable, handle, { signal: stop.signal, batch: config.batch });
        failures = 0;
        if (!stop.signal.aborted) log.warn({}, 'consumer ended; starting it again');
      } catch (err) {
        if (stop.signal.aborted || err instanceof StoppedError) return;
        failures++;
        failing = `consumer ${durable} failing: ${err instanceof Error ? err.message : String(err)}`;
        log.warn({ err, failures }, 'batch failed; consuming again from the recorded offset');
      }
      await sleepOn(clock, Math.min(CONSUMER_RETRY_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 6), 30_000), stop.signal).catch(() => {});
    }
  }

  async function start(): Promise<void> {
    const aborted = (): void => {
      if (stop.signal.aborted) throw new Error('publisher closed before it was ready');
    };
    nc = await (deps.nats ?? connectNats({ url: config.natsUrl, role: 'publisher', ...natsConnectionOf(config), name: `publisher-${cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') }));
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const replicas = { replicas: config.natsReplicas, onReplicasChanged: (c: ReplicasChange) => log.warn({ stream: c.stream, from: c.from, to: c.to }, 'replicas changed to NATS_REPLICAS') };
    if (config.ensureStreams) await ensureStreams(jsm, names, replicas);
    // The bucket is declared as the hints service declares it, so either may start first.
    if (config.source === 'hinted') await ensureKv(nc, config.hintedBucket, replicas);
    aborted();
    dbh = await createDb({ url: config.databaseUrl, schema: config.dbSchema, max: 2, onPoolError: (err) => log.warn({ err }, 'idle Postgres connection failed') });
    await migrateToLatest(dbh.db, config.dbSchema);
    offset = await getOffset(dbh.db, offsetName);
    m.applied(offset);
    aborted();
    // Just after the recorded sequence: what the server still held as pending comes again, in order.
    await restartAtOffset(jsm);
    log.info({ offset, backlog: backlogLeft, source: config.source, stream: source.stream, durable, owned: [...owned], qps: config.kubeApiQps, burst: config.kubeApiBurst }, 'consuming');
    loop = supervise(js, jsm);
    await Promise.race([backlogDone, new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))]);
    aborted();
    startupStatus = { ready: true };
    log.info({ offset, counts }, 'ready');
  }

  const ready = start();
  ready.catch((err: unknown) => {
    if (!stop.signal.aborted) {
      startupStatus = { ready: false, reason: `startup failed: ${err instanceof Error ? err.message : String(err)}` };
      log.error({ err }, 'startup failed');
    }
  });

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    stop.abort();
    await ready.catch(() => {});
    await loop;
    if (nc !== undefined && deps.nats === undefined) await nc.drain().catch(() => nc?.close());
    await dbh?.close();
  }

  return {
    ready,
    readiness: () => {
      if (stop.signal.aborted) return { ready: false, reason: 'shutting down' };
      if (!startupStatus.ready) return startupStatus;
      return failing === undefined ? { ready: true } : { ready: false, reason: failing };
    },
    metrics,
    counts: () => ({ ...counts }),
    lastApplied: () => offset,
    close: () => (closing ??= close()),
  };
}
