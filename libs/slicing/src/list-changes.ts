// How a name-sorted list that its owner changes in place has changed since an earlier version.
// The slicer's projection keeps each Service's selected pods in one such list; the pod memo and
// the trigger-time tracker ask it which positions were replaced since their last sync instead of
// comparing all 100k pods of a large Service on every pod change.

export interface ListChanges {
  /** The list's current version: every insert, removal or replacement increments it. */
  readonly version: number;
  /**
   * The positions replaced in place after `version` (a position may repeat), [] when nothing
   * changed; null when an item was inserted or removed since (positions moved), or when the
   * list no longer remembers that far back.
   */
  replacedSince(version: number): readonly number[] | null;
}

/** Where a consumer left a list: the list object itself (changed in place) and its version then. */
export interface ListMark {
  readonly list: readonly unknown[];
  readonly version: number;
}

/**
 * The positions of `list` replaced since `mark`, or null when the caller must compare the lists
 * itself: no changes feed, another list object, or a change that moved positions.
 */
export function replacedSinceMark(list: readonly unknown[], changes: ListChanges | undefined, mark: ListMark | null): readonly number[] | null {
  if (changes === undefined || mark === null || mark.list !== list) return null;
  return changes.replacedSince(mark.version);
}

/**
 * Brings `copy` (position-aligned with `list` at the mark) up to date at `positions`: for each
 * position holding another object now, `onReplaced(index, previous)` runs before the copy takes
 * the new object.
 */
export function patchReplaced<T>(copy: T[], list: readonly T[], positions: readonly number[], onReplaced: (index: number, previous: T) => void): void {
  for (const i of positions) {
    const item = list[i] as T;
    if (copy[i] === item) continue;
    onReplaced(i, copy[i] as T);
    copy[i] = item;
  }
}

/** The mark to keep after a sync of `list` (null without a changes feed). */
export function markOf(list: readonly unknown[], changes: ListChanges | undefined): ListMark | null {
  return changes === undefined ? null : { list, version: changes.version };
}
