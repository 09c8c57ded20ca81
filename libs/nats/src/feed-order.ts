// The order of a shared feed's deliveries (see kv-feed.ts), kept apart from the I/O so that its
// rules can be tested on their own.
//
// One push consumer delivers a filter's messages to a plain subject that every watcher of the
// filter subscribes to. The server numbers those deliveries (the consumer sequence in each
// message's reply subject, and in an idle heartbeat's Nats-Last-Consumer header), so every
// watcher sees the same numbers in the same order. A watcher that was dropped as a slow consumer,
// or reconnected, or whose consumer was recreated, sees a number that does not follow its last
// one: it has missed deliveries and must read the bucket again.

/** A feed delivery's place in the stream and in the consumer's deliveries. */
export interface FeedPosition {
  readonly streamSeq: number;
  readonly consumerSeq: number;
}

/**
 * Parses a JetStream delivery's reply subject:
 * `$JS.ACK[.<domain>.<account hash>].<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<timestamp>.<pending>[.<token>]`.
 * Returns null for anything else (a plain message published to the feed's subject by someone).
 */
export function feedPositionOf(reply: string | undefined): FeedPosition | null {
  if (reply === undefined || !reply.startsWith('$JS.ACK.')) return null;
  // Read from the right without splitting (every delivery of every watcher passes here): the
  // last tokens are <stream seq>.<consumer seq>.<timestamp>.<pending>, then the domain form's token.
  let dots = 0;
  for (let i = 0; i < reply.length; i++) if (reply.charCodeAt(i) === 46) dots++;
  // 8 dots in the old form; 10 or 11 in the domain form (2.9 servers send the old one).
  const after = dots === 8 || dots === 10 ? 2 : dots === 11 ? 3 : -1; // tokens after the consumer seq
  if (after < 0) return null;
  let end = reply.length;
  for (let k = 0; k < after; k++) end = reply.lastIndexOf('.', end - 1);
  const cStart = reply.lastIndexOf('.', end - 1);
  const sStart = reply.lastIndexOf('.', cStart - 1);
  const streamSeq = Number(reply.slice(sStart + 1, cStart));
  const consumerSeq = Number(reply.slice(cStart + 1, end));
  if (!Number.isSafeInteger(streamSeq) || !Number.isSafeInteger(consumerSeq) || streamSeq < 1 || consumerSeq < 1) return null;
  return { streamSeq, consumerSeq };
}

/** What a delivery means for the watcher: in order, or proof that some were missed. */
export type FeedVerdict = 'in-order' | 'missed';

/**
 * The consumer sequence a watcher has seen last, and whether the next delivery or heartbeat
 * follows it. The first one seen sets the base: what was delivered before the watcher subscribed
 * is in the bucket it reads after subscribing.
 */
export class FeedOrder {
  #last: number | undefined;

  /** The last consumer sequence seen; undefined before the first. */
  get last(): number | undefined {
    return this.#last;
  }

  /** A message with consumer sequence `seq`: in order when it is the next one (or the first seen). */
  message(seq: number): FeedVerdict {
    const last = this.#last;
    this.#last = seq;
    return last === undefined || seq === last + 1 ? 'in-order' : 'missed';
  }

  /**
   * An idle heartbeat saying the consumer's last delivery was `lastSeq`: the watcher missed some
   * when it saw fewer, or when the consumer restarted its numbering (it saw more).
   */
  heartbeat(lastSeq: number): FeedVerdict {
    const last = this.#last;
    this.#last = lastSeq;
    return last === undefined || lastSeq === last ? 'in-order' : 'missed';
  }
}
