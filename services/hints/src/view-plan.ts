// What the KV buckets should hold for one service, and the writes that get them there from what
// was last recorded (habit 2: state as a diff, no-ops dropped).
//
// Record states: a key recorded with revision > 0 holds the body with `digest` in KV; revision 0
// means "may or may not be in KV, content unknown" (a write was intended, or KV and the record
// disagreed at startup). Unknown keys are always re-put when wanted and deleted when not, so a
// crash between the KV write and its record never leaves a stale or orphaned key behind.

import { createHash } from 'node:crypto';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { hintedKey, viewKey } from '@slicemesh/nats';
import { zoneViews } from '@slicemesh/proxy-state';

/** What is known about one key of a bucket. */
export interface RecordedKey {
  /** KV revision of our last confirmed put; 0 = unconfirmed (content unknown). */
  readonly revision: number;
  /** sha256 of the canonical JSON of the body put; null when unknown. */
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

/** JSON with object keys sorted at every level, so equal values give equal text whatever their key order (jsonb reorders keys). */
export function canonicalJson(value: unknown): string {
  return canonical(value) ?? 'null';
}

// JSON.stringify with object keys sorted, written directly: a replacer that copies every object
// into a sorted one cost the hints service more than the rest of a view update. Values are plain
// JSON (no toJSON, no cycles); undefined and functions are left out of objects and become null
// in arrays, as JSON.stringify does.
function canonical(v: unknown): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(v);
    case 'object': {
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) out += `${i > 0 ? ',' : ''}${canonical(v[i]) ?? 'null'}`;
        return `${out}]`;
      }
      const o = v as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const k of Object.keys(o).sort()) {
        const text = canonical(o[k]);
        if (text === undefined) continue;
        out += `${first ? '' : ','}${JSON.stringify(k)}:${text}`;
        first = false;
      }
      return `${out}}`;
    }
    default:
      return undefined; // undefined, functions, symbols
  }
}

/** sha256 (hex) of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** The value to store for `body`: its JSON text and digest. */
export function desiredValue(body: unknown): DesiredValue {
  return { body, text: JSON.stringify(body), digest: digestOf(body) };
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
    out.set(key, desiredValue(e.slice));
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
  value: (slice: EndpointSlice) => DesiredValue = desiredValue,
): Map<string, DesiredValue> {
  const out = new Map<string, DesiredValue>();
  for (const slice of slices) out.set(hintedKey({ cluster, namespace, service, slice: slice.metadata.name }), value(slice));
  return out;
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
