// A scripted cluster for unit tests: objects go through ingest (nodes through the node
// consumer) into the in-memory store, reconciles run on demand, and every message is kept so a
// test can replay the same log.

import type { EndpointSlice } from '@slicemesh/model';
import { MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { TriggerTimeTracker } from '@slicemesh/slicing';
import type { IngestDeps, IngestMessage } from '../ingest.ts';
import { ingestMessage } from '../ingest.ts';
import type { ReconcileDeps, ReconcileOutcome } from '../reconcile.ts';
import { reconcileService } from '../reconcile.ts';
import { MemoryStore } from './memory-store.ts';
import type { WatchedObject } from './kube-events.ts';
import { atVersion, kubeMessage } from './kube-events.ts';

export const PART = 'KUBE/p0';
export const NODES = 'KUBE/nodes';

/** A scripted cluster: objects are ingested in order, nodes through the node consumer. */
export class Harness {
  readonly store = new MemoryStore();
  seq = 0;
  rv = 100;
  reconciles = 0;
  readonly ingestDeps: IngestDeps = {
    store: this.store.ingest,
    deadLetters: { publish: async () => {} },
    cluster: 'c1',
    partitions: 1,
    prefix: '',
    ownsPartition: () => true,
    batchPeriodMs: 0,
  };
  deps: ReconcileDeps;
  /** Every message ingested, in order (node messages included). */
  readonly log: IngestMessage[] = [];

  constructor(o: { max?: number } = {}) {
    this.deps = {
      store: this.store.reconcile,
      cluster: 'c1',
      partitions: 1,
      prefix: 'stage.',
      managedBy: MANAGED_BY_CONTROLLER,
      maxEndpointsPerSlice: o.max ?? 100,
      partitionConsumer: () => PART,
      nodesConsumer: NODES,
      triggerTimes: new TriggerTimeTracker(),
      randomId: () => String(++this.reconciles),
    };
  }

  async put(obj: WatchedObject, type: 'Upserted.v1' | 'Deleted.v1' = 'Upserted.v1'): Promise<void> {
    const msg = kubeMessage(++this.seq, atVersion(obj, ++this.rv), { type });
    this.log.push(msg);
    const out = await ingestMessage(obj.kind === 'Node' ? NODES : PART, msg, this.ingestDeps);
    if (out.result === 'dead-lettered') throw new Error(`test object rejected: ${out.reason}`);
  }

  reconcile(name: string, namespace = 'default'): Promise<ReconcileOutcome> {
    return reconcileService({ namespace, name }, this.deps);
  }

  /** Starts trigger-time state afresh, as a restarted slicer would. */
  restart(): void {
    this.deps = { ...this.deps, triggerTimes: new TriggerTimeTracker() };
  }

  slices(): readonly EndpointSlice[] {
    return this.store.slicesOf('c1');
  }
}

