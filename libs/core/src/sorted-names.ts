// A name-sorted list of objects kept sorted under single inserts, replacements and removals.
// The slicing memo finds a pod's previous record by its position in the list (pod-memo.ts), so
// a namespace's pods must come back in the same order, and the same objects, on every reconcile.
// It also tells which positions were replaced since a version (ListChanges), so that a pod
// change in a 100k-pod Service is found without comparing the whole list.

import type { ListChanges } from '@slicemesh/slicing';

interface Named {
  readonly metadata: { readonly name: string };
}

// Replacements remembered; older ones are forgotten (replacedSince then answers null).
const JOURNAL_MAX = 1024;

export class SortedByName<T extends Named> implements ListChanges {
  readonly #items: T[] = [];
  #version = 0;
  /** Positions replaced in versions #base + 1 … #version, in order. */
  #replaced: number[] = [];
  #base = 0;

  get version(): number {
    return this.#version;
  }

  replacedSince(version: number): readonly number[] | null {
    if (version < this.#base || version > this.#version) return null;
    return this.#replaced.slice(version - this.#base);
  }

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
    if (i < this.#items.length && this.#items[i]?.metadata.name === item.metadata.name) {
      if (this.#items[i] === item) return;
      this.#items[i] = item;
      this.#version++;
      this.#replaced.push(i);
      if (this.#replaced.length > JOURNAL_MAX) {
        const drop = this.#replaced.length - JOURNAL_MAX / 2;
        this.#replaced = this.#replaced.slice(drop);
        this.#base += drop;
      }
    } else {
      this.#items.splice(i, 0, item);
      this.#moved();
    }
  }

  /** Removes the item named `name`; false when there was none. */
  remove(name: string): boolean {
    const i = this.#search(name);
    if (i >= this.#items.length || this.#items[i]?.metadata.name !== name) return false;
    this.#items.splice(i, 1);
    this.#moved();
    return true;
  }

  // Positions after an insert or removal moved: earlier versions can no longer be answered.
  #moved(): void {
    this.#version++;
    this.#base = this.#version;
    this.#replaced = [];
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
