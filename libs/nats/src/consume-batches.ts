// The consume loop for processors that keep their offsets in Postgres (the slicer). It follows consumeLoop,
// with differences the slicer depends on (its offsets live in Postgres, so it must apply
// messages in stream order and restart from its own position after any trouble):
// - an abort that arrives while a pull is being set up still stops it (the shared loop
//   registers its abort listener after two awaits and would then wait for a message);
// - it pulls one batch at a time, so no pull request is outstanding while a batch is
//   handled, and a backlog is handed over in batches (each applied in one transaction);
// - a handler error ends the loop instead of nak'ing and moving on to later messages;
// - a message that arrives after the abort is nak'ed at once rather than left to the ack wait.

import type { JetStreamClient } from '@nats-io/jetstream';
import type { ConsumedMessage, HandlerOutcome } from './consume.ts';

export interface BatchConsumeOptions {
  readonly signal: AbortSignal;
  /** How long one idle pull waits for a message, ms (at least 1000). Defaults to 5000. */
  readonly pollMs?: number;
  /** Most messages handed to the handler at once; the durable's max ack pending must be ≥ this. */
  readonly batch: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** How long to wait for the rest of a batch the server said is pending. */
const REST_OF_BATCH_MS = 2000;

/**
 * Runs `handler` over batches of the durable's messages in delivery order until `signal` aborts.
 * A batch is the first available message plus as many of the messages the server reports as
 * pending behind it as fit in `batch` — so a backlog is taken in large batches while a lone
 * change is handled without waiting for a batch to fill. The outcome applies to the whole batch
 * (ack, term, or nak with a delay). A handler that throws gets the batch nak'ed and the loop
 * rejects with its error: the caller restarts the durable at its own stored position
 * (restartDurableAt), so nothing pending on the server can be overtaken by a later message.
 */
export async function consumeBatchesInOrder(
  js: JetStreamClient,
  stream: string,
  durable: string,
  handler: (msgs: ConsumedMessage[]) => Promise<HandlerOutcome>,
  opts: BatchConsumeOptions,
): Promise<void> {
  const { signal } = opts;
  if (signal.aborted) return;
  const consumer = await js.consumers.get(stream, durable);
  while (!signal.aborted) {
    const first = await pull(consumer, 1, opts.pollMs ?? 5000, signal);
    const head = first[0];
    if (head === undefined) continue;
    const more = Math.min(head.info.pending, opts.batch - 1);
    const msgs = more > 0 && !signal.aborted ? [head, ...(await pull(consumer, more, REST_OF_BATCH_MS, signal))] : first;
    if (signal.aborted) {
      for (const m of msgs) m.nak();
      break;
    }
    const consumed = msgs.map((m) => toConsumed(m.subject, m.seq, m.data, m.redelivered, m.info.deliveryCount, m.headers));
    let outcome: HandlerOutcome;
    try {
      outcome = await handler(consumed);
    } catch (err) {
      for (const m of msgs) m.nak();
      throw err;
    }
    for (const m of msgs) {
      if (outcome === 'ack') m.ack();
      else if (outcome === 'term') m.term();
      else m.nak(outcome.nakDelayMs);
    }
  }
}

type PullConsumer = Awaited<ReturnType<JetStreamClient['consumers']['get']>>;
type Pulled = Awaited<ReturnType<PullConsumer['fetch']>> extends AsyncIterable<infer M> ? M : never;

// One pull request for up to `n` messages; an abort closes it at once, also when it arrives
// while the request is being set up.
async function pull(consumer: PullConsumer, n: number, expires: number, signal: AbortSignal): Promise<Pulled[]> {
  const req = await consumer.fetch({ max_messages: n, expires });
  const stop = (): void => void req.close();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  const out: Pulled[] = [];
  try {
    for await (const m of req) out.push(m);
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return out;
}

function toConsumed(
  subject: string,
  seq: number,
  raw: Uint8Array,
  redelivered: boolean,
  deliveryCount: number,
  h: { keys(): string[]; get(k: string): string } | undefined,
): ConsumedMessage {
  const headers: Record<string, string> = {};
  if (h) for (const k of h.keys()) headers[k] = h.get(k);
  const base = { subject, seq, raw, redelivered, deliveryCount, headers };
  try {
    return { ...base, data: JSON.parse(utf8.decode(raw)) as unknown };
  } catch (err) {
    return { ...base, data: undefined, parseError: err instanceof Error ? err.message : String(err) };
  }
}
