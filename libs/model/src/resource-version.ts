// Ordering of object versions as the projections apply them: the newest resourceVersion wins,
// and a delete at the live version retires the object (a relist synthesises such deletes).

/** What a projection remembers of an object to order later versions against it. */
export interface ObjectVersion {
  readonly resourceVersion: string;
  readonly deleted: boolean;
}

const INTEGER = /^[0-9]+$/;

/**
 * true when `incoming` is a newer resourceVersion than `stored`: numerically when both are
 * integers, otherwise any different value counts as newer (opaque versions cannot be ordered).
 */
export function isNewerResourceVersion(incoming: string, stored: string): boolean {
  if (INTEGER.test(incoming) && INTEGER.test(stored)) return BigInt(incoming) > BigInt(stored);
  return incoming !== stored;
}

/**
 * Whether `incoming` replaces `stored`: a newer version, or a delete at the same version as the
 * live row (a delete synthesized from a relist carries the last version seen).
 * The SQL guard in @slicemesh/db's object store is its twin.
 */
export function supersedes(incoming: ObjectVersion, stored: ObjectVersion): boolean {
  return isNewerResourceVersion(incoming.resourceVersion, stored.resourceVersion) ||
    (incoming.resourceVersion === stored.resourceVersion && incoming.deleted && !stored.deleted);
}
