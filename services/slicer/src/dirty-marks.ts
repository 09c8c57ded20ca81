// Which Services wait for a reconcile, and since which KUBE sequence (the `from` of the range a
// reconcile records). Held in memory only: a restart reconciles every Service once, which
// covers any mark a crash lost, as upstream's controller does when its informers first sync.

export interface DirtyMark {
  /** First sequence that marked the Service since its last reconcile. */
  readonly sinceSeq: number;
  /** Latest sequence that marked it. */
  readonly lastSeq: number;
}

export class DirtyMarks {
  readonly #marks = new Map<string, DirtyMark>();

  get size(): number {
    return this.#marks.size;
  }

  mark(key: string, seq: number): void {
    const m = this.#marks.get(key);
    this.#marks.set(key, m === undefined ? { sinceSeq: seq, lastSeq: seq } : { sinceSeq: Math.min(m.sinceSeq, seq), lastSeq: Math.max(m.lastSeq, seq) });
  }

  /** Removes and returns the mark of `key`; undefined when it is clean. */
  take(key: string): DirtyMark | undefined {
    const m = this.#marks.get(key);
    this.#marks.delete(key);
    return m;
  }

  /** Puts back a taken mark (a failed write), merged with any mark made since. */
  restore(key: string, mark: DirtyMark): void {
    this.mark(key, mark.sinceSeq);
    this.mark(key, mark.lastSeq);
  }

  has(key: string): boolean {
    return this.#marks.has(key);
  }

  /** Every mark, sorted by key (for logs and tests). */
  list(): { readonly key: string; readonly sinceSeq: number; readonly lastSeq: number }[] {
    return [...this.#marks].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, m]) => ({ key, ...m }));
  }
}
