// The watcher's logic: Kubernetes changes in, acknowledged KUBE messages out.
//
// For each change reported by a watch (one per kind): trim and validate it (toDomain); an
// invalid object goes to `dlq.<cluster>.watcher` with its reason, field and raw body, never to
// KUBE. A valid one is published with Nats-Msg-Id `<cluster>/<uid>/<resourceVersion>` and the
// ack is awaited before the same object's next change is sent (KeyedWindow), with up to
// `publishWindow` objects in flight. The queue behind the window is not bounded: client-node
// offers no way to pause a watch stream, so its length is exported (watcher_queued_changes).
//
// `published` mirrors what KUBE last recorded per object. At start it is read back from the
// stream (KubeLog.lastStates) and handed to the watches as their seed, so the first list also
// yields the deletes that happened while no watcher ran, and versions KUBE already holds are
// not sent again. It also decides what a delete means: an object never published (always
// invalid) has nothing to delete; one whose final state is invalid is deleted with its last
// valid body.
//
// KUBE's last message per subject is always the newest version any replica saw: each publish
// expects the subject's last sequence this replica knows of. When another replica (or the
// slicer's compaction) appended meanwhile, the stream refuses, and the subject's last message
// decides: if it supersedes ours or is the same version (supersedes in @slicemesh/model), ours
// is stale and dropped (skipped, reason `stale`); otherwise ours goes after it. Without this, a
// lagging replica's older version could land after a newer one and become the last message,
// which readers of the last message alone (a watcher's readback, an agent's node) would take.
//
// EndpointSlices are published only when they are not ours (isOwnSlice in @slicemesh/contracts):
// the slicer's own slices reach the hints service on SLICES, and once the publisher writes them
// into the API the watcher must not echo them back. A slice that becomes ours (its managed-by
// label changed) is deleted from KUBE as if it had gone; one that stops being ours appears.
//
// ServiceExports (MCS) are a CRD's: where the API answers 404 for them (or 403: no RBAC for
// them), their watch reports `not-served` once (logged), counts as listed (the watcher is ready
// with the other kinds) and lists again every minute, so installing the CRDs (or granting the
// ClusterRole) later needs no restart.

import { isOwnSlice, ownManagers } from '@slicemesh/contracts';
import type { OwnManagers } from '@slicemesh/contracts';
import { asDeleted, objectKeyOf, toDomain, WATCHED_KINDS } from '@slicemesh/kube';
import type { KubeChangeType, ObjectWatchEvent, ObjectWatchStatus, WatchedKind, WatchedObject } from '@slicemesh/kube';
import { InvalidObjectError, supersedes } from '@slicemesh/model';
import type { ObjectVersion } from '@slicemesh/model';
import { PublishError, WrongLastSequenceError } from '@slicemesh/nats';
import type { DeadLetter, PublishResult } from '@slicemesh/nats';
import type { Clock, Logger, TimerHandle } from '@slicemesh/runtime';
import { KeyedWindow } from './keyed-window.ts';
import { eventFor } from './kube-message.ts';
import type { KubeMessage, SubjectLayout } from './kube-message.ts';
import type { KubeLog, StoredKubeEvent } from './kube-log.ts';
import { PublishOutage } from './publish-outage.ts';
import type { WatcherMetrics } from './watcher-metrics.ts';

/** A running list+watch of one kind (ObjectWatch from @slicemesh/kube, or a test fake). */
export interface ChangeWatch {
  /** Resolves once the first list has been reported through onEvent. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface ChangeHandlers {
  onEvent(event: ObjectWatchEvent): void;
  onStatus(status: ObjectWatchStatus): void;
}

/** Opens the watch of `kind`, seeded with the objects KUBE records as present. */
export type OpenWatch = (kind: WatchedKind, seed: readonly WatchedObject[], handlers: ChangeHandlers) => ChangeWatch;

export interface WatcherCoreOptions {
  /** The cluster ID: first token of every subject and msgID. */
  readonly cluster: string;
  readonly layout: SubjectLayout;
  /** Largest trimmed object published (see toDomain). */
  readonly maxObjectBytes: number;
  /** Objects with a publish in flight at once. */
  readonly publishWindow: number;
  /** Defaults to WATCHED_KINDS. */
  readonly kinds?: readonly WatchedKind[];
  /** Managed-by values of our own EndpointSlices, which are not published. Defaults to ownManagers(). */
  readonly ownManagers?: OwnManagers;
  /** Wait before retry `attempt` (0-based) of a transiently failed publish, ms. */
  readonly retryDelayMs: (attempt: number) => number;
}

export interface WatcherPorts {
  readonly kubeLog: KubeLog;
  readonly openWatch: OpenWatch;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: WatcherMetrics;
}

/** Counts since start (the metrics hold the same, labelled). */
export interface WatcherStats {
  readonly published: number;
  readonly duplicates: number;
  readonly deadLetters: number;
  readonly skipped: number;
}

export interface RunningWatcher {
  /** Resolves once every object of the initial lists is in KUBE (or the DLQ); rejects if start fails or close() comes first. */
  readonly ready: Promise<void>;
  /** Stops the watches, drops unpublished changes (the next start recovers them) and waits for in-flight publishes. */
  close(): Promise<void>;
  stats(): WatcherStats;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The labels of a raw object, when it has a string map of them. */
function labelsOf(raw: unknown): Readonly<Record<string, string>> | undefined {
  const meta = isRecord(raw) ? raw['metadata'] : undefined;
  const labels = isRecord(meta) ? meta['labels'] : undefined;
  return isRecord(labels) ? (labels as Record<string, string>) : undefined;
}

function uidOf(raw: unknown): string | undefined {
  const meta = isRecord(raw) ? raw['metadata'] : undefined;
  return isRecord(meta) && typeof meta['uid'] === 'string' && meta['uid'] !== '' ? meta['uid'] : undefined;
}

/** The later of two resourceVersions (numeric when both are integers; else `a`). */
function laterVersion(a: string, b: string | undefined): string {
  if (b === undefined || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return a;
  return BigInt(b) > BigInt(a) ? b : a;
}

/** Thrown out of a publish when close() interrupts its retries. */
class Closed extends Error {}

const versionOf = (e: { readonly type: string; readonly object: { readonly metadata: { readonly resourceVersion?: string } } }): ObjectVersion => ({
  resourceVersion: e.object.metadata.resourceVersion ?? '',
  deleted: e.type === 'Deleted.v1',
});

/**
 * Starts the watches and the publish pipeline. See the file comment for what is published.
 *
 * ### Examples
 * ```ts
 * const w = runWatcher({ cluster: 'c1', layout: { partitions: 4 }, maxObjectBytes: 512 * 1024, publishWindow: 256, retryDelayMs: () => 1000 },
 *   { kubeLog, openWatch, clock: realClock, log, metrics });
 * await w.ready;
 * ```
 */
export function runWatcher(opts: WatcherCoreOptions, ports: WatcherPorts): RunningWatcher {
  const { cluster, layout } = opts;
  const { kubeLog, clock, metrics } = ports;
  const log = ports.log.child({ cluster });
  const own = opts.ownManagers ?? ownManagers();
  const published = new Map<string, WatchedObject>();
  // subject → the sequence of its last message as far as this replica knows (none: 0). A
  // subject whose last message is a delete is forgotten, so churn (a new name per pod) does not
  // grow it; re-creating a name then costs one refused publish and a read.
  const lastSeq = new Map<string, number>();
  function noteLast(subject: string, seq: number, deleted: boolean): void {
    if (deleted) lastSeq.delete(subject);
    else lastSeq.set(subject, Math.max(seq, lastSeq.get(subject) ?? 0));
  }
  const watches: ChangeWatch[] = [];
  const sleepers = new Set<{ timer: TimerHandle; wake: () => void }>();
  const stats = { published: 0, duplicates: 0, deadLetters: 0, skipped: 0 };
  let closed = false;
  // Changes of the initial lists not yet done: `ready` waits for them, not for later ones.
  let synced = false;
  let initialPending = 0;
  let initialDone: () => void = () => {};
  const initialFlushed = new Promise<void>((resolve) => (initialDone = resolve));

  const outage = new PublishOutage(log, () => clock.now());
  const window = new KeyedWindow({
    window: opts.publishWindow,
    onError: (err, key) => {
      if (!(err instanceof Closed)) log.error({ err, key }, 'change dropped: unexpected failure');
    },
  });

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = { timer: undefined as unknown as TimerHandle, wake: resolve };
      entry.timer = clock.setTimer(() => {
        sleepers.delete(entry);
        resolve();
      }, ms);
      sleepers.add(entry);
    });
  }

  /** Retries transient failures until closed; rethrows permanent ones (PublishError, not exhausted). */
  async function withRetries<T>(subject: string, send: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new Closed();
      let result: T;
      try {
        result = await send();
      } catch (err) {
        if (err instanceof PublishError && !err.retriesExhausted) throw err;
        if (closed) throw new Closed();
        const delay = opts.retryDelayMs(attempt);
        metrics.retries.inc();
        outage.failed(err, subject, delay);
        await sleep(delay);
        continue;
      }
      outage.succeeded();
      return result;
    }
  }

  async function deadLetter(kind: WatchedKind, raw: unknown, reason: string, field: string | undefined): Promise<void> {
    const letter: DeadLetter = { reason, ...(field !== undefined ? { field } : {}), object: raw, at: new Date(clock.now()).toISOString() };
    log.warn({ kind, field, reason }, 'object rejected to the dead-letter stream');
    try {
      await withRetries(`dlq.${cluster}.watcher`, () => kubeLog.deadLetter(cluster, letter));
    } catch (err) {
      if (err instanceof Closed) throw err;
      log.error({ err, kind, reason }, 'dead letter could not be stored');
      return;
    }
    stats.deadLetters++;
    metrics.deadLetters.inc({ kind });
  }

  /** What KUBE last recorded for the object under `key` is now `stored`. */
  function recorded(key: string, stored: StoredKubeEvent): void {
    noteLast(stored.subject, stored.seq, stored.event?.type === 'Deleted.v1');
    if (stored.event?.type === 'Upserted.v1') published.set(key, stored.event.object);
    else if (stored.event !== undefined) published.delete(key);
  }

  /**
   * Appends `msg` unless KUBE's last message for its subject is the same or a newer version (see
   * the file comment); the result of the append, or the stored message that made ours stale.
   */
  async function appendIfNewest(msg: KubeMessage): Promise<PublishResult | StoredKubeEvent> {
    for (;;) {
      try {
        return await withRetries(msg.subject, () => kubeLog.publish(msg, lastSeq.get(msg.subject) ?? 0));
      } catch (err) {
        if (!(err instanceof WrongLastSequenceError)) throw err;
      }
      metrics.conflicts.inc();
      const last = await withRetries(msg.subject, () => kubeLog.lastOf(msg.subject));
      lastSeq.set(msg.subject, last?.seq ?? 0);
      // An unreadable last message cannot be ordered against: ours, a valid version, goes after it.
      if (last?.event !== undefined && !supersedes(versionOf(msg.event), versionOf(last.event))) return last;
    }
  }

  /** Publishes `msg` for the object under `key`, keeping `published` in step with what KUBE records. */
  async function send(kind: WatchedKind, key: string, msg: KubeMessage, observedAt: number): Promise<void> {
    let result: PublishResult | StoredKubeEvent;
    try {
      result = await appendIfNewest(msg);
    } catch (err) {
      if (!(err instanceof PublishError)) throw err;
      return deadLetter(kind, msg.event.object, `publish refused: ${err.reason}`, undefined);
    }
    if ('subject' in result) {
      recorded(key, result);
      skip(kind, 'stale');
      log.debug({ subject: msg.subject, msgID: msg.msgID, storedSeq: result.seq }, 'KUBE already holds a newer version: not appended');
      return;
    }
    // A duplicate's seq is the earlier message's, which may precede what is known to follow it (noteLast keeps the later).
    recorded(key, { subject: msg.subject, seq: result.seq, event: msg.event });
    const op = msg.event.type === 'Deleted.v1' ? 'delete' : 'upsert';
    metrics.latency.observe({ kind }, Math.max(0, clock.now() - observedAt) / 1000);
    if (result.duplicate) {
      stats.duplicates++;
      metrics.duplicates.inc({ kind });
      log.debug({ subject: msg.subject, seq: result.seq, msgID: msg.msgID }, 'already in KUBE (duplicate msgID)');
    } else {
      stats.published++;
      metrics.published.inc({ kind, op });
    }
  }

  function message(type: KubeChangeType, obj: WatchedObject, observedAt: number): KubeMessage {
    return eventFor(type, obj, cluster, observedAt, layout);
  }

  function skip(kind: WatchedKind, reason: string): void {
    stats.skipped++;
    metrics.skipped.inc({ kind, reason });
  }

  async function upsert(kind: WatchedKind, key: string, raw: unknown, observedAt: number): Promise<void> {
    // Ours: read from the raw labels, so our own slices are never validated or published. One
    // that was foreign before (its label changed) leaves KUBE the way a deleted object does.
    if (kind === 'EndpointSlice' && isOwnSlice(labelsOf(raw), own)) {
      const prev = published.get(key);
      if (prev === undefined) return skip(kind, 'own-slice');
      const rv = isRecord(raw) && isRecord(raw['metadata']) && typeof raw['metadata']['resourceVersion'] === 'string' ? raw['metadata']['resourceVersion'] : '';
      return remove(kind, key, prev, laterVersion(rv, prev.metadata.resourceVersion), observedAt);
    }
    let obj: WatchedObject;
    let msg: KubeMessage;
    try {
      obj = toDomain(kind, raw, { maxObjectBytes: opts.maxObjectBytes });
      msg = message('Upserted.v1', obj, observedAt);
    } catch (err) {
      if (!(err instanceof InvalidObjectError)) throw err;
      return deadLetter(kind, raw, err.message, err.field);
    }
    const prev = published.get(key);
    if (prev !== undefined && prev.metadata.uid === obj.metadata.uid) {
      if (prev.metadata.resourceVersion === obj.metadata.resourceVersion) return skip(kind, 'unchanged');
      // KUBE already holds a newer version (a list served from a lagging cache, say).
      if (!supersedes(versionOf(msg.event), versionOf({ type: 'Upserted.v1', object: prev }))) return skip(kind, 'stale');
    }
    if (prev !== undefined && prev.metadata.uid !== obj.metadata.uid) {
      // The old object's delete was never seen: record it before its successor.
      await send(kind, key, message('Deleted.v1', asDeleted(prev, prev.metadata.resourceVersion ?? ''), observedAt), observedAt);
    }
    await send(kind, key, msg, observedAt);
  }

  async function remove(kind: WatchedKind, key: string, raw: unknown, resourceVersion: string, observedAt: number): Promise<void> {
    const prev = published.get(key);
    const uid = uidOf(raw);
    if (prev === undefined || (uid !== undefined && uid !== prev.metadata.uid)) return skip(kind, 'never-published');
    let body = prev;
    try {
      const last = toDomain(kind, raw, { maxObjectBytes: opts.maxObjectBytes });
      // A slice that left a selector-filtered watch by becoming ours: KUBE keeps its last foreign state.
      if (last.metadata.uid === prev.metadata.uid && !(last.kind === 'EndpointSlice' && isOwnSlice(last.metadata.labels, own))) body = last;
    } catch {
      // Its final state is invalid: delete it with the last state KUBE has.
    }
    const msg = message('Deleted.v1', asDeleted(body, laterVersion(resourceVersion, prev.metadata.resourceVersion)), observedAt);
    await send(kind, key, msg, observedAt);
  }

  function push(key: string, task: () => Promise<void>): void {
    const initial = !synced;
    if (initial) initialPending++;
    window.push(key, async () => {
      try {
        await task();
      } finally {
        metrics.queued.set(window.queued);
        if (initial && --initialPending === 0 && synced) initialDone();
      }
    });
    metrics.queued.set(window.queued);
  }

  function onEvent(e: ObjectWatchEvent): void {
    if (closed) return;
    const observedAt = clock.now();
    switch (e.type) {
      case 'upsert':
        return push(`${e.kind}/${e.key}`, () => upsert(e.kind, `${e.kind}/${e.key}`, e.object, observedAt));
      case 'delete':
        return push(`${e.kind}/${e.key}`, () => remove(e.kind, `${e.kind}/${e.key}`, e.object, e.resourceVersion, observedAt));
      case 'malformed':
        return push(`${e.kind}//malformed`, () => deadLetter(e.kind, e.object, `${e.kind} object: ${e.reason}`, 'metadata'));
      default: {
        const unknown: never = e;
        log.error({ event: unknown }, 'unknown watch event');
      }
    }
  }

  function onStatus(s: ObjectWatchStatus): void {
    const at = { kind: s.kind };
    switch (s.type) {
      case 'listed':
        if (s.relist) metrics.relists.inc({ kind: s.kind });
        return log.info({ ...at, resourceVersion: s.resourceVersion, items: s.items, relist: s.relist }, s.relist ? 're-listed' : 'listed');
      case 'expired':
        return log.warn({ ...at, detail: s.detail }, 'watch history expired (410): re-listing');
      case 'error':
        metrics.restarts.inc({ kind: s.kind });
        return log.warn({ ...at, err: s.error, attempt: s.attempt, restartInMs: s.restartInMs }, 'watch failed: restarting');
      case 'restarted':
        return log.info({ ...at, attempt: s.attempt }, 'watch restarted');
      case 'handler-error':
        return log.error({ ...at, err: s.error }, 'event handler failed');
      case 'not-served':
        // Reported once until the kind is listed again (then 'listed' says so).
        if (s.reason === 'forbidden') {
          return log.warn({ ...at, retryInMs: s.retryInMs }, `${s.kind}s may not be listed (403: does the watcher's ClusterRole grant list and watch on them?): watching the other kinds, listing again every ${Math.round(s.retryInMs / 1000)} s`);
        }
        return log.info({ ...at, retryInMs: s.retryInMs }, `${s.kind}s are not served by this API server (their CRDs are not installed): watching the other kinds, listing again every ${Math.round(s.retryInMs / 1000)} s`);
      default: {
        const unknown: never = s;
        log.error({ status: unknown }, 'unknown watch status');
      }
    }
  }

  async function start(): Promise<void> {
    const states = await kubeLog.lastStates(cluster, (subject, reason) => log.warn({ subject, reason }, 'unreadable KUBE message ignored'));
    for (const stored of states) {
      const ev = stored.event;
      if (ev !== undefined) recorded(`${ev.kind}/${objectKeyOf(ev.kind, ev.object) ?? ''}`, stored);
      else noteLast(stored.subject, stored.seq, false);
    }
    log.info({ objects: published.size }, 'read the last recorded state from KUBE');
    if (closed) throw new Error('watcher closed before it was ready');
    for (const kind of opts.kinds ?? WATCHED_KINDS) {
      const seed = [...published.values()].filter((o) => o.kind === kind);
      watches.push(ports.openWatch(kind, seed, { onEvent, onStatus }));
    }
    await Promise.all(watches.map((w) => w.start()));
    if (closed) throw new Error('watcher closed before it was ready');
    synced = true;
    if (initialPending === 0) initialDone();
    await initialFlushed;
    if (closed) throw new Error('watcher closed before it was ready');
    log.info({ published: stats.published, duplicates: stats.duplicates, deadLetters: stats.deadLetters }, 'initial lists published');
  }

  const ready = start();
  ready.catch(() => {}); // observed by the caller; never an unhandled rejection here

  return {
    ready,
    stats: () => ({ ...stats }),
    close: async () => {
      if (closed) return;
      closed = true;
      await Promise.all(watches.map((w) => w.stop()));
      for (const s of sleepers) {
        clock.clearTimer(s.timer);
        s.wake();
      }
      sleepers.clear();
      await window.close();
      initialDone();
    },
  };
}
