// A bounded map that forgets the least recently used key first: the recorder's caches hold at
// most 4096 entries each (A.13), so a controller touching many objects cannot grow them forever.

export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`an LRU needs room for at least one entry, got ${max}`);
    this.#max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  /** The value, marking the key as just used. */
  get(key: K): V | undefined {
    const v = this.#map.get(key);
    if (v === undefined) return undefined;
    // A Map iterates in insertion order: re-inserting moves the key to the young end.
    this.#map.delete(key);
    this.#map.set(key, v);
    return v;
  }

  /** Stores the value as just used, evicting the oldest key when full. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K);
  }
}
