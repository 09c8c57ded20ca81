// The publisher's pure core (habit 1): SLICES messages become one action per slice, and each
// action meets the object the API server holds to become one decision — create, update,
// delete, or a reason to leave the slice alone. No clock, no I/O.
//
// Ownership is the managed-by label and nothing else, as upstream's controllers decide it
// (a slice is theirs when endpointslice.kubernetes.io/managed-by names them), by the same rule
// the watcher and the slicer apply (isOwnSlice, libs/contracts): a live slice without the
// label, or with a value we do not own, is never written or deleted.

import type { OwnManagers, SliceChangedMessage } from '@slicemesh/nats';
import { isOwnSlice } from '@slicemesh/nats';
import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, DISCOVERY_API_VERSION, LABEL_MANAGED_BY } from '@slicemesh/model';
import type { KubeJson } from '@slicemesh/kube';

/** The last word of a batch on one slice. `seq` is the SLICES sequence it came from. */
export type SliceAction =
  | { readonly type: 'upsert'; readonly namespace: string; readonly name: string; readonly seq: number; readonly slice: EndpointSlice }
  | { readonly type: 'delete'; readonly namespace: string; readonly name: string; readonly seq: number };

/** What to do about one action, given the live object. */
export type Decision =
  /** Absent from the API: POST `body`. */
  | { readonly kind: 'create'; readonly body: KubeJson }
  /** Ours and different: PUT `body` (carries the live resourceVersion, so a concurrent write makes it fail). */
  | { readonly kind: 'update'; readonly body: KubeJson }
  /** Ours: DELETE with these preconditions. */
  | { readonly kind: 'delete'; readonly uid: string; readonly resourceVersion: string }
  /** Ours and already as wanted. */
  | { readonly kind: 'skip-equal' }
  /** Exists and is not ours (`managedBy` null: no managed-by label at all). */
  | { readonly kind: 'skip-foreign'; readonly managedBy: string | null }
  /** A delete of a slice that is already gone, or already being deleted. */
  | { readonly kind: 'skip-gone' }
  /** Ours but being deleted (deletionTimestamp set): wait for it to go, then create. */
  | { readonly kind: 'wait-terminating' }
  /** The wanted slice itself carries a managed-by value we do not own: a settings mismatch with the slicer. */
  | { readonly kind: 'skip-not-owned'; readonly managedBy: string | null };

export type DecisionKind = Decision['kind'];

/** A SLICES message with its stream sequence. */
export interface SequencedChange {
  readonly seq: number;
  readonly message: SliceChangedMessage;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/**
 * The last action per slice of the changes added so far, in stream order. Memory is bounded by
 * the number of distinct slices, however many messages go in (the publisher holds a whole
 * startup backlog in one, so a replay only ever writes each slice's final state).
 */
export class ActionSet {
  readonly #last = new Map<string, SliceAction>();

  /** Adds one message. Within it deletes are taken before upserts, so a name in both (which the slicer never sends) ends as an upsert. */
  add({ seq, message }: SequencedChange): void {
    for (const name of message.deletes) {
      const key = keyOf(message.namespace, name);
      this.#last.delete(key); // re-inserted so that Map order follows the latest action
      this.#last.set(key, { type: 'delete', namespace: message.namespace, name, seq });
    }
    for (const slice of message.upserts) {
      const key = keyOf(message.namespace, slice.metadata.name);
      this.#last.delete(key);
      this.#last.set(key, { type: 'upsert', namespace: message.namespace, name: slice.metadata.name, seq, slice });
    }
  }

  /** Ordered by the sequence of each slice's last action. */
  actions(): SliceAction[] {
    return [...this.#last.values()];
  }

  get size(): number {
    return this.#last.size;
  }

  clear(): void {
    this.#last.clear();
  }
}

/**
 * The last action per slice across `changes` (given in stream order), ordered by the sequence
 * of that last action (see ActionSet).
 *
 * ### Examples
 * ```ts
 * coalesce([{ seq: 1, message: upsert(a) }, { seq: 2, message: deletes(['a']) }]);
 * // [{ type: 'delete', namespace: 'default', name: 'a', seq: 2 }]
 * ```
 */
export function coalesce(changes: readonly SequencedChange[]): SliceAction[] {
  const set = new ActionSet();
  for (const c of changes) set.add(c);
  return set.actions();
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function metadataOf(obj: KubeJson): Record<string, unknown> {
  return isRecord(obj['metadata']) ? obj['metadata'] : {};
}

function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isRecord(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
  return out;
}

function labelsOf(obj: KubeJson): Record<string, string> {
  return stringMap(metadataOf(obj)['labels']);
}

/** The managed-by label of a live object; null when it has none. */
export function managedByOf(obj: KubeJson): string | null {
  return labelsOf(obj)[LABEL_MANAGED_BY] ?? null;
}

/** Metadata the API server owns: never sent back from our stored slices. */
const SERVER_OWNED_METADATA = ['resourceVersion', 'uid', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'] as const;

/**
 * `slice` as a body to send: apiVersion and kind set, server-owned metadata (resourceVersion,
 * uid, generation, timestamps, managedFields) removed — the slicer's stored slices carry its own
 * uid and generation, which mean nothing to the API server.
 */
export function writableSlice(slice: EndpointSlice): KubeJson {
  const metadata: Record<string, unknown> = { ...slice.metadata };
  for (const k of SERVER_OWNED_METADATA) delete metadata[k];
  return { ...slice, apiVersion: DISCOVERY_API_VERSION, kind: 'EndpointSlice', metadata };
}

/**
 * A canonical form for comparison: object keys sorted, null/undefined dropped, empty arrays and
 * objects dropped (the API treats an empty list or struct like an absent one for every slice
 * field compared here).
 */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical).filter((x) => x !== undefined);
    return items.length === 0 ? undefined : items;
  }
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = canonical(v[k]);
      if (x !== undefined) out[k] = x;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v === null ? undefined : v;
}

/** Ports with the API's defaults applied (name "", protocol TCP), so a defaulted live port equals ours. */
function defaultedPorts(ports: unknown): unknown {
  if (!Array.isArray(ports)) return ports;
  return ports.map((p: unknown) => {
    if (!isRecord(p)) return p;
    const { name, protocol, ...rest } = p;
    return { ...rest, ...(name === '' || name === undefined || name === null ? {} : { name }), protocol: protocol ?? 'TCP' };
  });
}

/** The parts of a slice that decide whether it needs an update. */
function comparable(obj: KubeJson): string {
  const meta = metadataOf(obj);
  const annotations = stringMap(meta['annotations']);
  // The trigger time records when the change that produced the slice happened; on its own it
  // changes nothing a reader of the slice acts on (upstream writes it only with a real change).
  delete annotations[ANNOTATION_TRIGGER_TIME];
  return JSON.stringify(canonical({
    labels: stringMap(meta['labels']),
    annotations,
    ownerReferences: meta['ownerReferences'],
    addressType: obj['addressType'],
    endpoints: obj['endpoints'],
    ports: defaultedPorts(obj['ports']),
  }));
}

/**
 * true when the live object already says what `wanted` says: same labels, annotations (the
 * trigger-time annotation aside), ownerReferences, addressType, endpoints and ports, with the
 * API's defaults and empty-vs-absent differences ignored.
 */
export function sameSlice(wanted: KubeJson, live: KubeJson): boolean {
  return comparable(wanted) === comparable(live);
}

/**
 * The decision for `action` given `live` (undefined: the API has no such slice). `owned` are the
 * managed-by values this publisher may write (the slicer's and the mirroring controller's).
 *
 * | action | live                         | decision          |
 * | ------ | ---------------------------- | ----------------- |
 * | upsert | wanted label not in `owned`  | skip-not-owned    |
 * | upsert | absent                       | create            |
 * | upsert | foreign or unlabelled        | skip-foreign      |
 * | upsert | ours, being deleted          | wait-terminating  |
 * | upsert | ours, same                   | skip-equal        |
 * | upsert | ours, different              | update            |
 * | delete | absent or being deleted      | skip-gone         |
 * | delete | foreign or unlabelled        | skip-foreign      |
 * | delete | ours                         | delete            |
 */
export function decide(action: SliceAction, live: KubeJson | undefined, owned: OwnManagers): Decision {
  if (action.type === 'upsert') {
    if (!isOwnSlice(action.slice.metadata.labels, owned)) return { kind: 'skip-not-owned', managedBy: action.slice.metadata.labels?.[LABEL_MANAGED_BY] ?? null };
    const body = writableSlice(action.slice);
    if (live === undefined) return { kind: 'create', body };
    if (!isOwnSlice(labelsOf(live), owned)) return { kind: 'skip-foreign', managedBy: managedByOf(live) };
    const liveMeta = metadataOf(live);
    if (liveMeta['deletionTimestamp'] !== undefined && liveMeta['deletionTimestamp'] !== null) return { kind: 'wait-terminating' };
    if (sameSlice(body, live)) return { kind: 'skip-equal' };
    // Finalizers belong to whoever added them; the rest of the object is ours.
    const finalizers = liveMeta['finalizers'];
    const metadata = { ...metadataOf(body), resourceVersion: liveMeta['resourceVersion'], ...(Array.isArray(finalizers) && finalizers.length > 0 ? { finalizers } : {}) };
    return { kind: 'update', body: { ...body, metadata } };
  }
  if (live === undefined) return { kind: 'skip-gone' };
  if (!isOwnSlice(labelsOf(live), owned)) return { kind: 'skip-foreign', managedBy: managedByOf(live) };
  const liveMeta = metadataOf(live);
  if (liveMeta['deletionTimestamp'] !== undefined && liveMeta['deletionTimestamp'] !== null) return { kind: 'skip-gone' };
  return { kind: 'delete', uid: String(liveMeta['uid'] ?? ''), resourceVersion: String(liveMeta['resourceVersion'] ?? '') };
}
