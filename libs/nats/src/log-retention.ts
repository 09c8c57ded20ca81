// Bounding a stream that keeps everything (KUBE): the reads a compactor needs to decide what may
// go — the last message per subject, the messages a filter holds from a sequence on, where every
// durable consumer of the stream stands — and the purge itself (a filter and a sequence: every
// message of the filter below it goes). The decisions are the caller's; these are the NATS calls.

import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { fetchToEnd, nextSeqMatching } from './fetch-to-end.ts';

/** The last message of one subject: its sequence and when the stream stored it (ms since the epoch). */
export interface SubjectTail {
  readonly seq: number;
  readonly timeMs: number;
}

const FETCH_BATCH = 1000;

type ConsumerConfig = Parameters<JetStreamManager['consumers']['add']>[1];

/** An ephemeral pull consumer the server drops by itself a minute after this process stopped using it. */
function ephemeral(filter: string, extra: Partial<ConsumerConfig>): ConsumerConfig {
  return { filter_subject: filter, ack_policy: AckPolicy.None, mem_storage: true, inactive_threshold: nanos(60_000), ...extra } as ConsumerConfig;
}

/** One message of a last-per-subject read: its subject, sequence, store time and (unless headersOnly) body. */
export interface LastMessage {
  readonly subject: string;
  readonly seq: number;
  readonly timeMs: number;
  /** Empty with headersOnly. */
  readonly data: Uint8Array;
}

/**
 * Visits the last message of every subject matching `filter`, in stream order, through an
 * ephemeral consumer deleted afterwards (and by the server a minute after this process stops).
 * With headersOnly the bodies are not read. Messages purged meanwhile are skipped.
 */
export async function forEachLastPerSubject(
  jsm: JetStreamManager,
  js: JetStreamClient,
  stream: string,
  filter: string,
  opts: { readonly headersOnly: boolean },
  visit: (m: LastMessage) => void,
): Promise<void> {
  const info = await jsm.consumers.add(stream, ephemeral(filter, { deliver_policy: DeliverPolicy.LastPerSubject, ...(opts.headersOnly ? { headers_only: true } : {}) }));
  try {
    const consumer = await js.consumers.get(stream, info.name);
    // Delivered in stream order, so once nothing matches after a message every subject's last one has come.
    for await (const m of fetchToEnd(consumer, { jsm, stream, filter, batch: FETCH_BATCH, expiresMs: 5000 })) {
      visit({ subject: m.subject, seq: m.seq, timeMs: Math.floor(m.info.timestampNanos / 1_000_000), data: m.data });
    }
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => false);
  }
}

/**
 * The last message of one `subject` (its sequence, store time and body), or undefined when the
 * stream holds none of it. One direct request; other failures (timeouts, refusals) are thrown.
 */
export async function lastMessageOf(jsm: JetStreamManager, stream: string, subject: string): Promise<LastMessage | undefined> {
  const m = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  return m === null ? undefined : { subject: m.subject, seq: m.seq, timeMs: m.time.getTime(), data: m.data };
}

/**
 * The last message per subject matching `filter` (headers only: the bodies are not read), by
 * subject. Empty when the filter holds nothing.
 */
export async function lastPerSubject(jsm: JetStreamManager, js: JetStreamClient, stream: string, filter: string): Promise<Map<string, SubjectTail>> {
  const out = new Map<string, SubjectTail>();
  await forEachLastPerSubject(jsm, js, stream, filter, { headersOnly: true }, (m) => out.set(m.subject, { seq: m.seq, timeMs: m.timeMs }));
  return out;
}

/**
 * How many messages matching `filter` the stream holds at or after `fromSeq` (1: all of them),
 * counted by reading their headers: the consumer's own num_pending was seen to underflow for a
 * start sequence past the filter's last message, and to under-count after purges (fetch-to-end.ts).
 */
export async function countFrom(jsm: JetStreamManager, js: JetStreamClient, stream: string, filter: string, fromSeq: number): Promise<number> {
  const deliver = fromSeq <= 1 ? { deliver_policy: DeliverPolicy.All } : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromSeq };
  const info = await jsm.consumers.add(stream, ephemeral(filter, { ...deliver, headers_only: true }));
  let n = 0;
  try {
    const consumer = await js.consumers.get(stream, info.name);
    for await (const _m of fetchToEnd(consumer, { jsm, stream, filter, fromSeq, batch: FETCH_BATCH, expiresMs: 1000 })) n++;
  } finally {
    await jsm.consumers.delete(stream, info.name).catch(() => false);
  }
  return n;
}

/** Message counts per subject matching `filter`. */
export async function subjectCounts(jsm: JetStreamManager, stream: string, filter: string): Promise<Map<string, number>> {
  const info = await jsm.streams.info(stream, { subjects_filter: filter });
  return new Map(Object.entries(info.state.subjects ?? {}));
}

/** One stored message, read by sequence. */
export async function storedMessage(jsm: JetStreamManager, stream: string, seq: number): Promise<{ readonly subject: string; readonly seq: number; readonly data: Uint8Array; readonly timeMs: number }> {
  const m = await jsm.streams.getMessage(stream, { seq });
  if (m === null) throw new Error(`${stream}: message ${seq} is gone`);
  return { subject: m.subject, seq: m.seq, data: m.data, timeMs: m.time.getTime() };
}

/** A durable consumer of a stream: its filters and the sequence below which it acknowledged everything. */
export interface DurablePosition {
  readonly durable: string;
  /** Its filter subjects; ['>'] when it has none (it reads the whole stream). */
  readonly filters: readonly string[];
  /** Every message of its filters at or below this sequence is acknowledged. */
  readonly ackFloor: number;
}

/** Every durable consumer of `stream` with its position (ephemeral consumers are left out). */
export async function durablePositions(jsm: JetStreamManager, stream: string): Promise<DurablePosition[]> {
  const out: DurablePosition[] = [];
  for await (const c of jsm.consumers.list(stream)) {
    const durable = c.config.durable_name;
    if (durable === undefined || durable === '') continue;
    const filters = c.config.filter_subjects ?? (c.config.filter_subject ? [c.config.filter_subject] : ['>']);
    // Nothing undelivered and nothing unacknowledged: everything its filters matched so far is
    // behind it, whatever its ack floor says (a filter that never matched a message, such as
    // another controller's slices in a partition without any, leaves the floor at 0 for good).
    // The pending count alone is not trusted (it under-counts after purges, fetch-to-end.ts): the
    // stream must hold nothing of its filters past what it was delivered.
    const caughtUp = c.num_pending === 0 && c.num_ack_pending === 0 && (await nextSeqMatching(jsm, stream, c.config.filter_subjects ?? c.config.filter_subject, c.delivered.stream_seq + 1)) === null;
    out.push({ durable, filters: filters.length === 0 ? ['>'] : filters, ackFloor: caughtUp ? Number.MAX_SAFE_INTEGER : c.ack_floor.stream_seq });
  }
  return out;
}

/**
 * Whether some subject matches both filters (`*` one token, `>` one or more at the end), e.g.
 * `kube.c.*.service.>` and `kube.c.0.>` do, `kube.c.0.>` and `kube.c.1.>` do not.
 */
export function filtersOverlap(a: string, b: string): boolean {
  const x = a.split('.');
  const y = b.split('.');
  for (let i = 0; ; i++) {
    const s = x[i];
    const t = y[i];
    if (s === '>' || t === '>') return s !== undefined && t !== undefined;
    if (s === undefined || t === undefined) return s === t;
    if (s !== '*' && t !== '*' && s !== t) return false;
  }
}

/**
 * Removes the messages matching `filter` with a sequence below `keepFrom` (JetStream purge with a
 * filter and `seq`); returns how many went. A `keepFrom` ≤ 1 removes nothing and asks nothing.
 * Not for a replicated stream on nats-server 2.9 (see streamShape).
 */
export async function purgeBelow(jsm: JetStreamManager, stream: string, filter: string, keepFrom: number): Promise<number> {
  if (keepFrom <= 1) return 0;
  const r = await jsm.streams.purge(stream, { filter, seq: keepFrom });
  return r.purged;
}

/**
 * How many replicas a stream has, and the first and last sequence it holds (first > last when it
 * is empty), from one stream info. A compactor purges only a stream of one replica: on
 * nats-server 2.9.10 the replicas of a 3-replica KUBE diverged once purges (filtered purges, or
 * deletes one message at a time) met a server killed and restarted — measured in the NATS-cluster
 * fault campaign, where afterwards the replicas held different first or last sequences and one
 * had lost messages of a scope nobody purged; the same campaign without purges kept them identical.
 */
export async function streamShape(jsm: JetStreamManager, stream: string): Promise<{ readonly replicas: number; readonly first: number; readonly last: number }> {
  const { config, state } = await jsm.streams.info(stream);
  return { replicas: config.num_replicas ?? 1, first: state.first_seq, last: state.last_seq };
}
