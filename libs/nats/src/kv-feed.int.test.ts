// kvFeedWatchJson against a real server: watchers of one filter share one consumer; a watcher
// that misses deliveries, or whose feed is lost, reads the bucket again and ends up equal to it.

import { describe, expect, it } from 'vitest';
import type { KV } from '@nats-io/kv';
import { kvFeedSubjectPrefix, zoneViewsFilter } from '@slicemesh/contracts';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { viewsBucketPerTest, webViewKey as key } from '../testing/views-bucket.ts';
import { feedAddress, kvFeedWatchJson } from './kv-feed.ts';
import type { KvFeedOptions } from './kv-feed.ts';
import { kvDelete, kvPutJson } from './kv.ts';
import type { KvChange } from './kv.ts';

let f: JetStreamFixture;
let kv: KV;
viewsBucketPerTest((b) => ({ f, kv } = b));
const slice = (k: string) => k.split('.').at(-1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One running watcher: what it yielded (as `op slice value`), whether its initial set is in, and its resyncs. */
interface Watcher {
  readonly seen: string[];
  readonly resyncs: string[];
  /** The kind of each resync, as onResync reported it. */
  readonly kinds: string[];
  initialDone: boolean;
  /** The keys it holds now, with their values (what an agent's state would be). */
  readonly state: Map<string, unknown>;
  stop(): Promise<void>;
}

function watch(opts: Partial<KvFeedOptions> & { key: string }): Watcher {
  const ac = new AbortController();
  const w: Watcher = {
    seen: [],
    resyncs: [],
    kinds: [],
    initialDone: false,
    state: new Map(),
    stop: async () => {
      ac.abort();
      await loop;
    },
  };
  const loop = (async () => {
    const it = kvFeedWatchJson(f.nc, kv, { subjectPrefix: kvFeedSubjectPrefix(f.names.views, 'c'), signal: ac.signal, onInitialDone: () => (w.initialDone = true), onResync: (why, kind) => void (w.resyncs.push(why), w.kinds.push(kind)), ...opts });
    for await (const c of it as AsyncIterable<KvChange>) {
      w.seen.push(`${c.op} ${slice(c.key)} ${JSON.stringify(c.value)}`);
      if (c.op === 'PUT') w.state.set(c.key, c.value);
      else w.state.delete(c.key);
    }
  })();
  return w;
}

async function until(what: string, done: () => boolean, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!done()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The feed consumers on the views stream. */
async function feeds(): Promise<string[]> {
  const names: string[] = [];
  for await (const c of f.jsm.consumers.list(`KV_${f.names.views}`)) if (c.name.startsWith('feed-')) names.push(c.name);
  return names;
}

describe('kvFeedWatchJson', () => {
  it('watchers of one filter share one consumer; each gets the current values, then every change of its filter only', async () => {
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 });
    await kvPutJson(kv, key('zone-b', 'web-9'), { v: 9 });
    const a1 = watch({ key: zoneViewsFilter('c', 'zone-a') });
    const a2 = watch({ key: zoneViewsFilter('c', 'zone-a') });
    await until('both initial sets', () => a1.initialDone && a2.initialDone);
    await kvPutJson(kv, key('zone-a', 'web-2'), { v: 2 });
    await kvPutJson(kv, key('zone-b', 'web-9'), { v: 10 });
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 3 });
    await kvDelete(kv, key('zone-a', 'web-2'));
    const want = ['PUT web-1 {"v":1}', 'PUT web-2 {"v":2}', 'PUT web-1 {"v":3}', 'DEL web-2 undefined'];
    await until('every change', () => a1.seen.length >= 4 && a2.seen.length >= 4);
    await sleep(200); // nothing more arrives
    expect(a1.seen).toEqual(want);
    expect(a2.seen).toEqual(want);
    expect(await feeds()).toHaveLength(1);
    expect([a1.resyncs, a2.resyncs]).toEqual([[], []]);
    await Promise.all([a1.stop(), a2.stop()]);
  });

  it('a watcher whose feed was recreated meanwhile reads the bucket again and yields only what differs (a vanished key as DEL)', async () => {
    const filter = zoneViewsFilter('c', 'zone-a');
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 });
    await kvPutJson(kv, key('zone-a', 'web-2'), { v: 2 });
    const w = watch({ key: filter, heartbeatMs: 60_000 });
    await until('the initial set', () => w.initialDone);
    await kvPutJson(kv, key('zone-a', 'web-3'), { v: 3 });
    await until('web-3', () => w.seen.length === 3);
    // Changes the watcher never hears of: the feed's consumer is gone while they are written (a
    // purge removes web-1 without the marker a delete leaves).
    const feed = feedAddress(`KV_${f.names.views}`, `$KV.${f.names.views}.${filter}`, kvFeedSubjectPrefix(f.names.views, 'c'), 60_000, 300_000);
    await f.jsm.consumers.delete(`KV_${f.names.views}`, feed.consumer);
    await kvPutJson(kv, key('zone-a', 'web-2'), { v: 20 });
    await f.jsm.streams.purge(`KV_${f.names.views}`, { filter: `$KV.${f.names.views}.${key('zone-a', 'web-1')}` });
    // Another watcher sets the feed up again; its first delivery restarts the numbering.
    await f.jsm.consumers.add(`KV_${f.names.views}`, feed.config);
    await kvPutJson(kv, key('zone-a', 'web-5'), { v: 5 });
    await until('the resync', () => w.seen.length >= 6);
    await sleep(200);
    expect(w.seen).toEqual(['PUT web-1 {"v":1}', 'PUT web-2 {"v":2}', 'PUT web-3 {"v":3}', 'PUT web-2 {"v":20}', 'PUT web-5 {"v":5}', 'DEL web-1 undefined']);
    expect(w.resyncs).toEqual(['a delivery out of order: some were missed']);
    expect(w.kinds).toEqual(['out-of-order']);
    // The feed carries on.
    await kvPutJson(kv, key('zone-a', 'web-6'), { v: 6 });
    await until('web-6', () => w.state.has(key('zone-a', 'web-6')));
    expect([...w.state.keys()].map(slice).sort()).toEqual(['web-2', 'web-3', 'web-5', 'web-6']);
    await w.stop();
  });

  it('a feed that falls silent (its consumer lost) is set up again, and what was written meanwhile arrives', async () => {
    const filter = zoneViewsFilter('c', 'zone-a');
    const w = watch({ key: filter, heartbeatMs: 200 });
    await until('the initial set', () => w.initialDone);
    const [consumer] = await feeds();
    await f.jsm.consumers.delete(`KV_${f.names.views}`, consumer as string);
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 });
    await until('web-1 after the resync', () => w.state.has(key('zone-a', 'web-1')), 5000);
    expect(w.resyncs[0]).toMatch(/nothing heard from the feed/);
    expect(w.kinds[0]).toBe('silent');
    expect(await feeds()).toEqual([consumer]);
    await kvPutJson(kv, key('zone-a', 'web-2'), { v: 2 });
    await until('web-2 through the new feed', () => w.state.has(key('zone-a', 'web-2')));
    expect(w.seen).toEqual(['PUT web-1 {"v":1}', 'PUT web-2 {"v":2}']);
    await w.stop();
  });

  it('a watcher whose own process stalled for longer than three heartbeats, its feed alive, reads nothing again and misses nothing', async () => {
    const filter = zoneViewsFilter('c', 'zone-a');
    const w = watch({ key: filter, heartbeatMs: 200 });
    await until('the initial set', () => w.initialDone);
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 });
    await until('web-1', () => w.state.has(key('zone-a', 'web-1')));
    // A CPU-starved process: nothing runs for five heartbeats while a put goes on. The stall is
    // in a socket's callback, as a busy agent's would be: after it the timers run before the
    // next read of the socket, with the heartbeats that came meanwhile still unread in it.
    const stalled = new Promise<void>((resolve) => {
      f.nc.subscribe(`stall.${f.id}`, {
        max: 1,
        callback: () => {
          const until = Date.now() + 1000;
          while (Date.now() < until) {
            // busy: no timer, no socket read
          }
          resolve();
        },
      });
    });
    await f.nc.flush();
    const writer = kvPutJson(kv, key('zone-a', 'web-2'), { v: 2 });
    f.nc.publish(`stall.${f.id}`);
    await stalled;
    await writer;
    await until('web-2', () => w.state.has(key('zone-a', 'web-2')));
    await sleep(300);
    expect(w.resyncs).toEqual([]);
    expect(w.seen).toEqual(['PUT web-1 {"v":1}', 'PUT web-2 {"v":2}']);
    await w.stop();
  });

  it('an empty filter gives the initial-done mark at once, and a plain message on the feed\'s subject is not taken for a change', async () => {
    const filter = zoneViewsFilter('c', 'nowhere');
    const w = watch({ key: filter, heartbeatMs: 60_000 });
    await until('the initial set', () => w.initialDone);
    const feed = feedAddress(`KV_${f.names.views}`, `$KV.${f.names.views}.${filter}`, kvFeedSubjectPrefix(f.names.views, 'c'), 60_000, 300_000);
    f.nc.publish(feed.subject, JSON.stringify({ forged: true }), { reply: `$JS.ACK.KV_${f.names.views}.${feed.consumer}.1.99.1.0.0` });
    await kvPutJson(kv, key('nowhere', 'web-1'), { v: 1 });
    await until('web-1', () => w.seen.length >= 1);
    await sleep(200);
    expect(w.seen).toEqual(['PUT web-1 {"v":1}']);
    expect(w.resyncs).toEqual([]);
    await w.stop();
  });
});
