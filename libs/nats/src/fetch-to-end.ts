// Reading a filter of a stream to its end through a consumer, where "the end" is asked of the
// stream and not read from the consumer's pending count: nats-server 2.9 under-counts a filtered
// consumer's pending over a stream with interior deletes (a compacted KUBE, purged per subject).
// Measured on 2.9.10 after one compaction: an ordered consumer over one namespace reported 0
// pending with 5 to 75 matching messages still to come, differently on each read, and a
// non-ordered one 25 messages early — so a replay, a compactor or a count that stopped at
// `pending === 0` missed the newest messages. Pending stays a hint (0: check now); the stream's
// own "next message matching the filter" (STREAM.MSG.GET with next_by_subj) decides.

import type { Consumer, JetStreamManager, JsMsg, MsgRequest } from '@nats-io/jetstream';

/** A filter as a consumer takes it: none (every subject), one, or several. */
export type StreamFilter = string | readonly string[] | undefined;

/**
 * The sequence of the first message matching `filter` at or after `seq`, asked of the stream
 * itself; null when there is none.
 */
export async function nextSeqMatching(jsm: JetStreamManager, stream: string, filter: StreamFilter, seq: number): Promise<number | null> {
  const filters = filter === undefined ? ['>'] : typeof filter === 'string' ? [filter] : filter;
  let first: number | null = null;
  for (const f of filters) {
    // next_by_subj is served by nats-server 2.9 on STREAM.MSG.GET; the client types it only for direct gets.
    const m = await jsm.streams.getMessage(stream, { seq, next_by_subj: f } as unknown as MsgRequest);
    if (m !== null && (first === null || m.seq < first)) first = m.seq;
  }
  return first;
}

export interface FetchToEndOptions {
  readonly jsm: JetStreamManager;
  readonly stream: string;
  /** The consumer's filter. */
  readonly filter: StreamFilter;
  /** Where the consumer starts (default 1): nothing matching from here on means no fetch at all. */
  readonly fromSeq?: number;
  /** Stop at this sequence: messages above it are not yielded. Default: wherever the filter ends. */
  readonly toSeq?: number;
  /** Messages per fetch. */
  readonly batch: number;
  /** How long one fetch waits, ms (the client's minimum is 1000). */
  readonly expiresMs: number;
}

/**
 * The consumer's messages in stream order until no message matching the filter is left after the
 * last one (or the last one reached `toSeq`); also ends when a fetch brings nothing, and returns
 * at once, without waiting out a fetch, when nothing matches from `fromSeq` to `toSeq`. The
 * caller deletes the consumer.
 */
export async function* fetchToEnd(consumer: Consumer, o: FetchToEndOptions): AsyncGenerator<JsMsg, void, undefined> {
  const to = o.toSeq ?? Number.MAX_SAFE_INTEGER;
  const first = await nextSeqMatching(o.jsm, o.stream, o.filter, Math.max(1, o.fromSeq ?? 1));
  if (first === null || first > to) return;
  let knownAhead = first; // a matching message is known to exist at this sequence
  for (;;) {
    const batch = await consumer.fetch({ max_messages: o.batch, expires: Math.max(1000, o.expiresMs) });
    let received = 0;
    for await (const m of batch) {
      received++;
      if (m.seq > to) return;
      yield m;
      if (m.seq >= to) return;
      if (m.info.pending === 0 && m.seq >= knownAhead) {
        const next = await nextSeqMatching(o.jsm, o.stream, o.filter, m.seq + 1);
        if (next === null || next > to) return;
        knownAhead = next;
      }
    }
    if (received === 0) return;
  }
}
