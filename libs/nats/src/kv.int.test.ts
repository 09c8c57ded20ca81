import { describe, expect, it } from 'vitest';
import type { KV } from '@nats-io/kv';
import type { JetStreamFixture } from '../testing/jetstream.ts';
import { viewsBucketPerTest, webViewKey as key } from '../testing/views-bucket.ts';
import { kvDelete, kvGetJson, kvKeys, kvPutJson, kvRevisions, kvWatchJson, openKv } from './kv.ts';
import type { KvChange } from './kv.ts';
import { parseViewKey, zoneViewsFilter } from '@slicemesh/contracts';

let f: JetStreamFixture;
let kv: KV;
viewsBucketPerTest((b) => ({ f, kv } = b));

type Event = { readonly kind: 'change'; readonly change: KvChange } | { readonly kind: 'initial-done' };

/**
 * Watches `filter`, recording changes and the initial-done mark in order; after the mark runs
 * `afterInitial`; stops (by aborting) as soon as `until` holds, or after 10 s.
 */
async function watchUntil(filter: string, afterInitial: () => Promise<unknown>, until: (events: readonly Event[]) => boolean): Promise<Event[]> {
  const events: Event[] = [];
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 10_000);
  const record = (e: Event) => {
    events.push(e);
    if (until(events)) ac.abort();
  };
  let initial: Promise<unknown> = Promise.resolve();
  const it = kvWatchJson(kv, {
    key: filter,
    signal: ac.signal,
    onInitialDone: () => {
      record({ kind: 'initial-done' });
      initial = afterInitial();
    },
  });
  for await (const change of it) record({ kind: 'change', change });
  await initial;
  clearTimeout(timer);
  expect(until(events)).toBe(true); // not ended by the timeout
  return events;
}

const show = (events: readonly Event[]) =>
  events.map((e) => (e.kind === 'initial-done' ? 'initial-done' : `${e.change.op} ${parseViewKey(e.change.key).slice} ${JSON.stringify(e.change.value)}`));

describe('KV JSON helpers', () => {
  it('put, get and delete JSON values', async () => {
    const k = key('zone-a', 'web-1');
    const rev = await kvPutJson(kv, k, { endpoints: ['10.0.0.1'] });
    expect(rev).toBeGreaterThan(0);
    expect(await kvGetJson(kv, k)).toEqual({ endpoints: ['10.0.0.1'] });
    await kvDelete(kv, k);
    expect(await kvGetJson(kv, k)).toBeUndefined();
    expect(await kvGetJson(kv, key('zone-a', 'never'))).toBeUndefined();
  });

  it('openKv binds to an existing bucket and rejects a missing one', async () => {
    const again = await openKv(f.nc, f.names.views);
    await kvPutJson(kv, key('z', 's'), 1);
    expect(await kvGetJson(again, key('z', 's'))).toBe(1);
    await expect(openKv(f.nc, `missing_${f.id}`)).rejects.toThrow();
  });
});

describe('kvWatchJson', () => {
  it('habit 5: yields current values (deleted keys as DEL), then reports initial-done, then updates', async () => {
    await kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 });
    await kvPutJson(kv, key('zone-a', 'web-2'), { v: 2 });
    await kvPutJson(kv, key('zone-a', 'web-3'), { v: 3 });
    await kvDelete(kv, key('zone-a', 'web-3'));
    await kvPutJson(kv, key('zone-b', 'web-9'), { v: 9 }); // another zone: never seen
    const events = await watchUntil(
      zoneViewsFilter('c', 'zone-a'),
      async () => {
        await kvPutJson(kv, key('zone-a', 'web-1'), { v: 10 });
        await kvPutJson(kv, key('zone-b', 'web-9'), { v: 90 });
        await kvDelete(kv, key('zone-a', 'web-2'));
      },
      (e) => e.length >= 6,
    );
    expect(show(events)).toEqual(['PUT web-1 {"v":1}', 'PUT web-2 {"v":2}', 'DEL web-3 undefined', 'initial-done', 'PUT web-1 {"v":10}', 'DEL web-2 undefined']);
    const revisions = events.flatMap((e) => (e.kind === 'change' ? [e.change.revision] : []));
    expect([...revisions].sort((a, b) => a - b)).toEqual(revisions);
  });

  it('reports initial-done before anything when no key matches, even if other zones have values', async () => {
    await kvPutJson(kv, key('zone-b', 'web-9'), { v: 9 });
    const events = await watchUntil(zoneViewsFilter('c', 'zone-a'), () => kvPutJson(kv, key('zone-a', 'web-1'), { v: 1 }), (e) => e.length >= 2);
    expect(show(events)).toEqual(['initial-done', 'PUT web-1 {"v":1}']);
  });

  it('a value that is not JSON arrives with a parseError instead of ending the watch', async () => {
    await kv.put(key('zone-a', 'bad'), 'not json');
    await kvPutJson(kv, key('zone-a', 'good'), true);
    const events = await watchUntil(zoneViewsFilter('c', 'zone-a'), () => Promise.resolve(), (e) => e.length >= 3);
    const changes = events.flatMap((e) => (e.kind === 'change' ? [e.change] : []));
    expect(changes[0]).toMatchObject({ op: 'PUT', value: undefined });
    expect(changes[0]?.parseError).toMatch(/JSON/);
    expect(changes[1]).toMatchObject({ op: 'PUT', value: true });
    expect(events.map((e) => e.kind)).toEqual(['change', 'change', 'initial-done']);
  });

  it('ends when the signal aborts', async () => {
    const ac = new AbortController();
    const it = kvWatchJson(kv, { key: '>', signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    const got: KvChange[] = [];
    for await (const c of it) got.push(c);
    expect(got).toEqual([]);
  });
});

describe('kvKeys', () => {
  it.each([
    { name: 'no key at all', puts: [], deletes: [], want: [] },
    { name: 'keys of other zones only', puts: [['zone-b', 'web-9']], deletes: [], want: [] },
    { name: 'live keys, sorted', puts: [['zone-a', 'web-2'], ['zone-a', 'web-1'], ['zone-b', 'web-9']], deletes: [], want: ['web-1', 'web-2'] },
    { name: 'a deleted key is left out', puts: [['zone-a', 'web-1'], ['zone-a', 'web-2']], deletes: [['zone-a', 'web-2']], want: ['web-1'] },
    { name: 'every key deleted', puts: [['zone-a', 'web-1']], deletes: [['zone-a', 'web-1']], want: [] },
  ] as const)('$name', async ({ puts, deletes, want }) => {
    for (const [zone, slice] of puts) await kvPutJson(kv, key(zone, slice), { zone, slice });
    for (const [zone, slice] of deletes) await kvDelete(kv, key(zone, slice));
    const got = await kvKeys(kv, zoneViewsFilter('c', 'zone-a'));
    expect(got.map((k) => parseViewKey(k).slice)).toEqual(want);
  });

  it('a read while its keys are being deleted returns only keys that existed, and the next one none', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `web-${String(i).padStart(2, '0')}`);
    for (let round = 0; round < 25; round++) {
      for (const n of names) await kvPutJson(kv, key('zone-a', n), round);
      const deleting = Promise.all(names.map((n) => kvDelete(kv, key('zone-a', n))));
      const got = await kvKeys(kv, zoneViewsFilter('c', 'zone-a'));
      await deleting;
      expect(got.filter((k) => !names.includes(parseViewKey(k).slice)), `round ${round}`).toEqual([]);
      expect(new Set(got).size, `round ${round}: no key twice`).toBe(got.length);
      expect(await kvKeys(kv, zoneViewsFilter('c', 'zone-a'))).toEqual([]);
    }
  });
});

describe('kvRevisions', () => {
  it('gives each live key the revision its latest put returned: a rewritten key its newest, a deleted one none', async () => {
    const first = await kvPutJson(kv, key('zone-a', 'web-1'), 1);
    const replaced = await kvPutJson(kv, key('zone-a', 'web-2'), 1);
    const newest = await kvPutJson(kv, key('zone-a', 'web-2'), 2);
    await kvPutJson(kv, key('zone-a', 'web-3'), 1);
    await kvDelete(kv, key('zone-a', 'web-3'));
    await kvPutJson(kv, key('zone-b', 'web-9'), 1);
    const got = await kvRevisions(kv, zoneViewsFilter('c', 'zone-a'));
    expect(newest).toBeGreaterThan(replaced);
    expect([...got].map(([k, rev]) => [parseViewKey(k).slice, rev]).sort()).toEqual([['web-1', first], ['web-2', newest]]);
  });
});
