// The slicer's stores on Postgres: thin wrappers over @slicemesh/db, plus the few small queries
// only the slicer needs (kept here rather than in the shared adapter).

import type { Node, Pod, Service } from '@slicemesh/model';
import type { Db, DirtyService, ServiceKey, Trx } from '@slicemesh/db';
import {
  advanceOffset,
  appendOutbox,
  applySliceChanges,
  clearDirty,
  getOffset,
  listDirty,
  loadNodes,
  loadObject,
  loadSlices,
  markDirty,
  recordReconcile,
  upsertObjects,
} from '@slicemesh/db';
import type { IngestStore, IngestTx, ReconcileStore, ReconcileTx } from './ports.ts';

/** Live Services of a namespace, sorted by name. */
export function buildServicesInNamespace(db: Db, cluster: string, namespace: string) {
  return db
    .selectFrom('kube_objects')
    .select('body')
    .where('cluster', '=', cluster)
    .where('namespace', '=', namespace)
    .where('kind', '=', 'Service')
    .where('deleted', '=', false)
    .orderBy('name');
}

/** Live Pods on a node: jsonb containment on spec.nodeName, sorted by namespace/name. */
export function buildPodsOnNode(db: Db, cluster: string, node: string) {
  return db
    .selectFrom('kube_objects')
    .select('body')
    .where('cluster', '=', cluster)
    .where('kind', '=', 'Pod')
    .where('deleted', '=', false)
    .where('body', '@>', JSON.stringify({ spec: { nodeName: node } }))
    .orderBy('namespace')
    .orderBy('name');
}

/** Live pods of a namespace whose labels contain `selector` (jsonb containment), sorted by name. */
export function buildSelectPods(db: Db, cluster: string, namespace: string, selector: Readonly<Record<string, string>>) {
  return db
    .selectFrom('kube_objects')
    .select('body')
    .where('cluster', '=', cluster)
    .where('namespace', '=', namespace)
    .where('kind', '=', 'Pod')
    .where('deleted', '=', false)
    .where('body', '@>', JSON.stringify({ metadata: { labels: selector } }))
    .orderBy('name');
}

/** The dirty mark of one Service. */
export function buildLoadDirty(db: Db, key: ServiceKey) {
  return db
    .selectFrom('dirty_services')
    .select(['cluster', 'namespace', 'name', 'since_seq', 'last_seq'])
    .where('cluster', '=', key.cluster)
    .where('namespace', '=', key.namespace)
    .where('name', '=', key.name);
}

function ingestTx(trx: Trx): IngestTx {
  return {
    getOffset: (consumer) => getOffset(trx, consumer),
    loadObject: (key) => loadObject(trx, key),
    upsertObject: async (row) => (await upsertObjects(trx, [row])).length > 0,
    servicesInNamespace: async (cluster, namespace) => (await buildServicesInNamespace(trx, cluster, namespace).execute()).map((r) => r.body as Service),
    podsOnNode: async (cluster, node) => (await buildPodsOnNode(trx, cluster, node).execute()).map((r) => r.body as Pod),
    markDirty: (keys, seq) => markDirty(trx, keys, seq),
    advanceOffset: async (consumer, seq) => {
      await advanceOffset(trx, consumer, seq);
    },
  };
}

function reconcileTx(trx: Trx): ReconcileTx {
  return {
    loadDirty: async (key): Promise<DirtyService | undefined> => {
      const r = await buildLoadDirty(trx, key).executeTakeFirst();
      return r === undefined ? undefined : { cluster: r.cluster, namespace: r.namespace, name: r.name, sinceSeq: Number(r.since_seq), lastSeq: Number(r.last_seq) };
    },
    getOffset: (consumer) => getOffset(trx, consumer),
    loadObject: (key) => loadObject(trx, key),
    selectPods: async (cluster, namespace, selector) => (await buildSelectPods(trx, cluster, namespace, selector).execute()).map((r) => r.body as Pod),
    loadNodes: (cluster): Promise<readonly Node[]> => loadNodes(trx, cluster),
    loadSlices: (cluster, namespace, service) => loadSlices(trx, cluster, namespace, service),
    sliceNamesInNamespace: async (cluster, namespace) =>
      (await trx.selectFrom('endpoint_slices').select('name').where('cluster', '=', cluster).where('namespace', '=', namespace).orderBy('name').execute()).map((r) => r.name),
    applySliceChanges: (changes) => applySliceChanges(trx, changes),
    appendOutbox: (rows) => appendOutbox(trx, rows),
    recordReconcile: (rec) => recordReconcile(trx, rec),
    clearDirty: (key, upToSeq) => clearDirty(trx, key, upToSeq),
  };
}

// serialization_failure and deadlock_detected: the transaction did nothing and can run again.
const RETRYABLE = new Set(['40001', '40P01']);

/** True for Postgres errors that mean "run the transaction again". */
export function isRetryableTxError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

export interface PgStoreOptions {
  /** Attempts of a snapshot transaction that keeps conflicting. Defaults to 5. */
  readonly attempts?: number;
}

/** Both stores on one pool. */
export function pgStores(db: Db, opts: PgStoreOptions = {}): { readonly ingest: IngestStore; readonly reconcile: ReconcileStore } {
  const attempts = opts.attempts ?? 5;
  const ingest: IngestStore = {
    transaction: (fn) => db.transaction().execute((trx) => fn(ingestTx(trx))),
  };
  const reconcile: ReconcileStore = {
    // REPEATABLE READ: every read sees one snapshot, and clearing a mark that an ingest raised
    // after the snapshot fails with a serialization error instead of losing that mark.
    snapshot: async (fn) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.transaction().setIsolationLevel('repeatable read').execute((trx) => fn(reconcileTx(trx)));
        } catch (err) {
          if (attempt >= attempts || !isRetryableTxError(err)) throw err;
        }
      }
    },
    listDirty: () => listDirty(db),
  };
  return { ingest, reconcile };
}
