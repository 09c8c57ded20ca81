// Durable pull consumers: declare one idempotently, run a handler over it until aborted, and
// tell whether it has caught up.

import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import type { ConsumerConfig, ConsumerInfo, JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { watchConsumer } from './consumer-watchdog.ts';
import type { ParsedBody } from './json-body.ts';
import { parseJsonBody } from './json-body.ts';
import { ConsumerConflictError } from './errors.ts';
import { isApiError } from './streams.ts';
import { checkedCount, sumCounts } from './counts.ts';
import type { ImpossibleCountSink } from './counts.ts';

/** JetStream API error code: consumer not found. */
export const CONSUMER_NOT_FOUND = 10014;

export type DeliverFrom = 'all' | 'new' | 'last' | 'last_per_subject';

export interface DurableOptions {
  /** Durable name: [A-Za-z0-9_-] only. */
  readonly durable: string;
  /** The one filter subject (nats-server 2.9 allows one), e.g. kubePartitionFilter(...). */
  readonly filterSubject: string;
  /** Time the server waits for an ack before redelivering, ms. Defaults to 30_000. */
  readonly ackWaitMs?: number;
  /** Deliveries before the server gives up on a message; -1 = unlimited. Defaults to -1. */
  readonly maxDeliver?: number;
  /** Where a new consumer starts. Defaults to 'all'. Cannot change later (ConsumerConflictError). */
  readonly deliverPolicy?: DeliverFrom;
  /** Unacked messages in flight; 1 keeps strict order across naks. Defaults to 1000. */
  readonly maxAckPending?: number;
}

const DELIVER: Readonly<Record<DeliverFrom, DeliverPolicy>> = {
  all: DeliverPolicy.All,
  new: DeliverPolicy.New,
  last: DeliverPolicy.Last,
  last_per_subject: DeliverPolicy.LastPerSubject,
};

/**
 * Creates the durable (explicit acks) or updates its ack wait, max deliver and max ack
 * pending. Throws ConsumerConflictError if it exists with another filter subject or deliver
 * policy: those define what it has consumed and are not changed silently.
 */
export async function ensureDurable(jsm: JetStreamManager, stream: string, opts: DurableOptions): Promise<ConsumerInfo> {
  const want: Partial<ConsumerConfig> = {
    durable_name: opts.durable,
    filter_subject: opts.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DELIVER[opts.deliverPolicy ?? 'all'],
    ack_wait: nanos(opts.ackWaitMs ?? 30_000),
    max_deliver: opts.maxDeliver ?? -1,
    max_ack_pending: opts.maxAckPending ?? 1000,
  };
  let info: ConsumerInfo;
  try {
    info = await jsm.consumers.info(stream, opts.durable);
  } catch (err) {
    if (!isApiError(err, CONSUMER_NOT_FOUND)) throw err;
    return jsm.consumers.add(stream, want);
  }
  const have = info.config;
  if ((have.filter_subject ?? '') !== want.filter_subject) {
    throw new ConsumerConflictError(stream, opts.durable, 'filter_subject', have.filter_subject, want.filter_subject);
  }
  if (have.deliver_policy !== want.deliver_policy) {
    throw new ConsumerConflictError(stream, opts.durable, 'deliver_policy', have.deliver_policy, want.deliver_policy);
  }
  if (have.ack_wait === want.ack_wait && have.max_deliver === want.max_deliver && have.max_ack_pending === want.max_ack_pending) return info;
  return jsm.consumers.update(stream, opts.durable, { ack_wait: want.ack_wait, max_deliver: want.max_deliver, max_ack_pending: want.max_ack_pending });
}

/**
 * Re-creates the durable so that its next delivery is stream sequence `startSeq` (and nothing
 * delivered earlier is pending any more). For consumers whose applied position lives in the
 * caller's own store (e.g. a Postgres offset written in the same transaction as the effects):
 * restarting from that position after a crash or an error means a message left pending on the
 * server can never be overtaken by a later one.
 */
export async function restartDurableAt(jsm: JetStreamManager, stream: string, opts: DurableOptions, startSeq: number): Promise<ConsumerInfo> {
  try {
    await jsm.consumers.delete(stream, opts.durable);
  } catch (err) {
    if (!isApiError(err, CONSUMER_NOT_FOUND)) throw err;
  }
  return jsm.consumers.add(stream, {
    durable_name: opts.durable,
    filter_subject: opts.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(1, startSeq),
    ack_wait: nanos(opts.ackWaitMs ?? 30_000),
    max_deliver: opts.maxDeliver ?? -1,
    max_ack_pending: opts.maxAckPending ?? 1000,
  });
}

/** A message as handed to a handler: parsed, with no NATS types leaking out. */
export interface ConsumedMessage {
  readonly subject: string;
  /** Stream sequence. */
  readonly seq: number;
  /** Parsed JSON body (parsed on first read); undefined when the body is not JSON (see parseError). */
  readonly data: unknown;
  /** Set when the body is not valid JSON: dead-letter it (with `raw`) and return 'term'. */
  readonly parseError?: string;
  readonly raw: Uint8Array;
  readonly redelivered: boolean;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  /** Message headers (first value of each), e.g. 'Nats-Msg-Id'. */
  readonly headers: Readonly<Record<string, string>>;
}

/** 'ack' = done; 'term' = never redeliver; nakDelayMs = redeliver after the delay. */
export type HandlerOutcome = 'ack' | 'term' | { readonly nakDelayMs: number };

export interface ConsumeLoopOptions {
  /** Stops the loop; the message being handled finishes first. */
  readonly signal: AbortSignal;
  /** Messages pulled per request. Defaults to 100. */
  readonly batch?: number;
  /**
   * Called when the handler throws; the message is then nak'ed with a delay that doubles per
   * delivery from 500 ms up to 30 s (so a throwing handler means "retry with backoff").
   */
  readonly onError?: (err: unknown, msg: ConsumedMessage) => void;
}

/** Redelivery delay after a thrown error, by delivery count (1 → 500 ms ... capped at 30 s). */
export function errorNakDelayMs(deliveryCount: number): number {
  const n = deliveryCount >= 1 ? Math.floor(deliveryCount) : 1; // NaN and <1 count as the first
  return Math.min(30_000, 500 * 2 ** Math.min(n - 1, 16));
}

/**
 * Runs `handler` over the durable, one message at a time in delivery order, until `signal`
 * aborts; resolves then. Messages pulled but not yet handled when it stops stay unacked and are
 * redelivered after the ack wait. Returns at once if the signal is already aborted; rejects if
 * the durable does not exist (call ensureDurable first), and with ConsumerStalledError when the
 * server stops serving it (consumer-watchdog.ts: the caller ensures the durable and runs again).
 */
export async function consumeLoop(
  js: JetStreamClient,
  stream: string,
  durable: string,
  handler: (msg: ConsumedMessage) => Promise<HandlerOutcome>,
  opts: ConsumeLoopOptions,
): Promise<void> {
  const { signal } = opts;
  if (signal.aborted) return;
  const consumer = await js.consumers.get(stream, durable);
  const messages = await consumer.consume({ max_messages: opts.batch ?? 100 });
  const stop = () => void messages.close();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop(); // aborted during the awaits above: the listener came too late
  let stalled: Error | undefined;
  // The client pulls again every 30 s (its default expiry) while idle: silence means three missed.
  const watch = watchConsumer(stream, durable, messages.status(), (err) => {
    stalled = err;
    stop();
  }, { silenceMs: 90_000, probe: () => consumer.info() });
  try {
    for await (const m of messages) {
      watch.alive();
      if (signal.aborted) break;
      const msg = toConsumed(m);
      let outcome: HandlerOutcome;
      try {
        outcome = await watch.handling(handler(msg));
      } catch (err) {
        opts.onError?.(err, msg);
        outcome = { nakDelayMs: errorNakDelayMs(msg.deliveryCount) };
      }
      if (outcome === 'ack') m.ack();
      else if (outcome === 'term') m.term();
      else m.nak(outcome.nakDelayMs);
    }
  } finally {
    watch.stop();
    signal.removeEventListener('abort', stop);
    await messages.close();
  }
  if (stalled !== undefined && !signal.aborted) throw stalled;
}

/** A delivered message as handlers see it: headers as a record, the body parsed as JSON (or the parse error). */
export function toConsumed(m: JsMsg): ConsumedMessage {
  const headers: Record<string, string> = {};
  if (m.headers) for (const k of m.headers.keys()) headers[k] = m.headers.get(k);
  // The body is parsed on first read of `data` or `parseError`, once: a handler that can tell
  // from the subject alone that a message is not its own (the hints service's SLICES consumers,
  // one per partition, each see every partition's changes) never pays for its JSON.
  let body: ParsedBody | undefined;
  const parsed = (): ParsedBody => (body ??= parseJsonBody(m.data));
  return {
    subject: m.subject,
    seq: m.seq,
    raw: m.data,
    redelivered: m.redelivered,
    deliveryCount: m.info.deliveryCount,
    headers,
    get data(): unknown {
      const b = parsed();
      return b.ok ? b.value : undefined;
    },
    get parseError(): string | undefined {
      const b = parsed();
      return b.ok ? undefined : b.reason;
    },
  };
}

/**
 * Messages the durable still has to finish: not yet delivered (num_pending) plus delivered but
 * unacked (num_ack_pending). 0 means caught up with the stream as of this call (readiness).
 * null when the server reports a count that cannot be true (e.g. num_pending 2^64 − 1 after a
 * restart): unknown, told to `onImpossible` (wrap it in onceEach to log it once).
 */
export async function pendingCount(jsm: JetStreamManager, stream: string, durable: string, onImpossible?: ImpossibleCountSink): Promise<number | null> {
  const info = await jsm.consumers.info(stream, durable);
  const what = `consumer ${stream}/${durable}`;
  return sumCounts([checkedCount(info.num_pending, `${what} num_pending`, onImpossible), checkedCount(info.num_ack_pending, `${what} num_ack_pending`, onImpossible)]);
}
