// One reconcile of one Service key, level-based (habit 3): read the whole stored view in one
// snapshot, plan with the pure core, and write slices, the SLICES outbox message, the replay
// record and the cleared mark in one transaction (`finalize` below is the only writer).

import type { EndpointSlice, Endpoints, KubeEvent, Service } from '@slicemesh/model';
import type { AppliedSliceChanges, DirtyService, ServiceKey } from '@slicemesh/db';
import { partitionOf, slicesSubject } from '@slicemesh/nats';
import type { TriggerTimeTracker } from '@slicemesh/slicing';
import { isSelectorless } from '@slicemesh/slicing';
import { newReconcileID } from '@slicemesh/runtime';
import type { ServicePlan, ServiceView } from './plan.ts';
import { isEmptyPlan, planService } from './plan.ts';
import type { ReconcileStore, ReconcileTx } from './ports.ts';

export const SLICE_CHANGED = 'SliceChanged.v1';

/** The KUBE view a reconcile read: every partition message ≤ to and node message ≤ nodesTo was applied. */
export interface KubeSeqRange {
  /** First sequence that marked the Service since its previous reconcile. */
  readonly from: number;
  /** The offset of the Service's partition consumer (kube_seq_to of the replay record). */
  readonly to: number;
  /** The offset of the node consumer. */
  readonly nodesTo: number;
}

/** Body of a SLICES message (one per reconcile that changed something). */
export interface SliceChangedMessage {
  readonly type: typeof SLICE_CHANGED;
  readonly cluster: string;
  readonly namespace: string;
  readonly service: string;
  /** Created and updated slices as stored (uid and generation set), sorted by name. */
  readonly upserts: readonly EndpointSlice[];
  /** Names of deleted slices, sorted. */
  readonly deletes: readonly string[];
  readonly kubeSeq: KubeSeqRange;
  readonly reconcileID: string;
}

/**
 * `p<to>n<nodesTo>-<random>`: unique enough to correlate log lines, and it names the view, so
 * the replay record (which has one sequence column) also carries the node bound.
 */
export function makeReconcileID(to: number, nodesTo: number, random: string): string {
  return `p${to}n${nodesTo}-${random}`;
}

/** The view bounds of a reconcile ID made by makeReconcileID; undefined for other IDs. */
export function parseReconcileID(id: string): { readonly to: number; readonly nodesTo: number } | undefined {
  const m = /^p(\d+)n(\d+)-/.exec(id);
  return m === null ? undefined : { to: Number(m[1]), nodesTo: Number(m[2]) };
}

export interface ReconcileDeps {
  readonly store: ReconcileStore;
  readonly cluster: string;
  readonly partitions: number;
  /** Stream subject prefix (for the SLICES subject). */
  readonly prefix: string;
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
  /** Offset name of the consumer feeding `partition`. */
  readonly partitionConsumer: (partition: number) => string;
  readonly nodesConsumer: string;
  /** A.10 state, kept in memory like upstream's (a restart starts afresh). */
  readonly triggerTimes: TriggerTimeTracker;
  /** Random part of reconcile IDs. Defaults to a UUID prefix. */
  readonly randomId?: () => string;
}

export type ReconcileResult =
  /** Not marked dirty (another reconcile got there first): nothing read or written. */
  | 'clean'
  /** Reconciled; nothing to write. */
  | 'unchanged'
  /** Slices written and a SLICES message queued. */
  | 'changed';

export interface ReconcileOutcome {
  readonly result: ReconcileResult;
  readonly reconcileID?: string;
  readonly kubeSeq?: KubeSeqRange;
  readonly created: number;
  readonly updated: number;
  readonly deleted: number;
  /** A.3.4 problems: the plan was written, the mark kept; retry with backoff. */
  readonly errors: readonly string[];
  readonly events: readonly KubeEvent[];
  /** False when a newer mark arrived meanwhile (or errors kept it): reconcile again. */
  readonly cleared: boolean;
}

const CLEAN: ReconcileOutcome = { result: 'clean', created: 0, updated: 0, deleted: 0, errors: [], events: [], cleared: true };

/** Reconciles `namespace/name` of `deps.cluster`. Store errors reject (retry with backoff). */
export async function reconcileService(key: { readonly namespace: string; readonly name: string }, deps: ReconcileDeps): Promise<ReconcileOutcome> {
  const skey: ServiceKey = { cluster: deps.cluster, namespace: key.namespace, name: key.name };
  return deps.store.snapshot(async (tx) => {
    const dirty = await tx.loadDirty(skey);
    if (dirty === undefined) return CLEAN;
    const to = await tx.getOffset(deps.partitionConsumer(partitionOf(key.namespace, deps.partitions)));
    const nodesTo = await tx.getOffset(deps.nodesConsumer);
    const view = await loadView(tx, skey);
    const planned = planService(view, {
      managedBy: deps.managedBy,
      maxEndpointsPerSlice: deps.maxEndpointsPerSlice,
      triggerTime: (service, pods) => deps.triggerTimes.computeTriggerTime(service, pods),
    });
    if (planned.mode === 'absent') deps.triggerTimes.deleteService(key.namespace, key.name);
    const kubeSeq: KubeSeqRange = { from: dirty.sinceSeq, to, nodesTo };
    const reconcileID = makeReconcileID(to, nodesTo, (deps.randomId ?? (() => newReconcileID().slice(0, 8)))());
    return finalize(tx, deps, dirty, planned, kubeSeq, reconcileID);
  });
}

async function loadView(tx: ReconcileTx, key: ServiceKey): Promise<ServiceView> {
  const live = async <T>(kind: 'Service' | 'Endpoints'): Promise<T | undefined> => {
    const row = await tx.loadObject({ cluster: key.cluster, kind, namespace: key.namespace, name: key.name });
    return row === undefined || row.deleted ? undefined : (row.body as T);
  };
  const service = await live<Service>('Service');
  const endpoints = await live<Endpoints>('Endpoints');
  // Only the Service's own pods: the same set selectPods keeps (A.1.1), filtered by the store.
  const wantsPods = service !== undefined && service.spec.type !== 'ExternalName' && !isSelectorless(service);
  const pods = wantsPods ? await tx.selectPods(key.cluster, key.namespace, service.spec.selector ?? {}) : [];
  const nodes = await tx.loadNodes(key.cluster);
  const slices = await tx.loadSlices(key.cluster, key.namespace, key.name);
  const own = new Set(slices.map((s) => s.metadata.name));
  const takenNames = (await tx.sliceNamesInNamespace(key.cluster, key.namespace)).filter((n) => !own.has(n));
  return {
    namespace: key.namespace,
    name: key.name,
    service,
    endpoints,
    pods,
    nodes: new Map(nodes.map((n) => [n.metadata.name, n])),
    slices,
    takenNames,
  };
}

/** The only writer: slices, outbox, replay record and mark, all in the caller's transaction. */
async function finalize(
  tx: ReconcileTx,
  deps: ReconcileDeps,
  dirty: DirtyService,
  planned: ServicePlan,
  kubeSeq: KubeSeqRange,
  reconcileID: string,
): Promise<ReconcileOutcome> {
  const { plan } = planned;
  let applied: AppliedSliceChanges = { created: [], updated: [], deleted: [] };
  if (!isEmptyPlan(plan)) {
    applied = await tx.applySliceChanges({ cluster: deps.cluster, create: plan.create, update: plan.update, delete: plan.delete });
    const message: SliceChangedMessage = {
      type: SLICE_CHANGED,
      cluster: deps.cluster,
      namespace: dirty.namespace,
      service: dirty.name,
      upserts: [...applied.created, ...applied.updated].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0)),
      deletes: applied.deleted.map((s) => s.metadata.name).sort(),
      kubeSeq,
      reconcileID,
    };
    await tx.appendOutbox([
      {
        subject: slicesSubject({ cluster: deps.cluster, namespace: dirty.namespace, service: dirty.name }, { prefix: deps.prefix }),
        msgId: (id) => `${deps.cluster}/outbox/${id}`,
        payload: message,
      },
    ]);
  }
  const counts = { created: applied.created.length, updated: applied.updated.length, deleted: applied.deleted.length };
  await tx.recordReconcile({
    cluster: deps.cluster,
    namespace: dirty.namespace,
    service: dirty.name,
    kubeSeqFrom: kubeSeq.from,
    kubeSeqTo: kubeSeq.to,
    reconcileId: reconcileID,
    ...counts,
  });
  // With errors the mark stays, so the retry finds work to do (A.3.4: requeue with backoff).
  const cleared = planned.errors.length === 0 ? await tx.clearDirty(dirty, dirty.lastSeq) : false;
  const changed = counts.created + counts.updated + counts.deleted > 0;
  return { result: changed ? 'changed' : 'unchanged', reconcileID, kubeSeq, ...counts, errors: planned.errors, events: planned.events, cleared };
}
