// The loose object shape the store holds: any Kubernetes object of a served kind, kept as
// the JSON the API would return. Typed views (@slicemesh/model) are applied where code reads
// specific fields; unknown fields pass through untouched.
import type { ObjectMeta } from '@slicemesh/model';

export interface Meta extends ObjectMeta {
  readonly deletionGracePeriodSeconds?: number;
  readonly finalizers?: readonly string[];
  readonly [field: string]: unknown;
}

export interface KubeObj {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Meta;
  readonly [field: string]: unknown;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change. `previous` is the object before a MODIFIED (selector moves need it). */
export interface StoreEvent {
  readonly type: WatchEventType;
  readonly kind: string;
  /** The resourceVersion this change committed at (equals object.metadata.resourceVersion). */
  readonly rv: number;
  readonly object: KubeObj;
  readonly previous?: KubeObj;
}

/** `namespace/name` for namespaced objects, `name` otherwise. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(obj: KubeObj): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}

/** Freezes a stored object and everything in it: one instance is shared by every reader. */
export function freezeDeep<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const v of Object.values(value as object)) freezeDeep(v);
    Object.freeze(value);
  }
  return value;
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ak = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bk = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ak.length !== bk.length) return false;
  return ak.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
