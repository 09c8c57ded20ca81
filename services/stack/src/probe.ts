// Reading the pipeline's progress from the outside — streams, consumers, Postgres, KV — so the
// numbers are the same whether the services run in this process or as child processes.

import type { Db } from '@slicemesh/db';
import { countSlices, getOffset, loadDecisionFlags } from '@slicemesh/db';
import type { ImpossibleCountSink, JetStreamManager, KV, NatsConnection } from '@slicemesh/nats';
import { CONSUMER_NOT_FOUND, STREAM_NOT_FOUND, checkedCount, describeImpossibleCount, isApiError, kvKeys, lastMessageOf, onceEach, openKv, pendingCount, svcClusterFilter } from '@slicemesh/nats';
import { clusterConsumerSpecs } from '@slicemesh/hints';
import { RELAY_NAME, outboxBacklog, resolveSlicerSettings, slicerConfig, slicerConsumers } from '@slicemesh/slicer';
import type { StackLayout } from './service-env.ts';
import { slicerEnv } from './service-env.ts';

/** A durable consumer whose backlog tells whether a service has caught up. */
export interface WatchedConsumer {
  readonly service: 'slicer' | 'hints';
  readonly stream: string;
  readonly durable: string;
  /** The subjects it reads. */
  readonly filter: string;
  /** Its row in consumer_offsets: how far its service has applied the stream (written with what it applied). */
  readonly offset: string;
}

/** The slicer's and the hints service's durables for `layout` (their default durable prefixes). */
export function consumersOf(layout: StackLayout): WatchedConsumer[] {
  const settings = resolveSlicerSettings(slicerConfig.parse([], slicerEnv(layout, 0)));
  return [
    ...slicerConsumers(layout.cluster, settings.names, settings.durablePrefix, settings.partitions).map((c) => ({ service: 'slicer' as const, stream: settings.names.kube, durable: c.durable, filter: c.filterSubject, offset: c.offset })),
    ...clusterConsumerSpecs(layout.cluster, layout.names, 'hints', layout.partitions).map((s) => ({ service: 'hints' as const, stream: s.stream, durable: s.durable, filter: s.filterSubject, offset: s.offset })),
  ];
}

/** The counts of a reading that the server reported as something that cannot be true. */
export type UnknownCount = 'kubeSeq' | 'slicesSeq' | 'viewsSeq' | 'deadLetters' | 'pending';

/**
 * One reading of the backbone. Counts are null when their source does not exist yet, or when
 * the server reported a value that cannot be true (then also named in `unknown`).
 */
export interface BackboneReading {
  readonly kubeSeq: number | null;
  readonly slicesSeq: number | null;
  /** Last sequence of the views bucket's stream: moves with every put and delete. */
  readonly viewsSeq: number | null;
  readonly deadLetters: number | null;
  /** Messages the slicer and hints consumers have not finished (null: a consumer is missing). */
  readonly pending: number | null;
  /** Services marked dirty in Postgres (the slicer's unreconciled work). */
  readonly dirty: number;
  /** Outbox rows not yet on SLICES. */
  readonly outbox: number;
  readonly slices: number;
  readonly hintedServices: number;
  readonly decidedServices: number;
  /** Counts above that are null because the server's value could not be true (shown as `?`). */
  readonly unknown?: readonly UnknownCount[];
  /** A consumer that could not be read and why (pending is then null, or unknown when the server could not answer). */
  readonly missingConsumer?: string;
  /** Consumers the server could not count for whose service has not applied its filter's last message (see pendingOf). */
  readonly behind?: string;
}

export interface ProbeDeps {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly db: Db;
  readonly layout: StackLayout;
  /** Health URLs of the slicers: their dirty marks live in memory and are read from /metrics. */
  readonly slicerUrls?: () => readonly (string | undefined)[];
  /**
   * Told of a count the server reported that cannot be true (e.g. a consumer's num_pending of
   * 2^64 − 1 after a restart). Default: one line on stderr per count, once per process.
   */
  readonly onImpossibleCount?: ImpossibleCountSink;
}

/** The default of ProbeDeps.onImpossibleCount: each count's first impossible value, on stderr. */
const reportOnce = onceEach((c) => void process.stderr.write(`${describeImpossibleCount(c)}\n`));

const UNKNOWN = 'unknown';
type Read = number | null | typeof UNKNOWN;

async function lastSeq(jsm: JetStreamManager, stream: string, onImpossible: ImpossibleCountSink): Promise<Read> {
  try {
    return checkedCount((await jsm.streams.info(stream)).state.last_seq, `stream ${stream} last_seq`, onImpossible) ?? UNKNOWN;
  } catch (err) {
    if (isApiError(err, STREAM_NOT_FOUND)) return null; // stream not found (yet)
    throw err;
  }
}

async function messages(jsm: JetStreamManager, stream: string, onImpossible: ImpossibleCountSink): Promise<Read> {
  try {
    return checkedCount((await jsm.streams.info(stream)).state.messages, `stream ${stream} messages`, onImpossible) ?? UNKNOWN;
  } catch (err) {
    if (isApiError(err, STREAM_NOT_FOUND)) return null;
    throw err;
  }
}

/**
 * The consumers' pending total. Null with `missing` (the consumer and why) when one does not
 * exist (yet: its service is starting) or its stream does not.
 *
 * A consumer the server cannot count for — a replicated consumer without a leader after a NATS
 * server's loss answers "JetStream system temporarily unavailable", for minutes at times on
 * 2.9.10, and a restarted server may report a num_pending of 2^64 − 1 — is judged by its
 * service's own record instead: caught up when its offset in consumer_offsets has reached the
 * last message of its filter, else `behind`. Only when that cannot be read either is the total
 * unknown (then the quiet period decides). Without this, a settle could end while a leaderless
 * consumer still owed its service a delete, and the checks after it would see the gap.
 */
async function pendingOf(jsm: JetStreamManager, db: Db, consumers: readonly WatchedConsumer[], onImpossible: ImpossibleCountSink): Promise<{ readonly read: Read; readonly missing?: string; readonly behind?: string }> {
  let total = 0;
  let unknown = false;
  let unanswered: string | undefined;
  const behind: string[] = [];
  for (const c of consumers) {
    let n: number | null;
    try {
      n = await pendingCount(jsm, c.stream, c.durable, onImpossible);
    } catch (err) {
      const what = `${c.stream}/${c.durable}: ${err instanceof Error ? err.message : String(err)}`;
      if (isApiError(err, CONSUMER_NOT_FOUND) || isApiError(err, STREAM_NOT_FOUND)) return { read: null, missing: what }; // consumer or stream not found
      unanswered ??= what;
      n = null;
    }
    if (n !== null) {
      total += n;
      continue;
    }
    const applied = await appliedToEnd(jsm, db, c);
    if (applied === undefined) unknown = true;
    else if (applied.offset < applied.last) behind.push(`${c.durable} applied up to ${applied.offset} of ${applied.last}`);
  }
  return {
    read: unknown ? UNKNOWN : total,
    ...(unanswered !== undefined && unknown ? { missing: unanswered } : {}),
    ...(behind.length > 0 ? { behind: behind.join(', ') } : {}),
  };
}

/** The offset `c`'s service recorded and the last sequence of its filter (0: none); undefined when either cannot be read. */
async function appliedToEnd(jsm: JetStreamManager, db: Db, c: WatchedConsumer): Promise<{ readonly offset: number; readonly last: number } | undefined> {
  try {
    const [last, offset] = await Promise.all([lastMessageOf(jsm, c.stream, c.filter), getOffset(db, c.offset)]);
    return { offset, last: last?.seq ?? 0 };
  } catch {
    return undefined;
  }
}

// Unreachable slicers count as 0: one still starting has not consumed anything either, and the
// consumers' pending counts keep a settle check honest meanwhile.
async function dirtyServices(urls: readonly (string | undefined)[]): Promise<number> {
  const counts = await Promise.all(urls.map((u) => scrapeMetric(u, 'slicemesh_slicer_dirty_services')));
  return counts.reduce<number>((n, c) => n + (c ?? 0), 0);
}

/** Reads everything BackboneReading holds; throws only when NATS or Postgres fail. */
export async function readBackbone(deps: ProbeDeps, consumers: readonly WatchedConsumer[]): Promise<BackboneReading> {
  const { jsm, db, layout } = deps;
  const n = layout.names;
  const onImpossible = deps.onImpossibleCount ?? reportOnce;
  const [kubeSeqRead, slicesSeqRead, viewsSeqRead, deadLettersRead, pendingOfConsumers, dirty, outbox, sliceCount, decisions] = await Promise.all([
    lastSeq(jsm, n.kube, onImpossible),
    lastSeq(jsm, n.slices, onImpossible),
    lastSeq(jsm, `KV_${n.views}`, onImpossible),
    messages(jsm, n.dlq, onImpossible),
    pendingOf(jsm, db, consumers, onImpossible),
    dirtyServices(deps.slicerUrls?.() ?? []),
    outboxBacklog(db, RELAY_NAME),
    countSlices(db, layout.cluster),
    loadDecisionFlags(db, layout.cluster),
  ]);
  const pendingRead = pendingOfConsumers.read;
  const key = (d: { namespace: string; service: string }): string => `${d.namespace}/${d.service}`;
  const reads = { kubeSeq: kubeSeqRead, slicesSeq: slicesSeqRead, viewsSeq: viewsSeqRead, deadLetters: deadLettersRead, pending: pendingRead };
  const unknown = (Object.keys(reads) as UnknownCount[]).filter((k) => reads[k] === UNKNOWN);
  const value = (r: Read): number | null => (r === UNKNOWN ? null : r);
  return {
    kubeSeq: value(kubeSeqRead), slicesSeq: value(slicesSeqRead), viewsSeq: value(viewsSeqRead), deadLetters: value(deadLettersRead), pending: value(pendingRead),
    dirty, outbox,
    slices: sliceCount,
    hintedServices: new Set(decisions.filter((d) => d.enabled).map(key)).size,
    decidedServices: new Set(decisions.map(key)).size,
    ...(unknown.length > 0 ? { unknown } : {}),
    ...(pendingOfConsumers.missing !== undefined ? { missingConsumer: pendingOfConsumers.missing } : {}),
    ...(pendingOfConsumers.behind !== undefined ? { behind: pendingOfConsumers.behind } : {}),
  };
}

/** Keys of this cluster in the views bucket; null when the bucket does not exist yet. */
export async function countViewKeys(deps: ProbeDeps): Promise<number | null> {
  let kv: KV;
  try {
    kv = await openKv(deps.nc, deps.layout.names.views);
  } catch {
    return null;
  }
  return (await kvKeys(kv, svcClusterFilter(deps.layout.cluster))).length;
}

/** Sum of every series of `metric` in a Prometheus text exposition; null when absent. */
export function sumMetric(text: string, metric: string): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue; // another metric sharing the prefix
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** Scrapes `<url>/metrics` and sums `metric`; null when unreachable or absent. */
export async function scrapeMetric(url: string | undefined, metric: string): Promise<number | null> {
  if (url === undefined) return null;
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? sumMetric(await res.text(), metric) : null;
  } catch {
    return null;
  }
}
