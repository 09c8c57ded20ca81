// The consume loop for processors that keep their offsets in Postgres (the slicer). It follows consumeLoop,
// with differences the slicer depends on (its offsets live in Postgres, so it must apply
// messages in stream order and restart from its own position after any trouble):
// - an abort that arrives while a pull is being set up still stops it (the shared loop
//   registers its abort listener after two awaits and would then wait for a message);
// - it hands over batches (each applied in one transaction by the caller), formed from what
//   arrived while the previous batch was handled;
// - a handler error ends the loop instead of nak'ing and moving on to later messages;
// - a message that arrives after the abort is nak'ed at once rather than left to the ack wait;
// - a delivery the client never received ends the loop (DeliveryGapError, below).

import type { ConsumerInfo, JetStreamClient } from '@nats-io/jetstream';
import type { ConsumedMessage, HandlerOutcome } from './consume.ts';
import { toConsumed } from './consume.ts';
import { watchConsumer } from './consumer-watchdog.ts';


export interface BatchConsumeOptions {
  readonly signal: AbortSignal;
  /** How long one pull request waits on the server, ms (at least 1000). Defaults to 5000. */
  readonly pollMs?: number;
  /** Most messages handed to the handler at once; the durable's max ack pending must be ≥ this. */
  readonly batch: number;
  /**
   * The durable's info as creating it returned: consuming starts from it without asking the
   * server again (a consumer info on a filtered consumer of a long stream costs the server a
   * scan; with 100k subjects in it, eight at once were seen to take 130-330 ms).
   */
  readonly info?: ConsumerInfo;
}

/**
 * Runs `handler` over batches of the durable's messages in delivery order until `signal` aborts.
 * Messages stream in continuously (one consume() keeps pull requests open, buffering up to
 * `batch`), and each batch is whatever arrived while the previous one was being handled — so a
 * lone change is handled at once, and under load the batches grow by themselves instead of the
 * loop paying a pull round trip per batch. The outcome applies to the whole batch (ack, term,
 * or nak with a delay). A handler that throws gets its batch and everything buffered nak'ed and
 * the loop rejects with its error: the caller restarts the durable at its own stored position
 * (restartDurableAt), so nothing pending on the server can be overtaken by a later message. A
 * durable the server stopped serving ends the loop the same way, with ConsumerStalledError
 * (consumer-watchdog.ts).
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
  const consumer = opts.info !== undefined && opts.info.stream_name === stream && opts.info.name === durable ? js.consumers.getConsumerFromInfo(opts.info) : await js.consumers.get(stream, durable);
  if (signal.aborted) return;
  // The consumer's info is at hand (cached by get, or given). The next delivery this loop may
  // take is the one after the ack floor: a delivery beyond it that nobody acknowledged went to
  // an earlier loop or nowhere, and would come back only after the ack wait, out of order.
  let expected = (await consumer.info(true)).ack_floor.consumer_seq + 1;
  if (signal.aborted) return;
  const messages = await consumer.consume({ max_messages: opts.batch, expires: Math.max(1000, opts.pollMs ?? 5000) });
  const buffer: Pulled[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let readError: unknown;
  const stop = (): void => void messages.stop();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  // Six pulls missed in a row (one every expiry) is a stall, as six missed heartbeats are.
  const watch = watchConsumer(stream, durable, messages.status(), (err) => {
    readError = err;
    stop();
  }, { silenceMs: 6 * Math.max(1000, opts.pollMs ?? 5000), probe: () => consumer.info() });
  const reader = (async () => {
    try {
      for await (const m of messages) {
        watch.alive();
        // Below the expected sequence is no loss: a consumer's new leader may deliver again what
        // its predecessor sent (the caller knows applied messages by their stream sequence).
        const got = m.info.deliverySequence;
        if (got > expected) {
          readError = new DeliveryGapError(`${stream}/${durable}: delivery ${got} arrived, ${expected}–${got - 1} never did (lost in flight); restart at the stored position`);
          m.nak();
          stop();
          break;
        }
        expected = got + 1;
        buffer.push(m);
        wake?.();
      }
    } catch (err) {
      readError = err;
    } finally {
      ended = true;
      wake?.();
    }
  })();
  try {
    for (;;) {
      if (buffer.length === 0) {
        if (ended) break;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        // Let the rest of what the same read delivered land in the buffer first.
        await new Promise<void>((resolve) => setImmediate(resolve));
        continue;
      }
      const msgs = buffer.splice(0, opts.batch);
      if (signal.aborted) {
        for (const m of msgs) m.nak();
        break;
      }
      const consumed = msgs.map(toConsumed);
      let outcome: HandlerOutcome;
      try {
        outcome = await watch.handling(handler(consumed));
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
    if (readError !== undefined && !signal.aborted) throw readError;
  } finally {
    watch.stop();
    signal.removeEventListener('abort', stop);
    stop();
    await reader;
    // Whatever arrived but was not handled goes back at once rather than after the ack wait.
    for (const m of buffer.splice(0)) m.nak();
  }
}

/**
 * The server delivered a message this client never received: the consumer's delivery sequence
 * skipped. It happens when a connection drops with deliveries in flight (a NATS server's kill in
 * the cluster campaign): the server counts them as delivered and sends them again only after
 * the ack wait, by which time a processor that keeps one offset per consumer has applied later
 * messages and takes the late one for a redelivery of something it applied. So the loop hands
 * over what came before the gap and then ends with this error; the caller restarts the durable
 * at its stored position, which delivers the missing message first.
 */
export class DeliveryGapError extends Error {
  override readonly name = 'DeliveryGapError';
}

type PullConsumer = Awaited<ReturnType<JetStreamClient['consumers']['get']>>;
type Pulled = Awaited<ReturnType<PullConsumer['consume']>> extends AsyncIterable<infer M> ? M : never;
