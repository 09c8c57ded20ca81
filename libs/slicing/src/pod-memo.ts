// Which record each listed pod gets: the one derived from the same pod object in the previous
// sync, found by position (allowing a few pods inserted, removed or moved), else a new one.
// Records are caches, so which one a pod gets never changes a result.

import type { Pod } from '@slicemesh/model';
import type { Scope } from './endpoint-cache.ts';
import { PodRecord } from './endpoint-cache.ts';
import type { ListChanges } from './list-changes.ts';
import { markOf, patchReplaced, replacedSinceMark } from './list-changes.ts';

// How far from its previous position a pod object is looked for.
const LOOKAHEAD = 8;

// Up to this many changed positions, a list as long as the previous one patches the memo in
// place: a pod change then allocates nothing of the list's length (two 100k-entry arrays per
// sync would bring the next garbage collection that much closer).
const MAX_PATCHED = 1024;

/** A position whose pod object changed since the previous sync, and that sync's record of it. */
export interface ReplacedRecord {
  readonly index: number;
  readonly old: PodRecord;
}

export interface AlignedRecords {
  /** The record of each pod (index-aligned); belongs to the memo: read it before the next sync. */
  readonly records: readonly PodRecord[];
  /**
   * Set when the changes feed said only positions were replaced since the previous sync: the
   * positions whose pod object differs, with their previous records. Null otherwise.
   */
  readonly replaced: readonly ReplacedRecord[] | null;
}

/** The record of each of `pods`, and makes the scope's memo describe `pods`. */
export function alignRecords(scope: Scope, pods: readonly Pod[], changes?: ListChanges): AlignedRecords {
  const memo = scope.podMemo;
  const positions = memo === null ? null : replacedSinceMark(pods, changes, memo.mark);
  if (memo !== null && positions !== null && memo.pods.length === pods.length) {
    // Only these positions can differ from the memo's copy: no walk over the whole list.
    const replaced: ReplacedRecord[] = [];
    patchReplaced(memo.pods, pods, positions, (i) => {
      replaced.push({ index: i, old: memo.records[i] as PodRecord });
      memo.records[i] = new PodRecord(pods[i] as Pod, scope);
    });
    memo.mark = markOf(pods, changes);
    return { records: memo.records, replaced };
  }
  if (memo === null || memo.pods.length !== pods.length || !patch(scope, memo.pods, memo.records, pods)) {
    const records = rebuild(scope, memo?.pods ?? [], memo?.records ?? [], pods);
    // A copy: a caller may reuse and modify its array; pod objects themselves are immutable.
    scope.podMemo = { pods: pods.slice(), records, mark: markOf(pods, changes) };
    return { records, replaced: null };
  }
  memo.mark = markOf(pods, changes);
  return { records: memo.records, replaced: null };
}

// The changed positions are resolved against the untouched memo first (a pod may have moved
// a little), then written in.
function patch(scope: Scope, memoPods: Pod[], memoRecords: PodRecord[], pods: readonly Pod[]): boolean {
  const changed = changedPositions(memoPods, pods);
  if (changed === null) return false;
  const found = changed.map((i) => near(memoPods, memoRecords, pods[i] as Pod, i) ?? new PodRecord(pods[i] as Pod, scope));
  for (let n = 0; n < changed.length; n++) {
    const i = changed[n] as number;
    memoPods[i] = pods[i] as Pod;
    memoRecords[i] = found[n] as PodRecord;
  }
  return true;
}

// A function of its own: optimised code entered in the middle of a long loop is reused on
// later calls, and code after the loop that had not run yet (a full reconcile returns early)
// would discard it on every pod change.
function changedPositions(memoPods: readonly Pod[], pods: readonly Pod[]): number[] | null {
  const changed: number[] = [];
  for (let i = 0; i < pods.length; i++) {
    if (memoPods[i] === pods[i]) continue;
    if (changed.length === MAX_PATCHED) return null;
    changed.push(i);
  }
  return changed;
}

function near(memoPods: readonly Pod[], memoRecords: readonly PodRecord[], pod: Pod, i: number): PodRecord | undefined {
  const end = Math.min(memoPods.length, i + LOOKAHEAD + 1);
  for (let k = Math.max(0, i - LOOKAHEAD); k < end; k++) if (memoPods[k] === pod) return memoRecords[k];
  return undefined;
}

// One forward walk: `j` is the aligned position in the previous list.
function rebuild(scope: Scope, memoPods: readonly Pod[], memoRecords: readonly PodRecord[], pods: readonly Pod[]): PodRecord[] {
  const records = new Array<PodRecord>(pods.length);
  let j = 0;
  for (let i = 0; i < pods.length; i++) {
    const pod = pods[i] as Pod;
    let rec: PodRecord | undefined;
    for (let k = j; k < j + LOOKAHEAD && k < memoPods.length; k++) {
      if (memoPods[k] === pod) {
        rec = memoRecords[k];
        j = k + 1;
        break;
      }
    }
    records[i] = rec ?? new PodRecord(pod, scope);
  }
  return records;
}
