// Ordering helpers: plain code-unit comparison, so output never depends on locale or on
// map iteration order.

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A new array sorted by `key` (stable). */
export function sortedBy<T>(items: Iterable<T>, key: (t: T) => string): T[] {
  return [...items].sort((x, y) => compareStrings(key(x), key(y)));
}

/** A new Map with the same entries, iterated in key order. */
export function sortedMap<V>(m: ReadonlyMap<string, V>): Map<string, V> {
  return new Map(sortedBy(m.entries(), ([k]) => k));
}
