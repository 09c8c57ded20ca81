// A KV watch that many processes share: kvWatchJson's contract (the current values, a mark when
// they are in, then every change) at the cost of one JetStream delivery per change for all the
// watchers of a filter together, instead of one per watcher.
//
// Why: a KV watch is an ordered push consumer per watcher. With a thousand proxy agents on a
// zone's views the server did a thousand JetStream deliveries per view write, and spent a core on
// it (the fan-out bench, issue 10). Here one push consumer per filter (named after the filter and
// its settings, created by whichever watcher comes first, removed by the server once nobody
// listens) delivers to a plain subject below kvFeedSubjectPrefix, and the server copies each
// delivery to every subscriber as it does any NATS message.
//
// A watcher subscribes first, then reads the filter's current values through an ordinary
// watch's initial set (which covers everything delivered before it subscribed), then applies the
// feed. It keeps each key's revision, so a delivery older than what it read is skipped. Plain
// NATS may drop a slow subscriber's messages, and a consumer can be lost with its server: the
// consumer numbers its deliveries (FeedOrder), so a watcher that sees a number out of order, or
// hears nothing for three heartbeats from a consumer the server no longer has, reads the bucket
// again and yields only what differs.

import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, JetStreamApiError } from '@nats-io/jetstream';
import type { ConsumerConfig, JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { Bucket } from '@nats-io/kv';
import { nanos } from '@nats-io/transport-node';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { FeedOrder, feedPositionOf } from './feed-order.ts';
import type { KvChange, KvWatchOptions } from './kv.ts';
import { kvWatchJson } from './kv.ts';

export interface KvFeedOptions extends KvWatchOptions {
  /** One key or wildcard filter, e.g. zoneViewsFilter(...). */
  readonly key: string;
  /** Where the feeds deliver: kvFeedSubjectPrefix(bucket, cluster). */
  readonly subjectPrefix: string;
  /** The consumer's idle heartbeat, ms; silence for three of them means the feed is lost. Defaults to 2000. */
  readonly heartbeatMs?: number;
  /** The server removes a feed nobody has listened to for this long, ms. Defaults to 300_000. */
  readonly inactiveMs?: number;
  /** Called when the watcher read the bucket again, with the reason in words and its kind. */
  readonly onResync?: (why: string, kind: FeedResyncKind) => void;
}

/** Why a watcher read the bucket again: a lost feed, or deliveries its numbering says it missed. */
export type FeedResyncKind = 'silent' | 'heartbeat-ahead' | 'out-of-order';

/** A feed's consumer and subject: every watcher with the same filter and settings uses the same. */
export interface FeedAddress {
  readonly consumer: string;
  readonly subject: string;
  readonly config: Partial<ConsumerConfig>;
}

/** The consumer name, subject and configuration of the feed of `filter` in `stream` under `prefix`. */
export function feedAddress(stream: string, filterSubject: string, prefix: string, heartbeatMs: number, inactiveMs: number): FeedAddress {
  // Named after everything in its configuration, so that watchers with other settings (another
  // release, say) get a feed of their own rather than a clash or a second set of numbers on one subject.
  const id = createHash('sha256').update(JSON.stringify([stream, filterSubject, prefix, heartbeatMs, inactiveMs])).digest('hex').slice(0, 20);
  const subject = `${prefix}.${id}`;
  return {
    consumer: `feed-${id}`,
    subject,
    config: {
      name: `feed-${id}`,
      filter_subject: filterSubject,
      deliver_subject: subject,
      deliver_policy: DeliverPolicy.New,
      ack_policy: AckPolicy.None,
      idle_heartbeat: nanos(heartbeatMs),
      inactive_threshold: nanos(inactiveMs),
      mem_storage: true,
    },
  };
}

/** Creates the feed's consumer unless it exists; two watchers creating it at once both succeed. */
async function ensureFeed(jsm: JetStreamManager, stream: string, feed: FeedAddress): Promise<void> {
  const exists = await jsm.consumers.info(stream, feed.consumer).then(
    () => true,
    () => false,
  );
  // The same configuration again is not an error (nats-server answers with the existing consumer).
  if (!exists) await jsm.consumers.add(stream, feed.config);
}

/**
 * Whether the feed's consumer may still be delivering. The server saying no (the consumer or its
 * stream is gone, or any other refusal) is a no; a server too busy to answer in time is not a
 * lost feed, and reading the bucket again would only add to its load.
 */
async function feedExists(jsm: JetStreamManager, stream: string, feed: FeedAddress): Promise<boolean> {
  try {
    await jsm.consumers.info(stream, feed.consumer);
    return true;
  } catch (err) {
    return !(err instanceof JetStreamApiError);
  }
}

/**
 * Silences of three heartbeats a watcher sits out while its feed's consumer exists, before it
 * reads the bucket again anyway (about 30 s with the default heartbeat).
 */
const SILENCES_TOLERATED = 5;

/** A snapshot of the filter's keys: each key's latest entry (delete markers included). */
async function readCurrent(kv: KV, key: string, signal: AbortSignal | undefined): Promise<KvChange[]> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  const out: KvChange[] = [];
  try {
    for await (const c of kvWatchJson(kv, { key, signal: stop.signal, onInitialDone: () => stop.abort() })) out.push(c);
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  return out;
}

/** The KV entry `key` as the feed delivers it, parsed as kvWatchJson parses it. */
function changeOf(m: Msg, key: string, revision: number): KvChange {
  const op = m.headers?.get('KV-Operation');
  if (op === 'DEL' || op === 'PURGE') return { key, op, value: undefined, revision };
  try {
    return { key, op: 'PUT', value: m.json<unknown>(), revision };
  } catch (err) {
    return { key, op: 'PUT', value: undefined, parseError: err instanceof Error ? err.message : String(err), revision };
  }
}

const isHeartbeat = (m: Msg): boolean => m.headers?.code === 100 && !m.reply;

/**
 * Like kvWatchJson (same changes, same `onInitialDone`), through the filter's shared feed.
 * Rejects when the subscription or the consumer cannot be set up (a missing bucket, a refused
 * permission); watch again to resume. A synthetic DEL (revision: the newest read) stands for a
 * key that vanished while the watcher was missing deliveries.
 *
 * @example
 * for await (const c of kvFeedWatchJson(nc, kv, { key: zoneViewsFilter(cluster, zone), subjectPrefix: kvFeedSubjectPrefix(bucket, cluster), onInitialDone })) apply(c);
 */
export async function* kvFeedWatchJson(nc: NatsConnection, kv: KV, opts: KvFeedOptions): AsyncGenerator<KvChange, void, undefined> {
  if (!(kv instanceof Bucket)) throw new TypeError('kvFeedWatchJson needs a bucket opened by @nats-io/kv (openKv / ensureKv)');
  const bucket: Bucket = kv;
  const { signal } = opts;
  if (signal?.aborted) return;
  const heartbeatMs = opts.heartbeatMs ?? 2000;
  const feed = feedAddress(bucket.stream, `${bucket.prefix}.${opts.key}`, opts.subjectPrefix, heartbeatMs, opts.inactiveMs ?? 300_000);
  const keyPrefix = `${bucket.prefix}.`;
  const keyStart = keyPrefix.length;

  // A queue read from `head` (compacted when drained): shift() on a long array copies it, and a
  // burst can leave thousands of deliveries waiting.
  let queue: Msg[] = [];
  let head = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  let heard = Date.now();
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const sub: Subscription = nc.subscribe(feed.subject, {
    callback: (err, m) => {
      heard = Date.now();
      if (err !== null) failure = err;
      else queue.push(m);
      poke();
    },
  });
  // A refused subscription ends asynchronously: report it rather than wait on a silent feed.
  void sub.closed.then((e) => {
    if (e instanceof Error) failure ??= e;
    poke();
  });
  signal?.addEventListener('abort', poke);
  try {
    await ensureFeed(bucket.jsm, bucket.stream, feed);
    // Each key's revision as last yielded, negated when that was a delete or purge (one map
    // lookup per delivery; a resync tells the keys held from the keys gone by the sign).
    const revisions = new Map<string, number>();
    // The highest revision noted: the feed delivers in stream order, so a delivery above it is
    // new whatever its key, and only one at or below it (right after a read of the bucket, which
    // the feed may deliver again) needs its key's revision looked up (a tenth of an agent's CPU).
    let highest = 0;
    const note = (c: KvChange) => {
      revisions.set(c.key, c.op === 'PUT' ? c.revision : -c.revision);
      if (c.revision > highest) highest = c.revision;
    };
    const revisionOf = (key: string) => Math.abs(revisions.get(key) ?? 0);
    for (const c of await readCurrent(kv, opts.key, signal)) {
      note(c);
      yield c;
    }
    opts.onInitialDone?.();

    /** Reads the bucket again; yields what differs from what was yielded (stale keys as DEL). */
    async function* resync(why: string, kind: FeedResyncKind): AsyncGenerator<KvChange> {
      opts.onResync?.(why, kind);
      await ensureFeed(bucket.jsm, bucket.stream, feed);
      const current = await readCurrent(kv, opts.key, signal);
      const newest = current.reduce((n, c) => Math.max(n, c.revision), 0);
      const seen = new Set<string>();
      for (const c of current) {
        seen.add(c.key);
        if (c.revision > revisionOf(c.key)) {
          note(c);
          yield c;
        }
      }
      for (const [key, revision] of [...revisions]) {
        if (revision < 0 || seen.has(key)) continue;
        const gone: KvChange = { key, op: 'DEL', value: undefined, revision: newest };
        note(gone);
        yield gone;
      }
    }

    const order = new FeedOrder();
    let silences = 0;
    // One timer for the watcher's life, not one per wait: in a trickle of deliveries the queue
    // drains after each, and a timer set and cleared per delivery was a cost of its own.
    const ticker = setInterval(poke, Math.min(heartbeatMs, 1000));
    try {
      while (!signal?.aborted) {
        if (failure !== undefined) throw failure;
        const m = queue[head];
        if (m !== undefined) head++;
        else if (head > 0) {
          queue = [];
          head = 0;
        }
        if (m === undefined) {
          if (Date.now() - heard > 3 * heartbeatMs) {
            heard = Date.now();
            // The silence may be this process's own: starved of CPU (a thousand agents on two
            // cores, a long GC) it read nothing while the feed went on, and after such a stall
            // timers run before the sockets are read. A feed whose consumer still exists is only
            // late, and its numbering catches any delivery really lost; in the fan-out bench
            // every one of 399 resyncs was such a silence, each a full read of the zone's views.
            if (++silences < SILENCES_TOLERATED && (await feedExists(bucket.jsm, bucket.stream, feed))) continue;
            silences = 0;
            yield* resync(`nothing heard from the feed for ${3 * heartbeatMs} ms`, 'silent');
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
          continue;
        }
        silences = 0;
        if (isHeartbeat(m)) {
          const last = Number(m.headers?.get('Nats-Last-Consumer'));
          if (Number.isSafeInteger(last) && order.heartbeat(last) === 'missed') yield* resync('the feed\'s heartbeat counts deliveries this watcher did not see', 'heartbeat-ahead');
          continue;
        }
        // Not a delivery of the consumer (its subject is the entry's; its reply carries the numbers).
        const at = m.subject.startsWith(keyPrefix) ? feedPositionOf(m.reply) : null;
        if (at === null) continue;
        if (order.message(at.consumerSeq) === 'missed') yield* resync('a delivery out of order: some were missed', 'out-of-order');
        const key = m.subject.slice(keyStart);
        if (at.streamSeq <= highest && at.streamSeq <= revisionOf(key)) continue; // already read, or older than what was
        const c = changeOf(m, key, at.streamSeq);
        note(c);
        yield c;
      }
    } finally {
      clearInterval(ticker);
    }
  } finally {
    signal?.removeEventListener('abort', poke);
    sub.unsubscribe();
  }
}
