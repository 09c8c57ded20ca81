// Ingest: a batch of KUBE messages in, one transaction out, then the projection. The transaction
// stores the objects (or tombstones) and advances the consumer's offset, so after a crash either
// all of the batch happened or none did; only once it committed does the in-memory projection
// take the batch and mark the affected Services dirty. Memory thus never holds more than
// Postgres, and the offsets held in memory are always the committed ones.
//
// Redelivery: a message at or below the offset was applied already and is skipped. That is only
// sound when a consumer applies its messages in stream order, which is why the slicer's durables
// hand over one batch at a time (consume loop in @slicemesh/nats), acked or nak'ed whole.
//
// EndpointSlices in KUBE are other controllers' (the watcher leaves ours out, see isOwnSlice):
// the hints service delivers them to the agents. The slicer's projection of slices is its own
// writes, so it skips them ('ignored': the offset moves past them, nothing is stored). One that
// carries our own managed-by value is an echo of our writes, which means the watcher's MANAGED_BY
// does not include the slicer's: still skipped, and reported so it can be fixed.
// ServiceExports (MCS) are the mcs service's: skipped ('ignored') the same way.

import type { ClusterState, ObjectChange } from '@slicemesh/core';
import type { KubeObjectRow } from '@slicemesh/db';
import type { DecodeContext, KubeChange } from '@slicemesh/contracts';
import { DELETED, decodeKubeMessage, isOwnSlice, ownManagers } from '@slicemesh/contracts';
import type { DeadLetterSink, SlicerStore } from './ports.ts';

export interface IngestMessage {
  readonly subject: string;
  /** KUBE stream sequence. */
  readonly seq: number;
  readonly data: unknown;
  readonly parseError?: string;
  readonly raw: Uint8Array;
}

export interface IngestDeps extends DecodeContext {
  readonly state: ClusterState;
  /** Committed offsets by consumer name; ingest advances its consumer's entry. */
  readonly offsets: Map<string, number>;
  readonly store: Pick<SlicerStore, 'commitIngest'>;
  readonly deadLetters: DeadLetterSink;
  /** Delay for pod-triggered reconciles (A.12.2); others are queued at once. */
  readonly batchPeriodMs: number;
  /** The managed-by value of the slices this slicer writes, to recognise their echoes. Default: none recognised. */
  readonly managedBy?: string;
}

export type IngestResult =
  /** The object changed and its Services were marked. */
  | 'applied'
  /** Held already at this or a newer resourceVersion (e.g. a second watcher); nothing marked. */
  | 'stale'
  /** seq ≤ offset: a redelivery of an applied message. */
  | 'duplicate'
  /** Rejected and published to the dead-letter subject. */
  | 'dead-lettered'
  /** Valid, but not the slicer's to apply: another controller's EndpointSlice. */
  | 'ignored'
  /** Valid, not applied: an EndpointSlice with our own managed-by value (the watcher should have left it out). */
  | 'echo';

export interface IngestOutcome {
  readonly result: IngestResult;
  /** Kind from the envelope, when it was valid. */
  readonly kind?: string;
  /** Services (`ns/name`, sorted) marked dirty. */
  readonly keys: readonly string[];
  /** How long to wait before reconciling `keys` (the batching window). */
  readonly delayMs: number;
  /** For dead letters: why. */
  readonly reason?: string;
}

/** A change the projection takes: every kind but EndpointSlice and ServiceExport. */
export type ProjectedChange = KubeChange & { readonly kind: ObjectChange['kind'] };

/** The projection's form of a validated change (never an EndpointSlice: see the file comment). */
export function objectChangeOf(c: ProjectedChange): ObjectChange {
  return { kind: c.kind, namespace: c.namespace, name: c.name, resourceVersion: c.resourceVersion, deleted: c.type === DELETED, object: c.object as ObjectChange['object'] };
}


/** Whether the projection takes `c`: every kind but EndpointSlice and ServiceExport (the mcs service's). */
export function isProjected(c: KubeChange): c is ProjectedChange {
  return c.kind !== 'EndpointSlice' && c.kind !== 'ServiceExport';
}

function rowOf(c: ProjectedChange, seq: number): KubeObjectRow {
  return {
    cluster: c.cluster,
    kind: c.kind,
    namespace: c.namespace,
    name: c.name,
    uid: c.uid,
    resourceVersion: c.resourceVersion,
    deleted: c.type === DELETED,
    body: c.object,
    kubeSeq: seq,
  };
}

/**
 * Applies `msgs` (in stream order) for `consumer`: invalid input is dead-lettered (before the
 * commit; dead letters carry the KUBE sequence, so a retried batch stores each once) and counted
 * as applied, never retried. Store and dead-letter failures reject and leave memory untouched;
 * the caller retries the whole batch. Returns one outcome per message, in order.
 */
export async function ingestBatch(consumer: string, msgs: readonly IngestMessage[], deps: IngestDeps): Promise<IngestOutcome[]> {
  const applied = deps.offsets.get(consumer) ?? 0;
  let offset = applied;
  const valid: { readonly index: number; readonly seq: number; readonly change: ProjectedChange }[] = [];
  const own = ownManagers(deps.managedBy === undefined ? [] : [deps.managedBy]);
  const outcomes: (IngestOutcome | undefined)[] = [];
  for (const msg of msgs) {
    if (msg.seq <= offset) {
      outcomes.push({ result: 'duplicate', keys: [], delayMs: 0 });
      continue;
    }
    offset = msg.seq;
    const d = decodeKubeMessage(msg, deps);
    if (!d.ok) {
      const { reason, field } = d.rejection;
      await deps.deadLetters.publish({ reason, ...(field !== undefined ? { field } : {}), subject: msg.subject, seq: msg.seq, raw: msg.raw });
      outcomes.push({ result: 'dead-lettered', keys: [], delayMs: 0, reason: field === undefined ? reason : `${field}: ${reason}` });
      continue;
    }
    if (!isProjected(d.change)) {
      const echo = d.change.kind === 'EndpointSlice' && isOwnSlice(d.change.object.metadata.labels, own);
      outcomes.push({ result: echo ? 'echo' : 'ignored', kind: d.change.kind, keys: [], delayMs: 0 });
      continue;
    }
    valid.push({ index: outcomes.length, seq: msg.seq, change: d.change });
    outcomes.push(undefined);
  }
  if (offset === applied) return outcomes.map((o) => o ?? { result: 'duplicate', keys: [], delayMs: 0 });

  await deps.store.commitIngest({ consumer, offset, rows: valid.map((v) => rowOf(v.change, v.seq)) });

  // Committed: from here to the return nothing awaits, so no reconcile sees half a batch.
  for (const v of valid) {
    const r = deps.state.apply(objectChangeOf(v.change));
    outcomes[v.index] = {
      result: r.applied ? 'applied' : 'stale',
      kind: v.change.kind,
      keys: r.keys,
      delayMs: v.change.kind === 'Pod' ? deps.batchPeriodMs : 0,
    };
  }
  deps.offsets.set(consumer, offset);
  return outcomes.map((o) => o ?? { result: 'duplicate', keys: [], delayMs: 0 });
}
