// The fold at the heart of every `log` command: KUBE events, in sequence order, into the same
// ClusterState the slicer keeps; the Services they make dirty are planned by the slicer's
// planService and its writes applied. Because this is the slicer's own composition of the core,
// a replay reaches the slices live reached.
//
// When to reconcile: the live slicer applies what one fetch of the stream returned, then
// reconciles each dirty Service once — events that arrive together are planned together. The
// replay does the same by log time: a batch closes when an event comes more than `windowMs`
// after the batch's first one (or it holds `maxEvents`), and always at the point asked for, so
// every state returned is settled. Events further apart than the window are reconciled one by
// one, as a running slicer would (see docs/log.md).

import type { ObjectChange, ProjectedKind } from '@slicemesh/core';
import { ClusterState, applySlicePlan, isEmptyPlan, planService, serviceView } from '@slicemesh/core';
import type { KubeChange, Rejection } from '@slicemesh/contracts';
import { DELETED, decodeKubeMessage } from '@slicemesh/contracts';
import type { EndpointSlice } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, supersedes } from '@slicemesh/model';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import type { LogEvent, LogSettings, LogSnapshot, ScheduledReconcile, SnapshotObject } from './source.ts';

/** What one slicer reconcile wrote, by slice name. */
export interface SliceWrites {
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly deleted: readonly string[];
}

/** How the replay groups events into reconciles (see the file comment). */
export interface BatchOptions {
  /** Default 1000 ms; 0 reconciles after every event. */
  readonly windowMs: number;
  /** Default 10,000. */
  readonly maxEvents: number;
}

export const DEFAULT_BATCH: BatchOptions = Object.freeze({ windowMs: 1000, maxEvents: 10_000 });

/** The outcome of folding one event. */
export interface Folded {
  readonly event: LogEvent;
  /** The decoded change; undefined when the live reader rejected it too (`rejection`). */
  readonly change?: KubeChange;
  readonly rejection?: Rejection;
  /** The object before the change (live version only); undefined when new. */
  readonly before?: SnapshotObject['object'];
  /** False for a duplicate or stale copy, and for a ServiceExport (the slicer skips it): it changes nothing. */
  readonly applied: boolean;
  /** `ns/name` of the Services the change concerns (dirty ones, and a foreign slice's Service). */
  readonly services: readonly string[];
}

const objectKey = (kind: string, namespace: string, name: string): string => `${kind}/${namespace}/${name}`;

// What a tombstone keeps: enough to refuse a stale copy and to name the object, not its body
// (a long log deletes many pods; their bodies would only cost memory).
function tombstoneOf(o: SnapshotObject['object']): SnapshotObject['object'] {
  const { name, namespace, uid, resourceVersion } = o.metadata;
  const metadata = { name, ...(namespace !== undefined ? { namespace } : {}), ...(uid !== undefined ? { uid } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}) };
  return { kind: o.kind, metadata } as SnapshotObject['object'];
}

export class Replayer {
  readonly settings: LogSettings;
  readonly state = new ClusterState();
  /** Every object version seen (tombstones included), for snapshots and "before" objects. */
  readonly #objects = new Map<string, SnapshotObject>();
  /** Other controllers' slices by `ns/name` (the slicer skips them; hints and proxies use them). */
  readonly #foreign = new Map<string, EndpointSlice>();
  readonly #tracker = new TriggerTimeTracker();
  /** Namespaces of every object seen: where slices may be. */
  readonly #namespaces = new Set<string>();
  readonly #batch: BatchOptions;
  /** Recorded reconciles after the snapshot, in order, and the next one due. */
  readonly #schedule: readonly ScheduledReconcile[];
  #next = 0;
  /** Services to reconcile at the end of the batch, and when the batch began (ms). */
  readonly #dirty = new Set<string>();
  #batchStart: number | null = null;
  #batchEvents = 0;
  #seq: number;
  #time: string;

  constructor(settings: LogSettings, snapshot: LogSnapshot, batch: BatchOptions = DEFAULT_BATCH, schedule: readonly ScheduledReconcile[] = []) {
    this.settings = settings;
    this.#batch = batch;
    this.#schedule = schedule.filter((r) => r.seq > snapshot.seq);
    this.#seq = snapshot.seq;
    this.#time = snapshot.time;
    for (const o of snapshot.objects) {
      const obj = o.object;
      const namespace = obj.kind === 'Node' ? '' : (obj.metadata.namespace ?? 'default');
      this.#objects.set(objectKey(obj.kind, namespace, obj.metadata.name), o);
      if (namespace !== '') this.#namespaces.add(namespace);
      if (obj.kind === 'EndpointSlice') {
        if (!o.deleted) this.#foreign.set(`${namespace}/${obj.metadata.name}`, obj);
        continue;
      }
      this.state.restore({ kind: obj.kind, namespace, name: obj.metadata.name, resourceVersion: obj.metadata.resourceVersion ?? '', deleted: o.deleted, object: obj });
    }
    for (const s of snapshot.slices) {
      this.state.putSlice(s);
      this.#namespaces.add(s.metadata.namespace ?? 'default');
    }
  }

  /** Every slice the slicer wrote, sorted by namespace and name. */
  ourSlices(): EndpointSlice[] {
    const out: EndpointSlice[] = [];
    for (const ns of [...this.#namespaces].sort()) {
      for (const name of [...this.state.sliceNamesIn(ns)].sort()) {
        const s = this.state.slice(ns, name);
        if (s !== undefined) out.push(s);
      }
    }
    return out;
  }

  /** The last folded sequence (the snapshot's before any event). */
  get seq(): number {
    return this.#seq;
  }

  get time(): string {
    return this.#time;
  }

  /** Other controllers' slices, live ones only. */
  foreignSlices(): readonly EndpointSlice[] {
    return [...this.#foreign.values()];
  }

  /** The live object of that kind, if any. */
  object(kind: string, namespace: string, name: string): SnapshotObject['object'] | undefined {
    const o = this.#objects.get(objectKey(kind, namespace, name));
    return o === undefined || o.deleted ? undefined : o.object;
  }

  /** Every object version held, tombstones included (what a snapshot keeps). */
  objects(): readonly SnapshotObject[] {
    return [...this.#objects.values()];
  }

  /** The state after the last folded event, as a snapshot another Replayer can start from. */
  snapshot(): LogSnapshot {
    return { seq: this.#seq, time: this.#time, objects: this.objects(), slices: this.ourSlices() };
  }

  /** Whether `event` comes after the open batch closes (or a recorded reconcile is due): flush() before folding it. */
  closesBatch(event: LogEvent): boolean {
    if (this.#schedule.length > 0) return this.#next < this.#schedule.length && (this.#schedule[this.#next] as ScheduledReconcile).seq < event.seq;
    if (this.#batchStart === null) return false;
    return this.#batchEvents >= this.#batch.maxEvents || Date.parse(event.time) - this.#batchStart > this.#batch.windowMs;
  }

  /** No Service waits for its reconcile (a snapshot taken now loses nothing). */
  get settled(): boolean {
    return this.#dirty.size === 0;
  }

  /** Whether a batch is open (events folded since the last flush). */
  get pending(): boolean {
    return this.#batchStart !== null;
  }

  /**
   * Closes the batch: reconciles every dirty Service (sorted) — or, with recorded reconciles and
   * `settle` false, the Services recorded as reconciled by now. Returns the writes of those
   * whose slices changed.
   */
  flush(settle = false): Map<string, SliceWrites> {
    let keys: string[];
    if (this.#schedule.length > 0 && !settle) {
      const due = new Set<string>();
      while (this.#next < this.#schedule.length && (this.#schedule[this.#next] as ScheduledReconcile).seq <= this.#seq) due.add((this.#schedule[this.#next++] as ScheduledReconcile).service);
      keys = [...due].sort();
    } else keys = [...this.#dirty].sort();
    const writes = new Map<string, SliceWrites>();
    for (const k of keys) {
      this.#dirty.delete(k);
      const w = this.#reconcile(k);
      if (w !== null) writes.set(k, w);
    }
    this.#batchStart = null;
    this.#batchEvents = 0;
    return writes;
  }

  /**
   * Folds one event into the state (see the file comment); its Services are reconciled at the
   * next flush(). Events at or below the current sequence are ignored.
   */
  fold(event: LogEvent): Folded {
    if (event.seq <= this.#seq) return { event, applied: false, services: [] };
    if (this.#batchStart === null) this.#batchStart = Date.parse(event.time);
    this.#batchEvents++;
    this.#seq = event.seq;
    this.#time = event.time;
    const decoded = decodeKubeMessage(
      event.parseError === undefined ? { subject: event.subject, data: event.data } : { subject: event.subject, data: event.data, parseError: event.parseError },
      { cluster: this.settings.cluster, prefix: this.settings.prefix },
    );
    if (!decoded.ok) return { event, rejection: decoded.rejection, applied: false, services: [] };
    const c = decoded.change;
    // The slicer skips ServiceExports (the mcs service reads them): nothing to keep or reconcile.
    if (c.kind === 'ServiceExport') return { event, change: c, applied: false, services: [] };
    const key = objectKey(c.kind, c.namespace, c.name);
    const stored = this.#objects.get(key);
    const deleted = c.type === DELETED;
    const version = { resourceVersion: c.resourceVersion, deleted };
    const beforeObj = stored === undefined || stored.deleted ? undefined : stored.object;
    const base = { event, change: c, ...(beforeObj !== undefined ? { before: beforeObj } : {}) };
    if (stored !== undefined && !supersedes(version, { resourceVersion: stored.object.metadata.resourceVersion ?? '', deleted: stored.deleted })) {
      return { ...base, applied: false, services: [] };
    }
    const object = c.object as SnapshotObject['object']; // ServiceExports returned above
    this.#objects.set(key, deleted ? { deleted, object: tombstoneOf(object) } : { deleted, object });
    if (c.namespace !== '') this.#namespaces.add(c.namespace);
    if (c.kind === 'EndpointSlice') {
      const sliceKey = `${c.namespace}/${c.name}`;
      if (deleted) this.#foreign.delete(sliceKey);
      else this.#foreign.set(sliceKey, c.object as EndpointSlice);
      const owners = new Set([beforeObj, c.object].map((o) => o?.metadata.labels?.[LABEL_SERVICE_NAME]).filter((n): n is string => n !== undefined && n !== ''));
      return { ...base, applied: true, services: [...owners].sort().map((n) => `${c.namespace}/${n}`) };
    }
    const change: ObjectChange = { kind: c.kind as ProjectedKind, namespace: c.namespace, name: c.name, resourceVersion: c.resourceVersion, deleted, object: c.object as ObjectChange['object'] };
    const r = this.state.apply(change);
    for (const k of r.keys) this.#dirty.add(k);
    return { ...base, applied: r.applied, services: r.keys };
  }

  // One slicer reconcile of `key` against the state as it is now.
  #reconcile(key: string): SliceWrites | null {
    const i = key.indexOf('/');
    const namespace = key.slice(0, i);
    const name = key.slice(i + 1);
    const planned = planService(serviceView(this.state, namespace, name), {
      managedBy: this.settings.managedBy,
      maxEndpointsPerSlice: this.settings.maxEndpointsPerSlice,
      triggerTime: (svc, pods, changes) => this.#tracker.computeTriggerTime(svc, pods, changes),
    });
    if (isEmptyPlan(planned.plan)) return null;
    const applied = applySlicePlan(this.state, this.settings.cluster, planned.plan);
    const names = (l: readonly EndpointSlice[]): string[] => l.map((s) => s.metadata.name);
    return { created: names(applied.created), updated: names(applied.updated), deleted: names(applied.deleted) };
  }
}
