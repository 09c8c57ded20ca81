// ObjectWatch: a client-node informer (ListWatch) for one kind across all namespaces, made
// reliable enough to feed an event log.
//
// What client-node 1.4 does by itself (dist/cache.js, dist/watch.js):
// - a watch that ends cleanly is re-opened from the last resourceVersion (no re-list);
// - 410 Gone, as an HTTP status or as an ERROR event followed by the end of the stream, resets
//   the resourceVersion, so the next round re-lists, and it emits `delete` for cached objects
//   missing from the new list (keyed by namespace/name only);
// - any other failure (connection refused or reset, 5xx, a failed list) calls the `error`
//   callbacks and STOPS: nothing restarts it;
// - an event whose object it cannot key is dropped silently inside the watch's line handler.
//
// What ObjectWatch adds:
// - restarts after `error` with backoff; the restarted informer re-watches from its last
//   resourceVersion, and a 410 then turns that into a re-list, so nothing is skipped;
// - its own record of every object it has reported (uid + resourceVersion per key), compared
//   with each (re)list: keys gone from the list get a `delete` at the list's resourceVersion,
//   keys whose uid changed (deleted and re-created while the watch was down) get a `delete` of
//   the old uid at its last version before the new object's `upsert`. client-node's own relist
//   deletes then find nothing left to delete and are dropped, as are repeats of a version already
//   reported (a re-list returns unchanged objects again). Should a double slip through anyway it
//   is harmless downstream: the KUBE stream de-duplicates on `<cluster>/<uid>/<rv>`;
// - a `seed` of objects reported by an earlier run (what the KUBE stream last recorded), so the
//   first list also yields the deletes that happened while no watcher was running;
// - objects it cannot key are reported as `malformed` instead of vanishing.

import { ListWatch, Watch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { listRaw } from './list.ts';
import { openWatchStream } from './watch-stream.ts';
import type { ListOptions } from './list.ts';
import { objectKeyOf, OPTIONAL_KINDS, withTypeMeta } from './to-domain.ts';
import type { WatchedKind } from './to-domain.ts';

/** Collection paths (all namespaces) of the watched kinds. */
export const KIND_PATHS: Readonly<Record<WatchedKind, string>> = {
  Pod: '/api/v1/pods',
  Service: '/api/v1/services',
  Endpoints: '/api/v1/endpoints',
  Node: '/api/v1/nodes',
  EndpointSlice: '/apis/discovery.k8s.io/v1/endpointslices',
  ServiceExport: '/apis/multicluster.x-k8s.io/v1alpha1/serviceexports',
};

/** Why a delete is reported. */
export type DeleteCause =
  /** A DELETED watch event; resourceVersion is the deletion's. */
  | 'watch'
  /** Missing from a (re)list; resourceVersion is the list's (it was gone by then). */
  | 'vanished'
  /** Same key, another uid in a (re)list; resourceVersion is the old object's last known. */
  | 'replaced';

export type ObjectWatchEvent =
  /** A new object or a new version of one (raw JSON, kind/apiVersion filled in). */
  | { readonly type: 'upsert'; readonly kind: WatchedKind; readonly key: string; readonly object: unknown }
  /** `object` is the last version reported (for a watch delete: the event's object). */
  | { readonly type: 'delete'; readonly kind: WatchedKind; readonly key: string; readonly object: unknown; readonly resourceVersion: string; readonly cause: DeleteCause }
  /** Something the server sent that has no usable metadata.name/namespace. */
  | { readonly type: 'malformed'; readonly kind: WatchedKind; readonly object: unknown; readonly reason: string };

/** Typed status for the caller to log and count (the library never logs). */
export type ObjectWatchStatus =
  | { readonly type: 'listed'; readonly kind: WatchedKind; readonly resourceVersion: string; readonly items: number; readonly relist: boolean }
  /** The watch's history is gone (410): a re-list follows at once. */
  | { readonly type: 'expired'; readonly kind: WatchedKind; readonly detail: string }
  /** The informer stopped on an error; it is started again after `restartInMs`. */
  | { readonly type: 'error'; readonly kind: WatchedKind; readonly error: unknown; readonly attempt: number; readonly restartInMs: number }
  | { readonly type: 'restarted'; readonly kind: WatchedKind; readonly attempt: number }
  /**
   * The API answers 404 for an optional kind (`not-found`: its CRD is not installed) or 403
   * (`forbidden`: RBAC does not let us list it): start() resolves, and the list is tried again
   * every `retryInMs`. On 404 what was known is reported deleted (the API deletes a CRD's objects
   * with it); on 403 it is kept (the objects may well exist). Reported once until listed again.
   */
  | { readonly type: 'not-served'; readonly kind: WatchedKind; readonly reason: 'not-found' | 'forbidden'; readonly retryInMs: number }
  /** `onEvent` threw; the event is lost to the caller (client-node would swallow it silently). */
  | { readonly type: 'handler-error'; readonly kind: WatchedKind; readonly error: unknown };

export interface ObjectWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly kind: WatchedKind;
  /** Receives every event, synchronously, in the order the server's changes happened. Must not throw. */
  readonly onEvent: (event: ObjectWatchEvent) => void;
  readonly onStatus?: (status: ObjectWatchStatus) => void;
  /** Objects an earlier run reported and never deleted (need metadata name, uid, resourceVersion). */
  readonly seed?: readonly unknown[];
  /** Delay before restart number `attempt` (0-based), ms. Defaults to 500 ms doubling to 30 s. */
  readonly restartDelayMs?: (attempt: number) => number;
  readonly list?: ListOptions;
  /**
   * Watch only the objects matching this label selector (list and watch both). An object that
   * stops matching is reported as a delete, one that starts matching as an upsert.
   */
  readonly labelSelector?: string;
  /** How often an optional kind the API does not serve is tried again, ms. Defaults to 60 s. */
  readonly notServedRetryMs?: number;
}

/** See ObjectWatchOptions.notServedRetryMs. */
export const DEFAULT_NOT_SERVED_RETRY_MS = 60_000;

interface Known {
  readonly uid: string;
  readonly resourceVersion: string;
  readonly object: unknown;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function versionOf(obj: unknown): { uid: string; resourceVersion: string } {
  const meta = isRecord(obj) && isRecord(obj['metadata']) ? obj['metadata'] : {};
  return {
    uid: typeof meta['uid'] === 'string' ? meta['uid'] : '',
    resourceVersion: typeof meta['resourceVersion'] === 'string' ? meta['resourceVersion'] : '',
  };
}

const defaultRestartDelay = (attempt: number): number => Math.min(30_000, 500 * 2 ** Math.min(attempt, 6));

/** The HTTP status of a failed list (KubeApiError) or watch (client-node's error), else undefined. */
function statusCodeOf(err: unknown): number | undefined {
  if (!isRecord(err)) return undefined;
  const code = err['statusCode'] ?? err['code'];
  return typeof code === 'number' ? code : undefined;
}

/** Sees what client-node's informer sees: the watch requests, their events and how they end. */
class ObservedWatch extends Watch {
  private readonly owner: ObjectWatch;

  constructor(
    config: KubeConfig,
    owner: ObjectWatch,
  ) {
    super(config);
    this.owner = owner;
  }

  // Our own reader of the watch stream (watch-stream.ts): client-node's splits lines at U+2028.
  override watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.owner.watchOpened();
    return openWatchStream(this.config, {
      path,
      query,
      // client-node's Watch default: a watch with nothing (not even a bookmark) for 30 s is restarted.
      idleTimeoutMs: 30_000,
      onEvent: (phase, obj, raw) => {
        if (this.owner.screen(phase, obj)) callback(phase, obj, raw);
      },
      onDone: (err: unknown) => {
        this.owner.watchEnded(err);
        done(err);
      },
    });
  }
}

/**
 * A self-restarting informer for one kind. Create it, call `start()` (resolves once the first
 * list has been reported), and `stop()` when done. Events arrive through `onEvent`.
 *
 * ### Examples
 * ```ts
 * const pods = new ObjectWatch({ kubeConfig, kind: 'Pod', onEvent: (e) => queue.push(e) });
 * await pods.start();   // every pod has been reported as an upsert
 * await pods.stop();
 * ```
 */
export class ObjectWatch {
  readonly kind: WatchedKind;
  readonly #opts: ObjectWatchOptions;
  #informer: ListWatch<KubernetesObject>;
  /** What has been reported and not deleted, by key. Only touched from client-node callbacks. */
  readonly #known = new Map<string, Known>();
  #lists = 0;
  #attempt = 0;
  #restartTimer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #synced = false;
  /** Set while the API answers 404 for this (optional) kind. */
  #notServed = false;
  #resolveSynced: () => void = () => {};
  readonly #syncedPromise: Promise<void>;

  constructor(opts: ObjectWatchOptions) {
    this.kind = opts.kind;
    this.#opts = opts;
    for (const obj of opts.seed ?? []) {
      const key = objectKeyOf(opts.kind, obj);
      if (key !== undefined) this.#known.set(key, { ...versionOf(obj), object: obj });
    }
    this.#syncedPromise = new Promise((resolve) => (this.#resolveSynced = resolve));
    this.#informer = this.#newInformer();
  }

  #newInformer(): ListWatch<KubernetesObject> {
    const watch = new ObservedWatch(this.#opts.kubeConfig, this);
    const informer = new ListWatch<KubernetesObject>(KIND_PATHS[this.kind], watch, () => this.#list(), false, this.#opts.labelSelector);
    informer.on('add', (obj) => this.#upsert(obj));
    informer.on('update', (obj) => this.#upsert(obj));
    informer.on('delete', (obj) => this.#delete(obj));
    informer.on('error', (err: unknown) => this.#failed(err));
    return informer;
  }

  /** Starts listing and watching. Resolves once the first list has been reported (or on stop()). */
  start(): Promise<void> {
    this.#stopped = false;
    this.#informer.start().catch((err: unknown) => this.#failed(err));
    return this.#syncedPromise;
  }

  /** Stops watching and cancels a pending restart. Events stop at once. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#restartTimer !== undefined) clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    this.#resolveSynced();
    await this.#informer.stop();
  }

  /** Number of objects currently known (reported and not deleted). */
  get size(): number {
    return this.#known.size;
  }

  #emit(event: ObjectWatchEvent): void {
    if (this.#stopped) return;
    try {
      this.#opts.onEvent(event);
    } catch (error) {
      this.#status({ type: 'handler-error', kind: this.kind, error });
    }
  }

  #status(status: ObjectWatchStatus): void {
    if (!this.#stopped) this.#opts.onStatus?.(status);
  }

  async #list(): Promise<KubernetesListObject<KubernetesObject>> {
    const listOpts = this.#opts.labelSelector === undefined ? this.#opts.list : { ...this.#opts.list, labelSelector: this.#opts.labelSelector };
    const list = await listRaw(this.#opts.kubeConfig, KIND_PATHS[this.kind], listOpts);
    this.#attempt = 0;
    this.#notServed = false;
    const relist = this.#lists++ > 0;
    const items: KubernetesObject[] = [];
    const listed = new Map<string, string>();
    for (const raw of list.items) {
      const obj = withTypeMeta(this.kind, raw);
      const key = objectKeyOf(this.kind, obj);
      if (key === undefined) {
        this.#emit({ type: 'malformed', kind: this.kind, object: raw, reason: 'metadata.name (or metadata.namespace) is missing or not a string' });
        continue;
      }
      listed.set(key, versionOf(obj).uid);
      items.push(obj as KubernetesObject);
    }
    // Deletes first, so that a re-created object's delete precedes its new version.
    for (const [key, known] of [...this.#known]) {
      const uid = listed.get(key);
      if (uid === known.uid) continue;
      this.#known.delete(key);
      const resourceVersion = uid === undefined ? list.resourceVersion || known.resourceVersion : known.resourceVersion;
      this.#emit({ type: 'delete', kind: this.kind, key, object: known.object, resourceVersion, cause: uid === undefined ? 'vanished' : 'replaced' });
    }
    this.#status({ type: 'listed', kind: this.kind, resourceVersion: list.resourceVersion, items: items.length, relist });
    return { metadata: { resourceVersion: list.resourceVersion }, items };
  }

  #upsert(raw: KubernetesObject): void {
    const obj = withTypeMeta(this.kind, raw);
    const key = objectKeyOf(this.kind, obj);
    if (key === undefined) return; // screened earlier; unreachable
    const version = versionOf(obj);
    const prev = this.#known.get(key);
    if (prev && prev.uid === version.uid && prev.resourceVersion === version.resourceVersion) return;
    if (prev && prev.uid !== version.uid) {
      // Missed DELETED (cannot happen on a live watch, which reports it): report it first.
      this.#emit({ type: 'delete', kind: this.kind, key, object: prev.object, resourceVersion: prev.resourceVersion, cause: 'replaced' });
    }
    this.#known.set(key, { ...version, object: obj });
    this.#emit({ type: 'upsert', kind: this.kind, key, object: obj });
  }

  #delete(raw: KubernetesObject): void {
    const obj = withTypeMeta(this.kind, raw);
    const key = objectKeyOf(this.kind, obj);
    if (key === undefined) return;
    const version = versionOf(obj);
    const prev = this.#known.get(key);
    // Already reported by the re-list diff, or a delete of a uid replaced since.
    if (prev === undefined || prev.uid !== version.uid) return;
    this.#known.delete(key);
    this.#emit({ type: 'delete', kind: this.kind, key, object: obj, resourceVersion: version.resourceVersion || prev.resourceVersion, cause: 'watch' });
  }

  #failed(error: unknown): void {
    if (this.#stopped) return;
    const code = statusCodeOf(error);
    if (OPTIONAL_KINDS.has(this.kind) && (code === 404 || code === 403)) return this.#unserved(code === 404 ? 'not-found' : 'forbidden');
    const attempt = this.#attempt++;
    const restartInMs = (this.#opts.restartDelayMs ?? defaultRestartDelay)(attempt);
    this.#status({ type: 'error', kind: this.kind, error, attempt, restartInMs });
    if (this.#restartTimer !== undefined) clearTimeout(this.#restartTimer);
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#stopped) return;
      this.#status({ type: 'restarted', kind: this.kind, attempt });
      this.#informer.start().catch((err: unknown) => this.#failed(err));
    }, restartInMs);
  }

  /**
   * The API does not serve this kind (or not to us): the caller may carry on (start() resolves),
   * and a fresh informer lists again later (a CRD may be installed, RBAC granted).
   */
  #unserved(reason: 'not-found' | 'forbidden'): void {
    const retryInMs = this.#opts.notServedRetryMs ?? DEFAULT_NOT_SERVED_RETRY_MS;
    if (!this.#notServed) {
      this.#notServed = true;
      this.#status({ type: 'not-served', kind: this.kind, reason, retryInMs });
      for (const [key, known] of reason === 'not-found' ? [...this.#known] : []) {
        this.#known.delete(key);
        this.#emit({ type: 'delete', kind: this.kind, key, object: known.object, resourceVersion: known.resourceVersion, cause: 'vanished' });
      }
    }
    this.#synced = true;
    this.#resolveSynced();
    if (this.#restartTimer !== undefined) clearTimeout(this.#restartTimer);
    const old = this.#informer;
    this.#informer = this.#newInformer();
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (this.#stopped) return;
      this.#informer.start().catch((err: unknown) => this.#failed(err));
    }, retryInMs);
    old.stop().catch(() => {}); // already stopped by its error; nothing to report
  }

  /** Called by ObservedWatch when client-node opens a watch: a list (if any) has been reported. */
  watchOpened(): void {
    if (this.#synced) return;
    this.#synced = true;
    this.#resolveSynced();
  }

  /**
   * Called for every watch event before client-node sees it. Returns false to hide it:
   * objects client-node cannot key would be dropped silently, so they are reported here.
   */
  screen(phase: string, obj: unknown): boolean {
    if (phase === 'ERROR') {
      const code = isRecord(obj) ? obj['code'] : undefined;
      if (code === 410) this.#status({ type: 'expired', kind: this.kind, detail: isRecord(obj) && typeof obj['message'] === 'string' ? obj['message'] : 'Gone' });
      return true;
    }
    if (phase === 'BOOKMARK') return true;
    this.#attempt = 0;
    if (objectKeyOf(this.kind, withTypeMeta(this.kind, obj)) === undefined) {
      this.#emit({ type: 'malformed', kind: this.kind, object: obj, reason: 'metadata.name (or metadata.namespace) is missing or not a string' });
      return false;
    }
    return true;
  }

  /** Called by ObservedWatch when a watch request ends. */
  watchEnded(err: unknown): void {
    if (isRecord(err) && (err['statusCode'] === 410 || err['code'] === 410)) {
      this.#status({ type: 'expired', kind: this.kind, detail: err instanceof Error ? err.message : 'Gone' });
    }
  }
}
