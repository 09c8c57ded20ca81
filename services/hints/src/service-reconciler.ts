// One reconcile of one service (habit 3: level-based, keyed, reads the current state): hints for
// the service's slices, the decision per address type, the per-zone views and the service spec,
// written so a crash at any point is repaired by the next reconcile:
//
//   1. Postgres: decisions + the new keys about to be put, recorded unconfirmed (revision 0);
//   2. KV: service spec put, then view puts and deletes alongside the hinted slices (the `hinted`
//      bucket the publisher writes to the API from), spec delete last when the service is gone;
//   3. Postgres: confirmed revisions; deleted keys forgotten.
//
// A new key is thus recorded before KV can hold it, and an unconfirmed key is always re-put or
// deleted. The startup audit (published-index.ts) also marks unconfirmed every bucket key the
// record lacks or holds at another revision, so no key is ever lost, orphaned or trusted stale,
// and a key already recorded confirmed needs no step 1 when it is rewritten. KV puts are
// idempotent. The intents of services reconciling at the same time share one transaction, and
// the engine's record writes step 3 behind, without making the reconcile wait
// (batched-records.ts); each service still waits for its own step 1 before its KV writes.
//
// Other controllers' slices (from KUBE) join the views exactly as the slicer's do — kube-proxy
// merges every slice of a Service whoever wrote it (D.2.9) — but never the hints step: hints are the
// EndpointSlice controller's to write into its own slices only, so a foreign slice is published
// with the hints its controller gave it. A Service kube-proxy would not see (labelled
// service.kubernetes.io/service-proxy-name: meant for another proxy, D.2.10) gets its decisions as any
// other, but no spec and no views: whatever was published for it is removed.
//
// The state is read from memory (projection.ts). With a memo, the hints and views of unchanged
// slices are reused from the previous reconcile (hint-reuse.ts, view-cache.ts): the same
// results, computed in time proportional to the change.

import { hintService } from '@slicemesh/core';
import type { HintDecision } from '@slicemesh/db';
import type { EndpointSlice, Node } from '@slicemesh/model';
import { proxyIgnoresService } from '@slicemesh/proxy-state';
import { svcKey } from '@slicemesh/nats';
import type { Clock } from '@slicemesh/runtime';
import type { HintsDecision, TopologyCache } from '@slicemesh/topology';
import { HintReuse } from '@slicemesh/core';
import type { KvPort, ServiceRecordStore, ServiceStateReader } from './ports.ts';
import type { KeyIndex, ServiceKey } from './published-index.ts';
import { splitServiceKey } from './published-index.ts';
import type { DesiredValue, KeyPut } from './view-plan.ts';
import { ServiceViewsCache } from './view-cache.ts';
import { desiredHinted, desiredValue, desiredViews, planKeyWrites } from './view-plan.ts';

/** What reconciles keep between them to redo only what changed (per slice and view entry object). */
export interface ReconcileMemo {
  readonly hints: HintReuse;
  readonly views: ServiceViewsCache;
}

export function reconcileMemo(): ReconcileMemo {
  return { hints: new HintReuse(), views: new ServiceViewsCache() };
}

export interface ServiceReconcilerDeps {
  readonly cluster: string;
  /** The current state, in memory. */
  readonly state: ServiceStateReader;
  readonly records: ServiceRecordStore;
  readonly views: KvPort;
  readonly svc: KvPort;
  /** The `hinted` bucket: the slicer's slices with their final hints, one key per slice. */
  readonly hinted: KvPort;
  /** Long-lived: holds the node distribution and every service's hint state. */
  readonly cache: TopologyCache;
  /** The current nodes, sorted by name. */
  readonly nodes: () => readonly Node[];
  readonly viewIndex: KeyIndex;
  readonly svcIndex: KeyIndex;
  readonly hintedIndex: KeyIndex;
  readonly preferSameTrafficDistribution: boolean;
  readonly clock: Clock;
  /** Without one, every reconcile computes hints and views from scratch (same results, slower). */
  readonly memo?: ReconcileMemo;
}

export interface ServiceReconcileReport {
  readonly service: ServiceKey;
  /** The Service object is known. */
  readonly exists: boolean;
  /** The slicer's slices. */
  readonly slices: number;
  /** Other controllers' slices published with them. */
  readonly foreignSlices: number;
  /** Why nothing is published for an existing Service (it is meant for another proxy), else null. */
  readonly notProxied: string | null;
  /** This reconcile's decisions (with the upstream events, when any). */
  readonly decisions: readonly HintsDecision[];
  /** The stored decisions were replaced. */
  readonly decisionsChanged: boolean;
  readonly viewPuts: number;
  readonly viewDeletes: number;
  /** JSON bytes of the view values put. */
  readonly viewBytes: number;
  readonly svc: 'put' | 'delete' | 'unchanged';
  /** Hinted slices put and deleted. */
  readonly hintedPuts: number;
  readonly hintedDeletes: number;
  /** Nothing is left of the service: no Service, no slices, nothing published. */
  readonly gone: boolean;
}

/** The stored form of a decision; `name` is the service's name (the decision says ns/name). */
export function storedDecision(namespace: string, name: string, d: HintsDecision, decidedAt: Date): HintDecision {
  return { namespace, service: name, addressType: d.addressType, enabled: d.enabled, mode: d.mode, event: d.event, reason: d.reason, decidedAt };
}

/**
 * true when the two decision lists differ in outcome (address types, enabled, mode, reason).
 * The time and the event are not compared: an event marks a transition (e.g. "enabled" is
 * recorded once), so the stored row keeps the event of the reconcile that changed it.
 */
export function decisionsDiffer(stored: readonly HintDecision[], next: readonly HintDecision[]): boolean {
  if (stored.length !== next.length) return true;
  const byType = new Map(stored.map((d) => [d.addressType, d]));
  return next.some((n) => {
    const s = byType.get(n.addressType);
    return s === undefined || s.enabled !== n.enabled || s.mode !== n.mode || s.reason !== n.reason;
  });
}

/**
 * Reconciles `key` (`<namespace>/<name>`). Without a Service object nothing is published: its
 * views, spec and decisions are removed (agents cannot program a service without its spec), and
 * the cache forgets it. Throws whatever the record or KV throws; the partial state it leaves is
 * repaired by the retry (see the file comment).
 */
export async function reconcileService(deps: ServiceReconcilerDeps, key: ServiceKey): Promise<ServiceReconcileReport> {
  const { namespace, name } = splitServiceKey(key);
  const service = deps.state.service(key);
  const slices = deps.state.slices(key);
  const foreign = deps.state.foreignSlices(key);
  const notProxied = service === undefined ? null : proxyIgnoresService(service);
  const stored = deps.state.decisions(key);
  const memo = deps.memo;

  // Everything from here to the first await is synchronous, so the shared cache and node list
  // are read and updated consistently even with several workers.
  let decisions: readonly HintsDecision[] = [];
  let wantedViews = new Map<string, DesiredValue>();
  // Without a Service the slices stay as the slicer sent them until it deletes them.
  let finished: readonly EndpointSlice[] = slices;
  if (service === undefined) {
    deps.cache.removeService(key);
    memo?.views.forget(key);
  } else {
    const hintInput = { service, slices, cache: deps.cache, preferSameTrafficDistribution: deps.preferSameTrafficDistribution };
    const hinted = memo ? memo.hints.hint(hintInput) : hintService(hintInput);
    decisions = hinted.decisions;
    finished = hinted.slices;
    if (notProxied === null) {
      const viewInput = { cluster: deps.cluster, service, slices: withForeign(hinted.slices, foreign), nodes: deps.nodes(), preferSameNodeGate: deps.preferSameTrafficDistribution };
      wantedViews = memo ? memo.views.desiredViews(key, viewInput) : desiredViews(viewInput);
    } else {
      memo?.views.forget(key);
    }
  }
  const specKey = svcKey({ cluster: deps.cluster, namespace, name });
  const wantedSpec = new Map<string, DesiredValue>(service === undefined || notProxied !== null ? [] : [[specKey, memo ? memo.views.spec(service) : desiredValue(service)]]);

  const wantedHinted = desiredHinted(deps.cluster, namespace, name, finished, memo ? (s) => memo.views.hinted(deps.cluster, namespace, name, s) : undefined);

  // Read before any await: the indexes change only after the writes below.
  const recordedViews = deps.viewIndex.peekService(key);
  const viewWrites = planKeyWrites(recordedViews, wantedViews);
  const specWrites = planKeyWrites(deps.svcIndex.peekService(key), wantedSpec);
  const recordedHinted = deps.hintedIndex.peekService(key);
  let hintedWrites = planKeyWrites(recordedHinted, wantedHinted);
  // A Service's deletion alone changes nothing in the API's slices (the garbage collector
  // removes them, A.1.3): only slices never written yet are put, and the deleted ones removed.
  if (service === undefined) hintedWrites = { puts: hintedWrites.puts.filter((p) => !recordedHinted.has(p.key)), deletes: hintedWrites.deletes };
  const now = new Date(deps.clock.now());
  const nextDecisions = decisions.map((d) => storedDecision(namespace, name, d, now));
  const decisionsChanged = decisionsDiffer(stored, nextDecisions);

  // 1. Intent, for the keys the record does not hold confirmed: a new key is recorded before
  // KV can hold it. A confirmed key being rewritten needs none: its recorded revision
  // stops matching the bucket's once the put lands, which the startup audit treats as
  // unconfirmed (published-index.ts), so a crash before step 3 cannot leave a value the record
  // vouches for wrongly. Most reconciles (a pod changed in a slice) thus skip this write.
  const unconfirmed = viewWrites.puts.filter((p) => (recordedViews.get(p.key)?.revision ?? 0) === 0);
  if (decisionsChanged || unconfirmed.length > 0) {
    await deps.records.recordIntent(namespace, name, {
      ...(decisionsChanged ? { decisions: nextDecisions } : {}),
      pending: unconfirmed.map((p) => ({ key: p.key })),
    });
    for (const p of unconfirmed) deps.viewIndex.set(p.key, { revision: 0, digest: null });
  }

  // 2. KV: the spec before its views, views before the spec's removal. The hinted slices depend
  // on neither: they are written alongside the views (one round of NATS acks less per reconcile).
  for (const p of specWrites.puts) deps.svcIndex.set(p.key, { revision: await deps.svc.put(p.key, p.text), digest: p.digest });
  const hintedDone = Promise.all([
    ...hintedWrites.puts.map(async (p) => deps.hintedIndex.set(p.key, { revision: await deps.hinted.put(p.key, p.text), digest: p.digest })),
    ...hintedWrites.deletes.map(async (k) => {
      await deps.hinted.delete(k);
      deps.hintedIndex.delete(k);
    }),
  ]);
  const viewsDone = (async () => {
    const confirmed = await Promise.all(viewWrites.puts.map(async (p: KeyPut) => ({ put: p, revision: await deps.views.put(p.key, p.text) })));
    await Promise.all(viewWrites.deletes.map((k) => deps.views.delete(k)));
    return confirmed;
  })();
  // Both settle before anything else happens, so a failure leaves no write of this reconcile running.
  const [views, hintedResult] = await Promise.allSettled([viewsDone, hintedDone]);
  if (views.status === 'rejected') throw views.reason;
  if (hintedResult.status === 'rejected') throw hintedResult.reason;
  const confirmed = views.value;
  for (const k of specWrites.deletes) {
    await deps.svc.delete(k);
    deps.svcIndex.delete(k);
  }

  // 3. Confirmation.
  if (confirmed.length > 0 || viewWrites.deletes.length > 0) {
    await deps.records.recordPublished(
      confirmed.map((c) => ({ key: c.put.key, revision: c.revision, digest: c.put.digest })),
      viewWrites.deletes,
    );
    for (const c of confirmed) deps.viewIndex.set(c.put.key, { revision: c.revision, digest: c.put.digest });
    for (const k of viewWrites.deletes) deps.viewIndex.delete(k);
  }

  return {
    service: key,
    exists: service !== undefined,
    slices: slices.length,
    foreignSlices: foreign.length,
    notProxied,
    decisions,
    decisionsChanged,
    viewPuts: viewWrites.puts.length,
    viewDeletes: viewWrites.deletes.length,
    viewBytes: viewWrites.puts.reduce((n, p) => n + Buffer.byteLength(p.text), 0),
    svc: specWrites.puts.length > 0 ? 'put' : specWrites.deletes.length > 0 ? 'delete' : 'unchanged',
    hintedPuts: hintedWrites.puts.length,
    hintedDeletes: hintedWrites.deletes.length,
    gone: service === undefined && slices.length === 0 && foreign.length === 0 && deps.viewIndex.forService(key).size === 0 && deps.hintedIndex.forService(key).size === 0,
  };
}

/**
 * The slicer's (hinted) slices followed by the foreign ones; `ours` unchanged when there are none.
 * Slice names are unique in a namespace, so a foreign slice of the same name as one of ours can
 * only be our own slice seen through the API (a watcher whose MANAGED_BY lacks ours): ours wins.
 */
export function withForeign(ours: readonly EndpointSlice[], foreign: readonly EndpointSlice[]): readonly EndpointSlice[] {
  if (foreign.length === 0) return ours;
  const names = new Set(ours.map((s) => s.metadata.name));
  return [...ours, ...foreign.filter((s) => !names.has(s.metadata.name))];
}
