// A scripted cluster for unit tests: objects go through ingest (nodes through the node
// consumer) into the projection and the in-memory store, reconciles run on demand, and every
// message is kept so a test can replay the same log.

import { ClusterState } from '@slicemesh/core';
import type { EndpointSlice } from '@slicemesh/model';
import { MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import { DirtyMarks } from '../dirty-marks.ts';
import type { IngestDeps, IngestMessage, IngestOutcome } from '../ingest.ts';
import { ingestBatch } from '../ingest.ts';
import type { ReconcileDeps, ReconcileOutcome } from '../reconcile.ts';
import { reconcileBatch } from '../reconcile.ts';
import { restoreProjection } from '../store.ts';
import { MemoryStore } from './memory-store.ts';
import type { WatchedObject } from './kube-events.ts';
import { atVersion, kubeMessage } from './kube-events.ts';

export const PART = 'KUBE/p0';
export const NODES = 'KUBE/nodes';

/** A scripted cluster: objects are ingested in order, nodes through the node consumer. */
export class Harness {
  readonly store: MemoryStore;
  state = new ClusterState();
  readonly offsets = new Map<string, number>();
  dirty = new DirtyMarks();
  seq = 0;
  rv = 100;
  reconciles = 0;
  ingestDeps: IngestDeps;
  deps: ReconcileDeps;
  /** Every message ingested, in order (node messages included). */
  readonly log: IngestMessage[] = [];

  constructor(o: { max?: number; store?: MemoryStore } = {}) {
    this.store = o.store ?? new MemoryStore();
    this.ingestDeps = this.#ingestDeps();
    this.deps = {
      state: this.state,
      offsets: this.offsets,
      dirty: this.dirty,
      store: this.store,
      cluster: 'c1',
      partitions: 1,
      prefix: 'stage.',
      settings: { managedBy: MANAGED_BY_CONTROLLER, maxEndpointsPerSlice: o.max ?? 100 },
      partitionConsumer: () => PART,
      nodesSeq: () => this.offsets.get(NODES) ?? 0,
      triggerTimes: new TriggerTimeTracker(),
      randomId: () => String(++this.reconciles),
    };
  }

  #ingestDeps(): IngestDeps {
    return { state: this.state, offsets: this.offsets, store: this.store, deadLetters: { publish: async () => {} }, cluster: 'c1', partitions: 1, prefix: '', batchPeriodMs: 0 };
  }

  /** Ingests one message as the slicer would, marking the Services it affects. */
  async ingest(consumer: string, msg: IngestMessage): Promise<IngestOutcome> {
    const [out] = await ingestBatch(consumer, [msg], this.ingestDeps);
    if (out === undefined) throw new Error('ingestBatch returned no outcome');
    for (const k of out.keys) this.dirty.mark(k, msg.seq);
    return out;
  }

  async put(obj: WatchedObject, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1'): Promise<void> {
    const msg = kubeMessage(++this.seq, atVersion(obj, ++this.rv), { type });
    this.log.push(msg);
    const out = await this.ingest(obj.kind === 'Node' ? NODES : PART, msg);
    if (out.result === 'dead-lettered') throw new Error(`test object rejected: ${out.reason}`);
  }

  async reconcile(name: string, namespace = 'default'): Promise<ReconcileOutcome> {
    const [out] = await reconcileBatch([`${namespace}/${name}`], this.deps);
    if (out === undefined) throw new Error('reconcileBatch returned no outcome');
    return out;
  }

  /** Reconciles every marked Service in one batch, as the slicer's loop does. */
  reconcileDirty(): Promise<ReconcileOutcome[]> {
    return reconcileBatch(this.dirty.list().map((d) => d.key), this.deps);
  }

  /** A restarted slicer: projection restored from the store, marks and trigger times afresh, every known key marked. */
  async restart(): Promise<void> {
    this.state = new ClusterState();
    this.dirty = new DirtyMarks();
    const snap = await this.store.loadSnapshot([PART, NODES]);
    await restoreProjection(this.state, snap);
    for (const [c, n] of snap.offsets) this.offsets.set(c, n);
    for (const k of this.state.reconcilableKeys()) this.dirty.mark(k, this.offsets.get(PART) ?? 0);
    this.ingestDeps = this.#ingestDeps();
    this.deps = { ...this.deps, state: this.state, dirty: this.dirty, triggerTimes: new TriggerTimeTracker() };
  }

  slices(): readonly EndpointSlice[] {
    return this.store.slices;
  }
}
