// The identity registry of one Service scope: for each endpoint identity (A.6.1), the
// DesiredEndpoint holding it, kept as an array sorted by identity.
//
// Sorted rather than hashed: new endpoints are placed in identity order anyway, so a full
// reconcile sorts its new endpoints once and needs no hashing at all. Duplicates are then
// neighbours, a group's leftovers come out of one scan already in order, and an identity is
// found by binary search (rarely needed: an existing endpoint normally links to its
// producer). A pod change replaces or inserts a single entry.

/** What the registry needs of an entry; `mark` is the stamp of the last sync that wanted it. */
export interface RegistryEntry {
  readonly key: string;
  mark: number;
  /** Equals the registry's epoch exactly while the entry is in it. */
  epoch: number;
}

// Epochs are unique across registries, so an entry can never look held by another one.
let lastEpoch = 0;

function byKey(a: RegistryEntry, b: RegistryEntry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

// Its own function, like every long loop run once per sync: optimised code entered in the
// middle of a long loop is reused on later calls, and any path after the loop that had not run
// yet (a full reconcile merges, a pod change puts) would discard it on every call.
function hasEqualNeighbours(sorted: readonly RegistryEntry[]): boolean {
  for (let i = 1; i < sorted.length; i++) if ((sorted[i - 1] as RegistryEntry).key === (sorted[i] as RegistryEntry).key) return true;
  return false;
}

// The first `count` entries marked with `stamp`, in order.
function wantedEntries<T extends RegistryEntry>(entries: readonly T[], stamp: number, count: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < entries.length && out.length < count; i++) {
    const e = entries[i] as T;
    if (e.mark === stamp) out.push(e);
  }
  return out;
}

/**
 * Merges two lists sorted by key into `out`, each key once (`fresh` wins). False when a key
 * occurs twice (in both lists, or twice in `fresh`).
 */
function mergeSorted<T extends RegistryEntry>(kept: readonly T[], fresh: readonly T[], out: T[]): boolean {
  let unique = true;
  let k = 0;
  for (let i = 0; i < fresh.length; i++) {
    const e = fresh[i] as T;
    while (k < kept.length && (kept[k] as T).key < e.key) out.push(kept[k++] as T);
    if (k < kept.length && (kept[k] as T).key === e.key) {
      unique = false;
      k++;
    }
    const last = out[out.length - 1];
    if (last !== undefined && last.key === e.key) {
      unique = false;
      out[out.length - 1] = e;
    } else {
      out.push(e);
    }
  }
  while (k < kept.length) out.push(kept[k++] as T);
  return unique;
}

function setEpoch(entries: readonly RegistryEntry[], epoch: number): void {
  for (let i = 0; i < entries.length; i++) (entries[i] as RegistryEntry).epoch = epoch;
}

// Up to this many new entries are put one by one (binary search, insert); more are merged.
const FEW = 16;

export class IdentityRegistry<T extends RegistryEntry> {
  private entries: T[] = [];
  private epoch = ++lastEpoch;
  private cursor = 0;

  /** The entries in identity order, each identity once. */
  get sorted(): readonly T[] {
    return this.entries;
  }

  holds(e: T): boolean {
    return e.epoch === this.epoch;
  }

  /** The holder of `key`, if any. */
  find(key: string): T | undefined {
    const entries = this.entries;
    // Lookups come in runs (slices list endpoints in identity order): try next to the last
    // hit before searching.
    for (let i = this.cursor; i < this.cursor + 2 && i < entries.length; i++) {
      const e = entries[i] as T;
      if (e.key === key) {
        this.cursor = i + 1;
        return e;
      }
    }
    const i = this.lowerBound(key);
    const e = entries[i];
    if (e === undefined || e.key !== key) return undefined;
    this.cursor = i + 1;
    return e;
  }

  /**
   * Makes each of `fresh` (wanted by the sync `stamp`, not held; sorted by identity here)
   * the holder of its identity. `wanted` counts every endpoint that sync wants, `fresh` included.
   * Returns false when two wanted endpoints share an identity: the registry stays consistent,
   * but the sync must use Map semantics (the later pod wins). Entries no longer wanted are
   * dropped when merging, or once they outnumber the wanted ones.
   */
  admit(fresh: T[], stamp: number, wanted: number): boolean {
    if (fresh.length > 1) fresh.sort(byKey);
    let unique = !hasEqualNeighbours(fresh);
    if (fresh.length <= FEW && this.entries.length <= 2 * wanted + 1024) {
      for (const e of fresh) if (!this.put(e, stamp)) unique = false;
      return unique;
    }
    return this.merge(fresh, stamp, wanted - fresh.length) && unique;
  }

  /** Forgets every entry (they are fresh again when next wanted). */
  clear(): void {
    this.entries = [];
    this.epoch = ++lastEpoch;
    this.cursor = 0;
  }

  private lowerBound(key: string): number {
    const entries = this.entries;
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((entries[mid] as T).key < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Inserts or replaces one entry; false when it replaced an entry wanted by the same sync. */
  private put(e: T, stamp: number): boolean {
    const i = this.lowerBound(e.key);
    const prev = this.entries[i];
    e.epoch = this.epoch;
    if (prev === undefined || prev.key !== e.key) {
      this.entries.splice(i, 0, e);
      return true;
    }
    prev.epoch = 0;
    this.entries[i] = e;
    return prev.mark !== stamp;
  }

  /** Rebuilds from `fresh` (sorted) and the `held` entries this sync wants; drops the rest. */
  private merge(fresh: readonly T[], stamp: number, held: number): boolean {
    const out: T[] = [];
    const unique = mergeSorted(wantedEntries(this.entries, stamp, held), fresh, out);
    const epoch = ++lastEpoch;
    setEpoch(out, epoch);
    this.entries = out;
    this.epoch = epoch;
    this.cursor = 0;
    return unique;
  }
}
