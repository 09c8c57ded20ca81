// Thin JSON helpers over @nats-io/kv, and a watch that says when the initial state is complete
// (habit 5: an agent programs nothing until then).

import { Bucket, Kvm } from '@nats-io/kv';
import type { KV, KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamDomainOf, jetstream } from './js-domain.ts';

/** Where a bucket lives: the connection's JetStream domain (setJetStreamDomain), or another's (a hub's, through a leafnode). */
export interface KvLocation {
  /** JetStream domain of the bucket; unset: the one the connection's server answers for. */
  readonly domain?: string;
}

/** The bucket manager for `where`: the connection itself, or a JetStream client of the domain. */
export function kvmAt(nc: NatsConnection, where: KvLocation = {}): Kvm {
  const domain = where.domain ?? jetStreamDomainOf(nc);
  return new Kvm(domain === undefined ? nc : jetstream(nc, { domain }));
}

/** Opens an existing bucket; rejects if it does not exist (create it with ensureKv). */
export async function openKv(nc: NatsConnection, bucket: string, where: KvLocation = {}): Promise<KV> {
  const kv = await kvmAt(nc, where).open(bucket);
  await kv.status(); // binding alone does not look at the server: fail here, not on first use
  return kv;
}

/** Stores `value` as JSON under `key`; returns the new revision. */
export async function kvPutJson(kv: KV, key: string, value: unknown): Promise<number> {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`value for key ${key} is not JSON-encodable`);
  return kv.put(key, text);
}

/** Reads and parses `key`; undefined when absent or deleted. */
export async function kvGetJson(kv: KV, key: string): Promise<unknown> {
  const e = await kv.get(key);
  if (e === null || e.operation !== 'PUT') return undefined;
  return e.json<unknown>();
}

/** Deletes `key` (a DEL marker watchers see); deleting an absent key is not an error. */
export async function kvDelete(kv: KV, key: string): Promise<void> {
  await kv.delete(key);
}

export interface KvChange {
  readonly key: string;
  readonly op: 'PUT' | 'DEL' | 'PURGE';
  /** Parsed JSON for PUT; undefined for DEL/PURGE or an unparsable value (see parseError). */
  readonly value: unknown;
  readonly parseError?: string;
  readonly revision: number;
}

export interface KvWatchOptions {
  /** One key or wildcard filter (2.9: a single filter), e.g. zoneViewsFilter(...). Defaults to '>'. */
  readonly key?: string;
  /**
   * Called once, when every value present at the start has been yielded: after the consumer has
   * processed the last initial entry and asks for the next, or before the first entry when
   * nothing matched. Entries after it are updates.
   */
  readonly onInitialDone?: () => void;
  /** Ends the iteration. */
  readonly signal?: AbortSignal;
}

/**
 * Watches the current values (deleted keys as DEL entries), then every change, as parsed JSON.
 *
 * The initial set ends at the first entry with nothing left pending on the server (the Go
 * client's rule), or once every key counted in the stream's per-subject state before watching
 * has arrived, whichever comes first; an empty match ends it before the first entry. The count
 * is needed: nats-server 2.9 can report one message pending after the last initial entry of a
 * key whose value was just replaced by a delete marker (seen as a test that waited ~30 s, until
 * the ordered consumer was reset), so the pending count alone may never reach 0. Keys are
 * counted once each, as an ordered consumer that resets delivers some of them again. A key
 * written between the count and the watch start arrives as an update, which is harmless for
 * level-based consumers.
 */
export async function* kvWatchJson(kv: KV, opts: KvWatchOptions = {}): AsyncGenerator<KvChange, void, undefined> {
  for await (const e of watchEntries(kv, opts, false)) {
    const op = e.operation;
    const change: KvChange = { key: e.key, op, value: undefined, revision: e.revision };
    if (op !== 'PUT') yield change;
    else {
      try {
        yield { ...change, value: e.json<unknown>() };
      } catch (err) {
        yield { ...change, parseError: err instanceof Error ? err.message : String(err) };
      }
    }
  }
}

/**
 * The live (not deleted) keys matching `filter`, sorted. Used instead of the client's kv.keys(),
 * which ends only at an entry with nothing pending or at an idle heartbeat: on nats-server 2.9
 * the first may never come (see kvWatchJson) and an ordered consumer that has reset beats every
 * 30 s, so kv.keys() stalled a CI run's e2e test for its whole 30 s wait. Values are not read.
 */
export async function kvKeys(kv: KV, filter = '>'): Promise<string[]> {
  return [...(await kvRevisions(kv, filter)).keys()].sort();
}

/** Each live key matching `filter` with the revision of its current value (values are not read). */
export async function kvRevisions(kv: KV, filter = '>'): Promise<Map<string, number>> {
  const live = new Map<string, number>();
  const stop = new AbortController();
  for await (const e of watchEntries(kv, { key: filter, signal: stop.signal, onInitialDone: () => stop.abort() }, true)) {
    if (e.operation === 'PUT') live.set(e.key, e.revision);
    else live.delete(e.key);
  }
  return live;
}

/** The entries of a watch of `opts.key`, with the initial set's end found as kvWatchJson says. */
async function* watchEntries(kv: KV, opts: KvWatchOptions, headersOnly: boolean): AsyncGenerator<KvWatchEntry, void, undefined> {
  const filter = opts.key ?? '>';
  const signal = opts.signal;
  if (signal?.aborted) return;
  let initialDone = false;
  const markDone = () => {
    if (!initialDone) {
      initialDone = true;
      opts.onInitialDone?.();
    }
  };
  const matching = await countMatchingKeys(kv, filter);
  const watch = await kv.watch({ key: filter, headers_only: headersOnly });
  const stop = () => watch.stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    if (matching === 0) markDone();
    const seen = new Set<string>();
    for await (const e of watch) {
      if (signal?.aborted) break;
      if (!initialDone) seen.add(e.key);
      const last = e.delta === 0 || seen.size >= matching;
      yield e;
      if (last) markDone();
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    watch.stop();
  }
}

/** Number of keys (deleted ones included) matching `filter`, read from the backing stream. */
async function countMatchingKeys(kv: KV, filter: string): Promise<number> {
  if (!(kv instanceof Bucket)) throw new TypeError('kvWatchJson needs a bucket opened by @nats-io/kv (openKv / ensureKv)');
  const info = await kv.jsm.streams.info(kv.stream, { subjects_filter: `${kv.prefix}.${filter}` });
  return Object.keys(info.state.subjects ?? {}).length;
}
