import { deepFreeze } from '@slicemesh/testing';
import { describe, expect, it } from 'vitest';
import { ApiError } from './api-error.ts';
import { ObjectStore } from './object-store.ts';
import type { KubeObj, StoreEvent } from './types.ts';

const pod = (name: string, app = 'web'): KubeObj =>
  deepFreeze({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default', labels: { app } }, spec: { containers: [{ name: 'c' }] } });

function relabel(store: ObjectStore, name: string, app: string): KubeObj {
  const p = store.get('Pod', 'default', name)!;
  return store.update('Pod', { ...p, metadata: { ...p.metadata, labels: { app } } });
}

const summary = (events: readonly StoreEvent[]) => events.map((e) => `${e.type} ${e.object.metadata.name}@${e.rv}`);

describe('ObjectStore watch and history', () => {
  it('replays retained events after the given resourceVersion, then delivers live ones', () => {
    const store = new ObjectStore({ now: () => 0 });
    store.create('Pod', pod('a')); // rv 5
    store.create('Pod', pod('b')); // rv 6
    relabel(store, 'a', 'x'); // rv 7
    const seen: StoreEvent[] = [];
    store.watch('Pod', { onEvent: (e) => seen.push(e) }, 5);
    store.delete('Pod', 'default', 'b'); // rv 8
    expect(summary(seen)).toEqual(['ADDED b@6', 'MODIFIED a@7', 'DELETED b@8']);
    expect(seen[1]!.previous?.metadata.labels).toEqual({ app: 'web' });
  });

  it('a DELETED event carries the object at the deletion resourceVersion', () => {
    const store = new ObjectStore({ now: () => 0 });
    store.create('Pod', pod('a'));
    const seen: StoreEvent[] = [];
    store.watch('Pod', { onEvent: (e) => seen.push(e) });
    store.delete('Pod', 'default', 'a');
    expect(seen[0]!.object.metadata.resourceVersion).toBe(String(store.resourceVersion));
  });

  it('only events of the watched kind arrive', () => {
    const store = new ObjectStore({ now: () => 0 });
    const seen: StoreEvent[] = [];
    store.watch('Service', { onEvent: (e) => seen.push(e) });
    store.create('Pod', pod('a'));
    expect(seen).toEqual([]);
  });

  it('410 Expired for a resourceVersion older than the retained history of that kind', () => {
    const store = new ObjectStore({ now: () => 0, historySize: 2 });
    store.create('Pod', pod('a')); // 5
    store.create('Pod', pod('b')); // 6
    store.create('Pod', pod('c')); // 7 evicts 5
    expect(store.historyFloor('Pod')).toBe(5);
    expect(() => store.watch('Pod', { onEvent: () => {} }, 5)).not.toThrow();
    let err: unknown;
    try {
      store.watch('Pod', { onEvent: () => {} }, 4);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).code, (err as ApiError).reason, (err as ApiError).message]).toEqual([410, 'Expired', 'too old resource version: 4 (5)']);
  });

  it('history is per kind: pod churn does not expire a node watch', () => {
    const store = new ObjectStore({ now: () => 0, historySize: 2 });
    for (const n of ['a', 'b', 'c', 'd']) store.create('Pod', pod(n));
    expect(store.historyFloor('Node')).toBe(0);
  });

  it('compact() expires every older resourceVersion and tells open watchers, which are dropped', () => {
    const store = new ObjectStore({ now: () => 0 });
    store.create('Pod', pod('a'));
    const expired: ApiError[] = [];
    const seen: StoreEvent[] = [];
    store.watch('Pod', { onEvent: (e) => seen.push(e), onExpired: (e) => expired.push(e) });
    const rv = store.resourceVersion;
    store.compact();
    store.create('Pod', pod('b'));
    expect([expired.length, expired[0]?.code, seen.length]).toEqual([1, 410, 0]);
    expect(() => store.watch('Pod', { onEvent: () => {} }, rv - 1)).toThrow(ApiError);
    expect(() => store.watch('Pod', { onEvent: () => {} }, rv)).not.toThrow();
  });

  it('writes made by a watcher reach every watcher in resourceVersion order, once', () => {
    const store = new ObjectStore({ now: () => 0 });
    const first: number[] = [];
    const second: number[] = [];
    store.watch('Pod', {
      onEvent: (e) => {
        first.push(e.rv);
        if (e.object.metadata.name === 'a' && e.type === 'ADDED') store.create('Pod', pod('b'));
      },
    });
    store.watch('Pod', { onEvent: (e) => second.push(e.rv) });
    store.create('Pod', pod('a'));
    expect([first, second]).toEqual([[5, 6], [5, 6]]);
  });

  it('a throwing watcher does not stop delivery to others', () => {
    const errors: unknown[] = [];
    const store = new ObjectStore({ now: () => 0, onWatcherError: (e) => errors.push(e) });
    const seen: string[] = [];
    store.watch('Pod', { onEvent: () => { throw new Error('boom'); } });
    store.watch('Pod', { onEvent: (e) => seen.push(e.object.metadata.name) });
    store.create('Pod', pod('a'));
    expect([seen, errors.length]).toEqual([['a'], 1]);
  });

  it('unsubscribing stops delivery', () => {
    const store = new ObjectStore({ now: () => 0 });
    const seen: string[] = [];
    const stop = store.watch('Pod', { onEvent: (e) => seen.push(e.object.metadata.name) });
    store.create('Pod', pod('a'));
    stop();
    store.create('Pod', pod('b'));
    expect(seen).toEqual(['a']);
  });
});
