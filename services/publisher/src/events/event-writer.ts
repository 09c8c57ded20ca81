// The event writer: EVENTS → Kubernetes Events. One durable consumer reads this cluster's event
// requests in stream order; each goes through the correlator (client-go's recorder, A.13) and
// what it decides is written through a rate limiter (write mode) or only counted (shadow mode).
//
// Events are best effort, as in Kubernetes: nothing is recorded in Postgres, a request the API
// keeps refusing is dropped after client-go's number of tries, and a request older than
// EVENT_MAX_AGE is skipped (its Event would have expired already). The correlator's clock is the
// requests' own time, so a backlog read after a restart is aggregated and rate-limited as it
// happened, not as one burst.

import type { CoreEventApi } from '@slicemesh/kube';
import { buildKubeConfig, coreEventApi, serverOf } from '@slicemesh/kube';
import type { ConsumedMessage, HandlerOutcome, ImpossibleCount, JetStreamClient, JetStreamManager, NatsConnection } from '@slicemesh/nats';
import { checkedCount, connectNats, natsConnectionOf, consumeLoop, ensureDurable, ensureStreams, eventsFilter, jetstream, jetstreamManager, parseEventRequest, sumCounts } from '@slicemesh/nats';
import type { Clock, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, realClock } from '@slicemesh/runtime';
import { StoppedError, sleepOn } from '../apply.ts';
import type { PublisherConfig } from '../config.ts';
import { kubeConnectionOf } from '../config.ts';
import { clusterFragment } from '../publisher.ts';
import { EventCorrelator } from './correlator.ts';
import type { RecorderOptions } from './correlator.ts';
import type { EventOutcome } from './event-metrics.ts';
import { eventWriterMetrics } from './event-metrics.ts';
import { rateLimitedEventApi } from './rate-limited-event-api.ts';
import type { RecordDeps } from './record-event.ts';
import { recordEvent } from './record-event.ts';

export type EventWriterConfig = Pick<
  PublisherConfig,
  | 'mode' | 'ensureStreams' | 'natsUrl' | 'natsNkeySeedFile' | 'natsCredsFile' | 'natsJsDomain' | 'natsReplicas' | 'cluster' | 'kubeStream' | 'slicesStream' | 'dlqStream' | 'eventsStream' | 'subjectPrefix' | 'durablePrefix'
  | 'kubeServer' | 'kubeconfig' | 'kubeContext' | 'inCluster' | 'kubeApiQps' | 'kubeApiBurst' | 'requestTimeout' | 'eventMaxAge' | 'logLevel'
>;

export interface EventWriterDeps {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  readonly clock?: Clock;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The API without the rate limit (tests wrap it to count or fail requests). */
  readonly api?: CoreEventApi;
  /** Correlator settings other than client-go's (tests). */
  readonly recorder?: Partial<RecorderOptions>;
  /** See RecordDeps (tests shorten the retries). */
  readonly retryDelayMs?: RecordDeps['retryDelayMs'];
  /** A connection the caller owns (the publisher process shares one): used, never closed here. Defaults to a connection of its own. */
  readonly nats?: Promise<NatsConnection>;
}

export interface EventWriterHandle {
  /** Resolves once the requests found at start are handled; rejects if startup fails or close() comes first. */
  readonly ready: Promise<void>;
  readiness(): ReadyStatus;
  /** Requests by outcome so far. */
  counts(): Readonly<Partial<Record<EventOutcome, number>>>;
  close(): Promise<void>;
}

/** The durable of an event writer: per cluster and mode, like the slice path's. */
export function eventWriterDurable(config: Pick<EventWriterConfig, 'durablePrefix' | 'cluster' | 'mode'>): string {
  return `${config.durablePrefix}-${clusterFragment(config.cluster)}-events-${config.mode}`;
}

const CONSUMER_RETRY_MS = 500;
/** Long enough for one request's retries (12 tries, up to 10 s apart) before the server redelivers. */
const ACK_WAIT_MS = 300_000;

/** Starts the event writer; see the file comment. */
export function startEventWriter(config: EventWriterConfig, deps: EventWriterDeps = {}): EventWriterHandle {
  const cluster = config.cluster;
  const log = (deps.logger ?? createLogger({ service: 'publisher', level: config.logLevel })).child({ writer: 'events', cluster, mode: config.mode });
  const m = eventWriterMetrics(deps.metrics ?? createMetrics('publisher'));
  const clock = deps.clock ?? realClock;
  const names = { kube: config.kubeStream, slices: config.slicesStream, dlq: config.dlqStream, events: config.eventsStream, prefix: config.subjectPrefix };
  const durable = eventWriterDurable(config);
  const stop = new AbortController();
  const correlator = new EventCorrelator(deps.recorder);
  const counts: Partial<Record<EventOutcome, number>> = {};
  let lastTimeMs = 0;
  let backlogLeft = 0;
  let backlogDone: () => void = () => {};
  const backlog = new Promise<void>((resolve) => (backlogDone = resolve));
  let failing: string | undefined;
  let startupStatus: ReadyStatus = { ready: false, reason: 'starting' };
  let nc: NatsConnection | undefined;
  let loop: Promise<void> | undefined;

  let api: CoreEventApi;
  if (deps.api !== undefined) api = deps.api;
  else {
    const kc = buildKubeConfig(kubeConnectionOf(config, deps.env ?? process.env));
    log.info({ server: serverOf(kc) }, 'kubernetes API (events)');
    api = coreEventApi(kc, { timeoutMs: config.requestTimeout });
  }
  const recordDeps: RecordDeps = {
    api: rateLimitedEventApi(api, { qps: config.kubeApiQps, burst: config.kubeApiBurst, clock, signal: stop.signal, onWait: (ms) => m.rateLimitWait(ms) }),
    clock,
    signal: stop.signal,
    ...(deps.retryDelayMs === undefined ? {} : { retryDelayMs: deps.retryDelayMs }),
    onRetry: (e) => {
      m.retry(e.verb, e.statusCode);
      log.warn({ verb: e.verb, status: e.statusCode, waitMs: Math.round(e.waitMs), attempt: e.attempt, detail: e.message }, 'Event write failed; retrying');
      if (e.attempt >= 2) failing = `Event writes failing (${e.attempt + 1} attempts): ${e.message}`;
    },
  };

  function count(o: EventOutcome): void {
    counts[o] = (counts[o] ?? 0) + 1;
    m.outcome(o);
  }

  async function handleOne(msg: ConsumedMessage): Promise<void> {
    const parsed = msg.data === undefined ? undefined : parseEventRequest(msg.data, msg.subject, { cluster, prefix: names.prefix });
    if (parsed === undefined || !parsed.ok) {
      m.request('rejected');
      log.warn({ seq: msg.seq, subject: msg.subject, reason: parsed?.ok === false ? parsed.rejection.reason : msg.parseError, field: parsed?.ok === false ? parsed.rejection.field : undefined }, 'malformed Event request skipped');
      return;
    }
    const req = parsed.value;
    const at = Date.parse(req.time);
    if (clock.now() - at > config.eventMaxAge) {
      m.request('stale');
      return;
    }
    m.request('received');
    // The requests' own time drives the correlator, never backwards (producers' clocks differ slightly).
    lastTimeMs = Math.max(lastTimeMs, at);
    const c = correlator.correlate({ component: req.component, object: req.involvedObject, type: req.event.type, reason: req.event.reason, message: req.event.message }, lastTimeMs);
    if (c.action === 'drop') return count('spam-dropped');
    if (c.combined) m.aggregated();
    if (config.mode === 'shadow') return count(c.action === 'create' ? 'would-create' : 'would-patch');
    const r = await recordEvent(recordDeps, c);
    count(r.outcome);
    const object = `${req.involvedObject.kind} ${req.involvedObject.namespace}/${req.involvedObject.name}`;
    if (r.outcome === 'refused' || r.outcome === 'gave-up') {
      log.warn({ object, reason: req.event.reason, event: c.event.name, outcome: r.outcome, status: r.error?.statusCode, apiMessage: r.error?.apiMessage }, 'Event not recorded; dropped (events are best effort)');
    } else {
      failing = undefined;
      log.debug({ object, reason: req.event.reason, event: c.event.name, count: c.event.count, outcome: r.outcome }, 'Event recorded');
    }
  }

  async function handle(msg: ConsumedMessage): Promise<HandlerOutcome> {
    try {
      await handleOne(msg);
    } catch (err) {
      if (err instanceof StoppedError) return { nakDelayMs: 0 };
      throw err;
    }
    if (backlogLeft > 0 && --backlogLeft === 0) backlogDone();
    return 'ack';
  }

  async function supervise(js: JetStreamClient, jsm: JetStreamManager): Promise<void> {
    let failures = 0;
    while (!stop.signal.aborted) {
      try {
        await ensureDurable(jsm, config.eventsStream, { durable, filterSubject: eventsFilter(cluster, names), ackWaitMs: ACK_WAIT_MS });
        await consumeLoop(js, config.eventsStream, durable, handle, { signal: stop.signal, onError: (err, msg) => log.warn({ err, seq: msg.seq }, 'Event request failed; redelivered later') });
        failures = 0;
      } catch (err) {
        if (stop.signal.aborted) return;
        failures++;
        failing = `consumer ${durable} failing: ${err instanceof Error ? err.message : String(err)}`;
        log.warn({ err, failures }, 'Event consumer failed; starting it again');
      }
      await sleepOn(clock, Math.min(CONSUMER_RETRY_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 6), 30_000), stop.signal).catch(() => {});
    }
  }

  async function start(): Promise<void> {
    nc = await (deps.nats ?? connectNats({ url: config.natsUrl, role: 'publisher', ...natsConnectionOf(config), name: `publisher-events-${cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') }));
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    if (config.ensureStreams) await ensureStreams(jsm, names, { replicas: config.natsReplicas, onReplicasChanged: (c) => log.warn({ stream: c.stream, from: c.from, to: c.to }, 'replicas changed to NATS_REPLICAS') });
    const info = await ensureDurable(jsm, config.eventsStream, { durable, filterSubject: eventsFilter(cluster, names), ackWaitMs: ACK_WAIT_MS });
    // Unknown (a count that cannot be true, e.g. 2^64 − 1 after a server restart): no backlog to wait for.
    const warn = (c: ImpossibleCount): void => log.warn({ count: c.what, value: String(c.value) }, 'impossible pending count from NATS; not waiting for the backlog');
    backlogLeft = sumCounts([checkedCount(info.num_pending, `consumer ${config.eventsStream}/${durable} num_pending`, warn), checkedCount(info.num_ack_pending, `consumer ${config.eventsStream}/${durable} num_ack_pending`, warn)]) ?? 0;
    if (backlogLeft === 0) backlogDone();
    if (stop.signal.aborted) throw new Error('event writer closed before it was ready');
    log.info({ durable, backlog: backlogLeft, qps: config.kubeApiQps, burst: config.kubeApiBurst }, 'consuming EVENTS');
    loop = supervise(js, jsm);
    await Promise.race([backlog, new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }))]);
    if (stop.signal.aborted) throw new Error('event writer closed before it was ready');
    startupStatus = { ready: true };
  }

  const ready = start();
  ready.catch((err: unknown) => {
    if (!stop.signal.aborted) {
      startupStatus = { ready: false, reason: `event writer startup failed: ${err instanceof Error ? err.message : String(err)}` };
      log.error({ err }, 'event writer startup failed');
    }
  });

  let closing: Promise<void> | undefined;
  async function close(): Promise<void> {
    stop.abort();
    await ready.catch(() => {});
    await loop;
    if (nc !== undefined && deps.nats === undefined) await nc.drain().catch(() => nc?.close());
  }

  return {
    ready,
    readiness: () => {
      if (stop.signal.aborted) return { ready: false, reason: 'shutting down' };
      if (!startupStatus.ready) return startupStatus;
      return failing === undefined ? { ready: true } : { ready: false, reason: failing };
    },
    counts: () => ({ ...counts }),
    close: () => (closing ??= close()),
  };
}
