// Reading a stream back (the `log` commands, the replay check): messages of one filter between two
// sequences, in order, through an ordered ephemeral consumer — no durable state is left behind.

import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { DeliverPolicy } from '@nats-io/jetstream';
import { fetchToEnd } from './fetch-to-end.ts';
import { parseJsonBody } from './json-body.ts';

/** One stored message. */
export interface StoredMessage {
  readonly seq: number;
  readonly subject: string;
  /** RFC 3339 (millisecond precision): when the stream stored it. */
  readonly time: string;
  /** Parsed JSON; undefined with parseError (and the text in `raw`) when the body is not JSON. */
  readonly data: unknown;
  readonly parseError?: string;
  readonly raw?: string;
}

const lenient = new TextDecoder('utf-8');

// Invalid UTF-8 is a parse error (as for every consumer of the log), its text shown with U+FFFD.
function storedOf(seq: number, subject: string, time: Date, bytes: Uint8Array): StoredMessage {
  const body = parseJsonBody(bytes);
  if (body.ok) return { seq, subject, time: time.toISOString(), data: body.value };
  return { seq, subject, time: time.toISOString(), data: undefined, parseError: body.reason, raw: lenient.decode(bytes) };
}

export interface ReadRangeOptions {
  /** Subject filter(s); default every subject of the stream. */
  readonly filter?: string | readonly string[];
  /** First sequence read (default 1). */
  readonly fromSeq?: number;
  /** Last sequence read (default: whatever the stream holds when reading starts). */
  readonly toSeq?: number;
  /** Messages per fetch. Default 1000. */
  readonly batch?: number;
}

/** Messages with fromSeq ≤ seq ≤ toSeq matching the filter, in stream order. */
export async function* readStreamRange(js: JetStreamClient, stream: string, opts: ReadRangeOptions = {}): AsyncGenerator<StoredMessage> {
  const from = Math.max(1, opts.fromSeq ?? 1);
  const to = opts.toSeq ?? Number.MAX_SAFE_INTEGER;
  if (to < from) return;
  const filter = opts.filter === undefined ? undefined : typeof opts.filter === 'string' ? opts.filter : [...opts.filter];
  const consumer = await js.consumers.get(stream, {
    ...(filter !== undefined ? { filter_subjects: filter } : {}),
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: from,
  });
  try {
    const jsm = await js.jetstreamManager(false);
    for await (const m of fetchToEnd(consumer, { jsm, stream, filter, fromSeq: from, toSeq: to, batch: opts.batch ?? 1000, expiresMs: 1000 })) {
      yield storedOf(m.seq, m.subject, m.time, m.data);
    }
  } finally {
    await consumer.delete().catch(() => false);
  }
}

/** The first message matching `filter` with seq ≥ `seq`; null when none. */
export async function firstMessageFrom(js: JetStreamClient, stream: string, filter: string | readonly string[] | undefined, seq: number): Promise<StoredMessage | null> {
  for await (const m of readStreamRange(js, stream, { ...(filter !== undefined ? { filter } : {}), fromSeq: seq, batch: 1 })) return m;
  return null;
}

/** The stream's first and last sequence; null when it does not exist. */
export async function streamSeqBounds(jsm: JetStreamManager, stream: string): Promise<{ readonly first: number; readonly last: number; readonly messages: number } | null> {
  try {
    const info = await jsm.streams.info(stream);
    return { first: info.state.first_seq, last: info.state.last_seq, messages: info.state.messages };
  } catch (err) {
    if (err instanceof Error && /stream not found/i.test(err.message)) return null;
    throw err;
  }
}
