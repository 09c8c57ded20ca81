// Reconciles, level-based (habit 3), in batches: each dirty key of the batch is planned by the
// one composition of the core (planService) against the in-memory projection and its result
// applied to memory at once, so the next key of the batch sees it (new slice names included);
// then the whole batch — slices, SLICES outbox messages, replay records — is written in ONE
// transaction. If that fails, memory is put back and the marks restored, so memory never runs
// ahead of Postgres for longer than one commit.

import type { ClusterState, ReconcileSettings, ServicePlan } from '@slicemesh/core';
import { applySlicePlan, isEmptyPlan, planService, serviceView } from '@slicemesh/core';
import type { OutboxMessage, ReconcileRecord } from '@slicemesh/db';
import type { EndpointSlice, KubeEvent } from '@slicemesh/model';
import type { KubeSeqRange, SliceChangedMessage } from '@slicemesh/contracts';
import { SLICE_CHANGED, makeReconcileID, partitionOf, slicesSubject } from '@slicemesh/contracts';
import type { TriggerTimeTracker } from '@slicemesh/slicing';
import { newReconcileID } from '@slicemesh/runtime';
import type { DirtyMark, DirtyMarks } from './dirty-marks.ts';
import type { SlicerStore } from './ports.ts';

// The SLICES message is the contract's; re-exported for the slicer's callers.
export { SLICE_CHANGED, makeReconcileID, parseReconcileID } from '@slicemesh/contracts';
export type { KubeSeqRange, SliceChangedMessage } from '@slicemesh/contracts';

/** `<namespace>/<name>` → its parts (namespaces are DNS labels: the first '/' separates). */
export function splitServiceKey(key: string): { readonly namespace: string; readonly name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export interface ReconcileDeps {
  readonly state: ClusterState;
  /** Committed offsets by consumer name (ingest keeps them). */
  readonly offsets: ReadonlyMap<string, number>;
  readonly dirty: DirtyMarks;
  readonly store: Pick<SlicerStore, 'commitSlices'>;
  readonly cluster: string;
  readonly partitions: number;
  /** Stream subject prefix (for the SLICES subject). */
  readonly prefix: string;
  readonly settings: ReconcileSettings;
  /** Offset name of the consumer feeding `partition`. */
  readonly partitionConsumer: (partition: number) => string;
  /** The newest node message memory reflects (a replay reads the nodes up to it). */
  readonly nodesSeq: () => number;
  /** A.10 state, kept in memory like upstream's (a restart starts afresh). */
  readonly triggerTimes: TriggerTimeTracker;
  /** Random part of reconcile IDs. Defaults to a UUID prefix. */
  readonly randomId?: () => string;
}

export type ReconcileResult =
  /** Not marked dirty (an earlier reconcile got there first): nothing read or written. */
  | 'clean'
  /** Reconciled; nothing to write. */
  | 'unchanged'
  /** Slices written and a SLICES message queued. */
  | 'changed';

export interface ReconcileOutcome {
  readonly key: string;
  readonly result: ReconcileResult;
  readonly reconcileID?: string;
  readonly kubeSeq?: KubeSeqRange;
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  /** A.3.4 problems: the plan was written, the mark kept; retry with backoff. */
  readonly errors: readonly string[];
  readonly events: readonly KubeEvent[];
  /** Time spent planning this key and applying it to memory, ms (the write is shared). */
  readonly planMs: number;
}

interface Planned {
  readonly outcome: ReconcileOutcome;
  readonly mark: DirtyMark;
  readonly undo: () => void;
}

/**
 * Reconciles `keys` of `deps.cluster` as one batch (see the file comment). Resolves with one
 * outcome per key once the batch is committed; rejects with the store's error after restoring
 * memory and marks (retry the keys with backoff). `now` times the planning of each key.
 */
export async function reconcileBatch(keys: readonly string[], deps: ReconcileDeps, now: () => number = () => 0): Promise<ReconcileOutcome[]> {
  const planned: Planned[] = [];
  const outcomes: ReconcileOutcome[] = [];
  const writes = { upserts: new Map<string, EndpointSlice>(), deletes: new Map<string, { namespace: string; name: string }>(), outbox: [] as OutboxMessage[], records: [] as ReconcileRecord[] };
  try {
    for (const key of keys) {
      const t0 = now();
      const mark = deps.dirty.take(key);
      if (mark === undefined) {
        outcomes.push({ key, result: 'clean', created: 0, updated: 0, deleted: 0, errors: [], events: [], planMs: 0 });
        continue;
      }
      const p = planOne(key, mark, deps, writes);
      planned.push({ ...p, outcome: { ...p.outcome, planMs: now() - t0 } });
      outcomes.push(planned[planned.length - 1]?.outcome as ReconcileOutcome);
    }
    if (planned.length > 0) {
      await deps.store.commitSlices({ cluster: deps.cluster, upserts: [...writes.upserts.values()], deletes: [...writes.deletes.values()], outbox: writes.outbox, records: writes.records });
    }
  } catch (err) {
    for (let i = planned.length - 1; i >= 0; i--) {
      const p = planned[i] as Planned;
      p.undo();
      deps.dirty.restore(p.outcome.key, p.mark);
    }
    throw err;
  }
  // A.3.4: with errors the mark stays, so the retry finds work to do.
  for (const p of planned) if (p.outcome.errors.length > 0) deps.dirty.restore(p.outcome.key, p.mark);
  return outcomes;
}

function planOne(key: string, mark: DirtyMark, deps: ReconcileDeps, writes: { upserts: Map<string, EndpointSlice>; deletes: Map<string, { namespace: string; name: string }>; outbox: OutboxMessage[]; records: ReconcileRecord[] }): Omit<Planned, 'outcome'> & { outcome: ReconcileOutcome } {
  const { namespace, name } = splitServiceKey(key);
  const to = deps.offsets.get(deps.partitionConsumer(partitionOf(namespace, deps.partitions))) ?? 0;
  const nodesTo = deps.nodesSeq();
  const planned: ServicePlan = planService(serviceView(deps.state, namespace, name), {
    ...deps.settings,
    triggerTime: (service, pods, changes) => deps.triggerTimes.computeTriggerTime(service, pods, changes),
  });
  if (planned.mode === 'absent') deps.triggerTimes.deleteService(namespace, name);
  const kubeSeq: KubeSeqRange = { from: mark.sinceSeq, to, nodesTo };
  const reconcileID = makeReconcileID(to, nodesTo, (deps.randomId ?? (() => newReconcileID().slice(0, 8)))());
  let counts = { created: 0, updated: 0, deleted: 0 };
  let undo = (): void => {};
  if (!isEmptyPlan(planned.plan)) {
    const applied = applySlicePlan(deps.state, deps.cluster, planned.plan);
    undo = applied.undo;
    counts = { created: applied.created.length, updated: applied.updated.length, deleted: applied.deleted.length };
    for (const s of applied.deleted) {
      const k = `${namespace}/${s.metadata.name}`;
      writes.upserts.delete(k);
      writes.deletes.set(k, { namespace, name: s.metadata.name });
    }
    for (const s of [...applied.created, ...applied.updated]) {
      const k = `${namespace}/${s.metadata.name}`;
      writes.deletes.delete(k);
      writes.upserts.set(k, s);
    }
    const message: SliceChangedMessage = {
      type: SLICE_CHANGED,
      cluster: deps.cluster,
      namespace,
      service: name,
      upserts: [...applied.created, ...applied.updated].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0)),
      deletes: applied.deleted.map((s) => s.metadata.name).sort(),
      kubeSeq,
      reconcileID,
    };
    writes.outbox.push({
      subject: slicesSubject({ cluster: deps.cluster, partition: partitionOf(namespace, deps.partitions), namespace, service: name }, { prefix: deps.prefix }),
      msgId: { prefix: `${deps.cluster}/outbox/` },
      payload: message,
    });
  }
  writes.records.push({ cluster: deps.cluster, namespace, service: name, kubeSeqFrom: kubeSeq.from, kubeSeqTo: kubeSeq.to, reconcileId: reconcileID, ...counts, settings: deps.settings });
  const changed = counts.created + counts.updated + counts.deleted > 0;
  return {
    mark,
    undo,
    outcome: { key, result: changed ? 'changed' : 'unchanged', reconcileID, kubeSeq, ...counts, errors: planned.errors, events: planned.events, planMs: 0 },
  };
}
