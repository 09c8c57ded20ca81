// A name-sorted list of objects kept sorted under single inserts, replacements and removals.
// The slicing memo finds a pod's previous record by its position in the list (pod-memo.ts), so
// a namespace's pods must come back in the same order, and the same objects, on every reconcile.

interface Named {
  readonly metadata: { readonly name: string };
}

export class SortedByName<T extends Named> {
  readonly #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  /** The list itself (sorted by name); read it before the next change. */
  view(): readonly T[] {
    return this.#items;
  }

  /** Inserts `item`, or replaces the item of the same name in place. */
  put(item: T): void {
    const i = this.#search(item.metadata.name);
    if (i < this.#items.length && this.#items[i]?.metadata.name === item.metadata.name) this.#items[i] = item;
    else this.#items.splice(i, 0, item);
  }

  /** Removes the item named `name`; false when there was none. */
  remove(name: string): boolean {
    const i = this.#search(name);
    if (i >= this.#items.length || this.#items[i]?.metadata.name !== name) return false;
    this.#items.splice(i, 1);
    return true;
  }

  // First index whose name is ≥ `name` (code-unit order, as the stores sort).
  #search(name: string): number {
    let lo = 0;
    let hi = this.#items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#items[mid] as T).metadata.name < name) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
