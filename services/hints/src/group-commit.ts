// Group commit: concurrent callers each submit one item and wait for it to be durable; the items
// submitted while a write is running (or in the same turn of the event loop) go out together in
// the next write. N reconciling services then cost one transaction, not N, and no caller waits
// longer than the write in flight plus its own.

export class GroupCommit<T> {
  private readonly write: (items: readonly T[]) => Promise<void>;
  #pending: { readonly item: T; readonly resolve: () => void; readonly reject: (err: unknown) => void }[] = [];
  #running = false;
  #scheduled = false;

  /** `write` stores a batch of items; it runs once at a time. */
  constructor(write: (items: readonly T[]) => Promise<void>) {
    this.write = write;
  }

  /** Resolves once `item` is written; rejects with the error of the write that carried it. */
  submit(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#running || this.#scheduled || this.#pending.length === 0) return;
    this.#scheduled = true;
    // One turn later, so items submitted by the callbacks of this turn join the batch.
    setImmediate(() => {
      this.#scheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    this.#running = true;
    try {
      await this.write(batch.map((p) => p.item));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    } finally {
      this.#running = false;
      this.#schedule();
    }
  }
}
