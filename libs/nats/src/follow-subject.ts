// Following one subject of a stream as a level: first the last message stored for it (if any),
// then every new one. For readers that only need the latest state of one object — a proxy agent
// and its own Node in KUBE — without a durable, and without reading the object's history.
//
// An ephemeral pull consumer with deliver policy `last_per_subject` and no acks (nats-server 2.9:
// one filter subject). Not the client's ordered consumer: when that one is recreated before it
// delivered anything it starts again at stream sequence 1 and replays every old version. Here a
// failure ends the iteration instead, and the caller follows again: a fresh consumer starts at
// the subject's last message, which is exactly the state to resume from.

import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { jetstream, jetstreamManager } from './js-domain.ts';
import type { ConsumerConfig } from '@nats-io/jetstream';
import { nanos, nuid } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ConsumedMessage } from './consume.ts';
import { toConsumed } from './consume.ts';

export interface FollowSubjectOptions {
  /** The stream holding `subject`. */
  readonly stream: string;
  /** The subject (or one filter) to follow, e.g. kubeNodeSubject(...). */
  readonly subject: string;
  /**
   * Called once, when the last stored message (if any) has been yielded and handled, or before
   * anything is yielded when the subject holds none. Messages after it are new.
   */
  readonly onInitialDone?: () => void;
  /** Ends the iteration. */
  readonly signal?: AbortSignal;
  /** The server removes the consumer this long after the process stops asking, ms. Defaults to 60_000. */
  readonly inactiveMs?: number;
  /**
   * How long one pull request stays open, ms (at least 1000); a lost consumer is noticed after
   * two missed heartbeats, each half of this. Defaults to 30_000.
   */
  readonly pollMs?: number;
  /**
   * Delete the consumer at the end (the default). False leaves that to the server (inactiveMs):
   * for a role that may create consumers but not delete them, like the agents (permissions.ts).
   */
  readonly deleteOnClose?: boolean;
}

/**
 * Yields the last message of `subject` (none when it has none), then every new one, as parsed
 * JSON, until `signal` aborts. Rejects when the stream is missing or the server lost the
 * consumer (follow again to resume from the last message); a message stored between the check
 * for an empty subject and the consumer's start arrives as a new one, which is harmless for a
 * reader of levels.
 *
 * @example
 * for await (const m of followSubject(nc, { stream: 'KUBE', subject: kubeNodeSubject({ cluster, name }), onInitialDone, signal })) apply(m);
 */
export async function* followSubject(nc: NatsConnection, opts: FollowSubjectOptions): AsyncGenerator<ConsumedMessage, void, undefined> {
  const { signal } = opts;
  if (signal?.aborted) return;
  const jsm = await jetstreamManager(nc);
  let initialDone = false;
  const markDone = () => {
    if (!initialDone) {
      initialDone = true;
      opts.onInitialDone?.();
    }
  };
  const info = await jsm.streams.info(opts.stream, { subjects_filter: opts.subject });
  const stored = Object.keys(info.state.subjects ?? {}).length;
  const config: Partial<ConsumerConfig> = {
    // Named, so the client creates it on CONSUMER.CREATE.<stream>.<name>.<filter>: a subject
    // that permissions can restrict to the subjects a role may follow (permissions.ts).
    name: `follow_${nuid.next()}`,
    filter_subject: opts.subject,
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.None,
    mem_storage: true,
    inactive_threshold: nanos(opts.inactiveMs ?? 60_000),
  };
  const ci = await jsm.consumers.add(opts.stream, config);
  try {
    if (signal?.aborted) return;
    const consumer = await jetstream(nc).consumers.get(opts.stream, ci.name);
    // A consumer or stream the server no longer has ends the iteration with an error instead of
    // being waited for.
    const messages = await consumer.consume({ max_messages: 100, expires: Math.max(1000, opts.pollMs ?? 30_000), abort_on_missing_resource: true });
    const stop = () => void messages.stop();
    signal?.addEventListener('abort', stop, { once: true });
    if (signal?.aborted) stop();
    try {
      if (stored === 0) markDone();
      for await (const m of messages) {
        if (signal?.aborted) break;
        const last = m.info.pending === 0;
        yield toConsumed(m);
        if (last) markDone();
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      stop();
    }
  } finally {
    if (opts.deleteOnClose !== false) await jsm.consumers.delete(opts.stream, ci.name).catch(() => false);
  }
}
