// The simulator's "etcd + registry": an in-memory object store with one global, strictly
// increasing resourceVersion, deterministic uids, a bounded per-kind event history for
// watches, and the create/update/delete rules clients rely on (409s, graceful pod deletion,
// no-op updates that do not bump the version).
import { ApiError, alreadyExists, badRequest, conflict, expired, invalid, notFound, STALE_OBJECT } from './api-error.ts';
import { EventHistory } from './history.ts';
import { apiVersionOf, kindInfo, KINDS } from './kinds.ts';
import type { KindInfo } from './kinds.ts';
import { ServiceAllocator } from './service-allocator.ts';
import { matchesFilter } from './selectors.ts';
import type { ObjectFilter } from './selectors.ts';
import { strategyFor, validationCauses } from './strategies.ts';
import type { StrategyContext } from './strategies.ts';
import { DEFAULT_EVENT_TTL_MS } from './store-options.ts';
import type { CreateOptions, DeleteOptions, DeleteResult, StoreOptions, UpdateOptions, Watcher } from './store-options.ts';
import { freezeDeep, jsonEqual, objectKey } from './types.ts';
import type { KubeObj, Meta, StoreEvent } from './types.ts';
import { compareKeys, dropUndefinedMeta, podGraceSeconds, withoutMetaAndStatus } from './write-rules.ts';
import { createRandom, deterministicUid, nameSuffix } from '../random.ts';
import type { Random } from '../random.ts';
import type { Clock, TimerHandle } from '../time/clock.ts';
import { parseTimestamp, rfc3339 } from '../time/timestamps.ts';

export const DEFAULT_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const UNDELETABLE_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);
export const DEFAULT_HISTORY_SIZE = 10_000;

export type { CreateOptions, DeleteOptions, DeleteResult, StoreOptions, UpdateOptions, UpdateScope, WriteOptions, Watcher } from './store-options.ts';
export { DEFAULT_EVENT_TTL_MS } from './store-options.ts';

interface Registration {
  readonly watcher: Watcher;
  lastRv: number;
}

/** One write of an object whose kind has a TTL: it goes at `at` unless written again since. */
interface Expiry {
  readonly key: string;
  readonly rv: number;
  readonly at: number;
}

/** Expiries of one kind in write order, which is due order (one TTL per kind, time moves forward). */
class ExpiryQueue {
  #items: Expiry[] = [];
  #head = 0;

  push(e: Expiry): void {
    this.#items.push(e);
  }

  peek(): Expiry | undefined {
    return this.#items[this.#head];
  }

  shift(): Expiry | undefined {
    const e = this.#items[this.#head++];
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return e;
  }
}

export class ObjectStore {
  readonly #now: () => number;
  readonly #seed: string;
  readonly #random: Random;
  readonly #ctx: StrategyContext;
  readonly #onWatcherError: (err: unknown) => void;
  #rv = 0;
  #uids = 0;
  readonly #objects = new Map<string, Map<string, KubeObj>>();
  readonly #history = new Map<string, EventHistory>();
  readonly #watchers = new Map<string, Set<Registration>>();
  #queue: StoreEvent[] = [];
  #dispatching = false;
  readonly #ttl = new Map<string, number>();
  readonly #expiries = new Map<string, ExpiryQueue>();
  readonly #timers: Pick<Clock, 'setTimer' | 'clearTimer'> | undefined;
  #expiryTimer: { readonly handle: TimerHandle; readonly at: number } | undefined;

  constructor(options: StoreOptions) {
    this.#now = options.now;
    this.#seed = options.seed ?? 'cluster-sim';
    this.#random = createRandom(`${this.#seed}/names`);
    this.#onWatcherError = options.onWatcherError ?? (() => {});
    this.#ctx = {
      allocator: new ServiceAllocator(options.serviceCIDR, options.nodePortRange),
      defaultPodGraceSeconds: options.defaultPodGraceSeconds ?? 0,
    };
    for (const k of KINDS) {
      this.#objects.set(k.kind, new Map());
      this.#history.set(k.kind, new EventHistory(options.historySize ?? DEFAULT_HISTORY_SIZE));
      this.#watchers.set(k.kind, new Set());
    }
    this.#timers = options.timers;
    for (const [kind, ms] of Object.entries(options.ttlMs ?? { Event: DEFAULT_EVENT_TTL_MS })) {
      kindInfo(kind); // throws for a kind the store does not hold
      if (Number.isFinite(ms) && ms > 0) {
        this.#ttl.set(kind, ms);
        this.#expiries.set(kind, new ExpiryQueue());
      }
    }
    for (const name of options.namespaces ?? DEFAULT_NAMESPACES) {
      this.create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    }
  }

  /** The latest committed resourceVersion (0 before the first write). */
  get resourceVersion(): number {
    return this.#rv;
  }

  get(kind: string, namespace: string | undefined, name: string): KubeObj | undefined {
    return this.#map(kind).get(objectKey(kindInfo(kind).namespaced ? namespace : undefined, name));
  }

  /** Objects of `kind` matching `filter`, sorted by namespace then name (etcd key order). */
  list(kind: string, filter: ObjectFilter = {}): KubeObj[] {
    const out: KubeObj[] = [];
    for (const obj of this.#map(kind).values()) if (matchesFilter(filter, obj)) out.push(obj);
    return out.sort((a, b) => compareKeys(a, b));
  }

  count(kind: string): number {
    return this.#map(kind).size;
  }

  create(kind: string, input: KubeObj, options: CreateOptions = {}): KubeObj {
    const stored = kindInfo(kind);
    const info = options.as ?? stored;
    if (input.kind && input.kind !== kind) throw badRequest(`the object kind ${input.kind} does not match the resource kind ${kind}`);
    const namespace = this.#namespaceFor(info, input.metadata?.namespace);
    const name = input.metadata?.name || this.#generateName(info, namespace, input.metadata?.generateName);
    const { resourceVersion: _rv, uid: _uid, deletionTimestamp: _dt, deletionGracePeriodSeconds: _dg, generation: _g, creationTimestamp: _ct, ...meta } = input.metadata ?? ({} as Meta);
    const { status: _status, ...withoutStatus } = input;
    const base: KubeObj = {
      ...(options.resetStatus ? withoutStatus : input),
      apiVersion: apiVersionOf(stored),
      kind,
      metadata: { ...meta, name, ...(namespace ? { namespace } : {}) },
    };
    const causes = validationCauses(base, { via: info });
    if (causes.length > 0) throw invalid(info, name, causes);
    if (this.get(kind, namespace, name)) throw alreadyExists(info, name);
    const strategy = strategyFor(kind);
    const stamped: KubeObj = {
      ...base,
      metadata: {
        ...base.metadata,
        uid: deterministicUid(this.#seed, kind, namespace ?? '', name, ++this.#uids),
        ...(strategy.generation === false ? {} : { generation: 1 }),
        creationTimestamp: rfc3339(this.#now()),
      },
    };
    const mark = this.#ctx.allocator.mark();
    const done = strategy.complete(stamped, undefined, this.#ctx);
    if (options.dryRun) {
      strategy.release(done, undefined, this.#ctx);
      this.#ctx.allocator.restore(mark);
      return freezeDeep(done);
    }
    return this.#commit('ADDED', done, undefined);
  }

  update(kind: string, input: KubeObj, options: UpdateOptions = {}): KubeObj {
    const stored = kindInfo(kind);
    const info = options.as ?? stored;
    const namespace = info.namespaced ? input.metadata.namespace : undefined;
    const prev = this.get(kind, namespace, input.metadata.name);
    if (!prev) throw notFound(info, input.metadata.name);
    const wanted = input.metadata.resourceVersion;
    if (wanted && wanted !== prev.metadata.resourceVersion) throw conflict(info, prev.metadata.name, STALE_OBJECT);
    if (input.metadata.uid && input.metadata.uid !== prev.metadata.uid) {
      throw conflict(info, prev.metadata.name, `Precondition failed: UID in precondition: ${input.metadata.uid}, UID in object meta: ${prev.metadata.uid}`);
    }
    const scope = options.scope ?? 'all';
    let next: KubeObj;
    if (scope === 'status') next = { ...prev, status: input['status'] };
    else if (scope === 'main' && info.statusSubresource) next = { ...input, status: prev['status'] };
    else next = input;
    next = {
      ...next,
      apiVersion: apiVersionOf(stored),
      kind,
      metadata: {
        ...(scope === 'status' ? prev.metadata : next.metadata),
        name: prev.metadata.name,
        ...(namespace ? { namespace } : {}),
        uid: prev.metadata.uid,
        creationTimestamp: prev.metadata.creationTimestamp,
        generation: prev.metadata.generation,
        deletionTimestamp: prev.metadata.deletionTimestamp,
        deletionGracePeriodSeconds: prev.metadata.deletionGracePeriodSeconds,
        resourceVersion: prev.metadata.resourceVersion,
      },
    };
    next = dropUndefinedMeta(next);
    const causes = validationCauses(next, { via: info, prev });
    if (causes.length > 0) throw invalid(info, prev.metadata.name, causes);
    const strategy = strategyFor(kind);
    const mark = this.#ctx.allocator.mark();
    let done = strategy.complete(next, prev, this.#ctx);
    if (jsonEqual(done, prev)) return prev;
    if (strategy.generation !== false && !jsonEqual(withoutMetaAndStatus(done), withoutMetaAndStatus(prev))) {
      done = { ...done, metadata: { ...done.metadata, generation: (prev.metadata.generation ?? 0) + 1 } };
    }
    if (options.dryRun) {
      strategy.release(done, prev, this.#ctx);
      this.#ctx.allocator.restore(mark);
      return freezeDeep(done);
    }
    strategy.release(prev, done, this.#ctx);
    return this.#commit('MODIFIED', done, prev);
  }

  delete(kind: string, namespace: string | undefined, name: string, options: DeleteOptions = {}): DeleteResult {
    const stored = kindInfo(kind);
    const info = options.as ?? stored;
    const prev = this.get(kind, namespace, name);
    if (!prev) throw notFound(info, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== prev.metadata.uid) {
      throw conflict(info, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${prev.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== prev.metadata.resourceVersion) {
      throw conflict(info, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${prev.metadata.resourceVersion}`);
    }
    if (kind === 'Pod') {
      const grace = podGraceSeconds(prev, options.gracePeriodSeconds, this.#ctx.defaultPodGraceSeconds);
      if (grace > 0) return this.#beginPodTermination(prev, grace, options.dryRun === true);
    }
    if (kind === 'Namespace' && UNDELETABLE_NAMESPACES.has(name)) {
      throw new ApiError(403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`, { name, kind: 'namespaces' });
    }
    if (options.dryRun) return { object: prev, removed: true };
    if (kind === 'Namespace') {
      for (const k of KINDS) {
        if (!k.namespaced) continue;
        for (const obj of this.list(k.kind, { namespace: name })) this.#remove(k, obj);
      }
    }
    return { object: this.#remove(stored, prev), removed: true };
  }

  /**
   * Deletes every object whose TTL has run out (each with a DELETED event) and returns how
   * many went. The store's timers call this; without timers, call it to apply TTLs.
   */
  expireDue(): number {
    const now = this.#now();
    let removed = 0;
    for (const [kind, queue] of this.#expiries) {
      for (let e = queue.peek(); e && e.at <= now; e = queue.peek()) {
        queue.shift();
        const obj = this.#map(kind).get(e.key);
        // Skip writes overtaken by a later one (it has its own entry) or a delete.
        if (obj && obj.metadata.resourceVersion === String(e.rv)) {
          this.#remove(kindInfo(kind), obj);
          removed++;
        }
      }
    }
    this.#armExpiry();
    return removed;
  }

  /** Cancels the expiry timer (the store stays usable; call before dropping it). */
  stop(): void {
    if (this.#expiryTimer) this.#timers?.clearTimer(this.#expiryTimer.handle);
    this.#expiryTimer = undefined;
  }

  /**
   * Subscribes to `kind`. With `sinceRV`, first replays retained events after it (throwing
   * a 410 ApiError if some are gone); without, delivers only future events. Events arrive in
   * resourceVersion order, each once. Returns the unsubscribe function.
   */
  watch(kind: string, watcher: Watcher, sinceRV?: number): () => void {
    const history = this.#history.get(kindInfo(kind).kind)!;
    const reg: Registration = { watcher, lastRv: sinceRV ?? this.#rv };
    if (sinceRV !== undefined) {
      if (sinceRV < history.floor) throw expired(`too old resource version: ${sinceRV} (${history.floor})`);
      for (const event of history.since(sinceRV)) this.#deliver(reg, event);
    }
    const set = this.#watchers.get(kind)!;
    set.add(reg);
    return () => set.delete(reg);
  }

  /** The oldest resourceVersion a watch of `kind` may start from. */
  historyFloor(kind: string): number {
    return this.#history.get(kindInfo(kind).kind)!.floor;
  }

  /**
   * Forgets all history (like an etcd compaction at the current revision): watches from any
   * older resourceVersion get 410, and every open watcher with `onExpired` is told and dropped.
   */
  compact(): void {
    for (const history of this.#history.values()) history.compact(this.#rv);
    const err = expired(`too old resource version: the history was compacted at ${this.#rv}`);
    for (const set of this.#watchers.values()) {
      for (const reg of [...set]) {
        if (!reg.watcher.onExpired) continue;
        set.delete(reg);
        reg.watcher.onExpired(err);
      }
    }
  }

  #map(kind: string): Map<string, KubeObj> {
    const map = this.#objects.get(kind);
    if (!map) throw new Error(`cluster-sim does not serve kind ${kind}`);
    return map;
  }

  #namespaceFor(info: KindInfo, namespace: string | undefined): string | undefined {
    if (!info.namespaced) return undefined;
    if (!namespace) throw badRequest('the namespace of the object is required');
    if (!this.#map('Namespace').has(namespace)) throw notFound(kindInfo('Namespace'), namespace);
    return namespace;
  }

  #generateName(info: KindInfo, namespace: string | undefined, prefix: string | undefined): string {
    if (!prefix) throw invalid(info, '', [{ reason: 'FieldValueRequired', field: 'metadata.name', message: 'name or generateName is required' }]);
    for (let i = 0; i < 16; i++) {
      const name = `${prefix}${nameSuffix(this.#random)}`;
      if (!this.get(info.kind, namespace, name)) return name;
    }
    throw alreadyExists(info, prefix);
  }

  #beginPodTermination(pod: KubeObj, grace: number, dryRun: boolean): DeleteResult {
    const deadline = this.#now() + grace * 1000;
    const current = parseTimestamp(pod.metadata.deletionTimestamp);
    if (current !== undefined && current <= deadline) return { object: pod, removed: false };
    const next: KubeObj = {
      ...pod,
      metadata: { ...pod.metadata, deletionTimestamp: rfc3339(deadline), deletionGracePeriodSeconds: grace },
    };
    if (dryRun) return { object: freezeDeep(next), removed: false };
    return { object: this.#commit('MODIFIED', next, pod), removed: false };
  }

  #remove(info: KindInfo, prev: KubeObj): KubeObj {
    this.#map(info.kind).delete(objectKey(prev.metadata.namespace, prev.metadata.name));
    strategyFor(info.kind).release(prev, undefined, this.#ctx);
    const rv = ++this.#rv;
    const gone = freezeDeep({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(rv) } });
    this.#emit({ type: 'DELETED', kind: info.kind, rv, object: gone });
    return gone;
  }

  #commit(type: 'ADDED' | 'MODIFIED', obj: KubeObj, previous: KubeObj | undefined): KubeObj {
    const rv = ++this.#rv;
    const stored = freezeDeep({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } });
    const key = objectKey(stored.metadata.namespace, stored.metadata.name);
    this.#map(obj.kind).set(key, stored);
    const ttl = this.#ttl.get(obj.kind);
    if (ttl !== undefined) {
      this.#expiries.get(obj.kind)!.push({ key, rv, at: this.#now() + ttl });
      this.#armExpiry();
    }
    this.#emit(previous ? { type, kind: obj.kind, rv, object: stored, previous } : { type, kind: obj.kind, rv, object: stored });
    return stored;
  }

  // One timer, for the earliest due expiry of any kind.
  #armExpiry(): void {
    if (!this.#timers) return;
    let next: number | undefined;
    for (const queue of this.#expiries.values()) {
      const at = queue.peek()?.at;
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    if (next === undefined || (this.#expiryTimer && this.#expiryTimer.at <= next)) return;
    this.stop();
    const handle = this.#timers.setTimer(() => {
      this.#expiryTimer = undefined;
      this.expireDue();
    }, next - this.#now());
    this.#expiryTimer = { handle, at: next };
  }

  // Watchers may write from their callbacks; events are queued so every watcher still sees
  // every kind's events in resourceVersion order.
  #emit(event: StoreEvent): void {
    this.#history.get(event.kind)!.push(event);
    this.#queue.push(event);
    if (this.#dispatching) return;
    this.#dispatching = true;
    try {
      for (let i = 0; i < this.#queue.length; i++) {
        const ev = this.#queue[i]!;
        for (const reg of [...this.#watchers.get(ev.kind)!]) this.#deliver(reg, ev);
      }
    } finally {
      this.#queue = [];
      this.#dispatching = false;
    }
  }

  #deliver(reg: Registration, event: StoreEvent): void {
    if (event.rv <= reg.lastRv) return;
    reg.lastRv = event.rv;
    try {
      reg.watcher.onEvent(event);
    } catch (err) {
      this.#onWatcherError(err);
    }
  }
}
