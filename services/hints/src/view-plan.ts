// What the KV buckets should hold for one service, and the writes that get them there from what
// was last recorded (habit 2: state as a diff, no-ops dropped).
//
// Record states: a key recorded with revision > 0 holds the body with `digest` in KV; revision 0
// means "may or may not be in KV, content unknown" (a write was intended, or KV and the record
// disagreed at startup). Unknown keys are always re-put when wanted and deleted when not, so a
// crash between the KV write and its record never leaves a stale or orphaned key behind.

import { createHash } from 'node:crypto';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import { hintedKey, viewKey } from '@slicemesh/nats';
import { zoneViews } from '@slicemesh/proxy-state';

/** What is known about one key of a bucket. */
export interface RecordedKey {
  /** KV revision of our last confirmed put; 0 = unconfirmed (content unknown). */
  readonly revision: number;
  /** digestOf the body put; null when unknown. */
  readonly digest: string | null;
}

export interface DesiredValue {
  readonly body: unknown;
  /** JSON text as it will be stored. */
  readonly text: string;
  readonly digest: string;
}

export interface KeyPut extends DesiredValue {
  readonly key: string;
}

export interface KeyWrites {
  /** Keys to put, in key order. */
  readonly puts: readonly KeyPut[];
  /** Keys to delete, in key order. */
  readonly deletes: readonly string[];
}

/**
 * sha256 (hex) of `value`'s JSON text. A value read back from KV parses and serialises to the
 * very text that was put (JSON.stringify keeps key order), so a digest of what the bucket holds
 * equals the digest recorded when it was written; Postgres keeps the digest itself
 * (published_views.digest), never the body, whose keys jsonb would reorder.
 */
export function digestOf(value: unknown): string {
  return digestOfText(JSON.stringify(value));
}

function digestOfText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The value to store for `body`: its JSON text and digest. */
export function desiredValue(body: unknown): DesiredValue {
  const text = JSON.stringify(body);
  return { body, text, digest: digestOfText(text) };
}

/**
 * The value of one zone view of a slice. Its digest leaves out what the slicer changes on the
 * whole slice whenever any endpoint changes — the trigger-time annotation and
 * `metadata.generation` (and `resourceVersion`, should a slice carry one): a digest of the body
 * rewrote every zone's view of the slice, for the zones whose endpoints had not changed only to
 * carry the new time and generation (27 % of the zone views' bytes in the fan-out benchmark).
 * Such a view keeps its older body, which is right for its agents: nothing they program changed.
 * A view whose endpoints, ports or anything else did change is put whole, with the new time.
 */
export function viewValue(slice: EndpointSlice): DesiredValue {
  const text = JSON.stringify(slice);
  const { annotations, generation: _generation, resourceVersion: _rv, ...metadata } = slice.metadata;
  const { [ANNOTATION_TRIGGER_TIME]: _time, ...rest } = annotations ?? {};
  return { body: slice, text, digest: digestOf({ ...slice, metadata: Object.keys(rest).length > 0 ? { ...metadata, annotations: rest } : metadata }) };
}

export interface DesiredViewsInput {
  readonly cluster: string;
  readonly service: Service;
  /** The service's slices with their final hints. */
  readonly slices: readonly EndpointSlice[];
  /** Every node of the cluster (their zone labels define the views). */
  readonly nodes: readonly Node[];
  /** The proxies' PreferSameTrafficDistribution gate (node hints). */
  readonly preferSameNodeGate: boolean;
}

/**
 * The `views` entries of one service: one per (zone, slice) that zoneViews() keeps, the
 * UNZONED_VIEW included, keyed by viewKey and valued by the zone-filtered slice. Returns an empty
 * map when the service has no slice with an endpoint, or is of a kind the proxies never program
 * (headless, ExternalName).
 */
export function desiredViews(input: DesiredViewsInput): Map<string, DesiredValue> {
  const views = zoneViews({ services: [input.service], slices: input.slices, nodes: input.nodes, preferSameNodeGate: input.preferSameNodeGate });
  const out = new Map<string, DesiredValue>();
  for (const e of views.entries.values()) {
    const key = viewKey({ cluster: input.cluster, zone: e.zone, namespace: e.namespace, service: e.service, slice: e.sliceName });
    out.set(key, viewValue(e.slice));
  }
  return out;
}

/**
 * The `hinted` entries of one service: each of the slicer's slices as the hints step left it,
 * keyed by hintedKey. Written for every Service, proxied or not: the slices exist in the API
 * whoever programs them. `value` makes an entry's value (a memo passes a cached desiredValue).
 */
export function desiredHinted(
  cluster: string,
  namespace: string,
  service: string,
  slices: readonly EndpointSlice[],
  entry: (slice: EndpointSlice) => KeyPut = (slice) => hintedEntry(cluster, namespace, service, slice),
): Map<string, DesiredValue> {
  const out = new Map<string, DesiredValue>();
  for (const slice of slices) {
    const e = entry(slice);
    out.set(e.key, e);
  }
  return out;
}

/** One slice's `hinted` key and value. */
export function hintedEntry(cluster: string, namespace: string, service: string, slice: EndpointSlice): KeyPut {
  return { key: hintedKey({ cluster, namespace, service, slice: slice.metadata.name }), ...desiredValue(slice) };
}

/**
 * The writes that turn `recorded` into `desired`: a put for every wanted key that is not
 * recorded, unconfirmed, or recorded with another digest; a delete for every recorded key no
 * longer wanted. Both empty when the two agree (and for two empty maps).
 */
export function planKeyWrites(recorded: ReadonlyMap<string, RecordedKey>, desired: ReadonlyMap<string, DesiredValue>): KeyWrites {
  const puts: KeyPut[] = [];
  for (const [key, want] of desired) {
    const have = recorded.get(key);
    if (have === undefined || have.revision <= 0 || have.digest !== want.digest) puts.push({ key, ...want });
  }
  const deletes = [...recorded.keys()].filter((k) => !desired.has(k));
  puts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  deletes.sort();
  return { puts, deletes };
}
