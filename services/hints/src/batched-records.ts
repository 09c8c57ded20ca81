// ServiceRecordStore on the durable record. The intents of every service reconciling at the same
// time go to Postgres in one transaction, and each service waits for its own before it writes
// KV: a new key is recorded before it can exist in a bucket.
//
// Confirmations (step 3 of service-reconciler.ts) are written behind: recordPublished returns
// at once and the confirmations go out together, the newest per key, in the next write. Nothing
// waits for them, because the record only matters at the next start, and there the audit treats
// a key whose recorded revision is not the bucket's as unconfirmed (published-index.ts): a
// confirmation lost to a crash costs a re-put, never a stale view. Waiting for it doubled the
// time a reconcile held its worker (measured: 20 ms of 49 ms at 500 pod changes/s). A write that
// fails is retried with what it carried, under any newer confirmation of the same keys, until it
// succeeds or the failure is final (a lost lease).

import type { HintsIntent, PublishedView } from '@slicemesh/db';
import { GroupCommit } from './group-commit.ts';
import type { ServiceRecordStore, ViewIntent } from './ports.ts';
import type { HintsProjection } from './projection.ts';
import { serviceKeyOf } from './published-index.ts';

/** The durable writes behind it (HintsProjectionStore). */
export interface PublishingRecord {
  recordIntents(intents: readonly HintsIntent[]): Promise<void>;
  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void>;
}

export interface WriteBehindOptions {
  /** A confirmation write failed: 'retry' it after `retryMs`, or 'drop' every unwritten one and take no more (the lease is gone). */
  readonly onFailed: (err: unknown) => 'retry' | 'drop';
  /** A confirmation write succeeded (after a failure, say, to report recovery). */
  readonly onWritten?: () => void;
  /** Waits before a retry; default a timer of `ms`. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly retryMs?: number;
}

/** A confirmed put (the view) or a forgotten key (null). */
type Unwritten = PublishedView | null;

export class BatchedRecords implements ServiceRecordStore {
  private readonly projection: HintsProjection;
  private readonly record: PublishingRecord;
  private readonly opts: WriteBehindOptions;
  readonly #intents: GroupCommit<HintsIntent>;
  /** Per key, the newest confirmation or deletion not yet written. */
  #unwritten = new Map<string, Unwritten>();
  #writing: Promise<void> | undefined;
  #dropped = false;

  constructor(record: PublishingRecord, projection: HintsProjection, opts: WriteBehindOptions) {
    this.projection = projection;
    this.record = record;
    this.opts = opts;
    this.#intents = new GroupCommit((items) => record.recordIntents(items));
  }

  async recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void> {
    await this.#intents.submit({ namespace, name, ...intent });
    if (intent.decisions !== undefined) this.projection.setDecisions(serviceKeyOf(namespace, name), intent.decisions);
  }

  /** Queues the confirmations and forgotten keys; resolves at once (see the file comment). */
  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void> {
    if (this.#dropped) return Promise.resolve();
    for (const v of confirmed) this.#unwritten.set(v.key, v);
    for (const k of deleted) this.#unwritten.set(k, null);
    this.#kick();
    return Promise.resolve();
  }

  /**
   * Writes what is queued, waits for it (a few attempts), then takes nothing more: for a clean
   * shutdown, so the next start re-puts nothing. Returns how many keys were left unwritten.
   */
  async close(): Promise<number> {
    for (let attempt = 0; attempt < 3 && !this.#dropped; attempt++) {
      this.#kick();
      if (this.#writing === undefined) break;
      await this.#writing;
    }
    const left = this.#unwritten.size;
    this.#dropped = true;
    this.#unwritten.clear();
    return left;
  }

  #kick(): void {
    if (this.#writing !== undefined || this.#unwritten.size === 0 || this.#dropped) return;
    this.#writing = this.#write().finally(() => {
      this.#writing = undefined;
      this.#kick();
    });
  }

  async #write(): Promise<void> {
    // One turn later, so the confirmations of every reconcile finishing now go out together.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.#dropped) return;
    const batch = this.#unwritten;
    this.#unwritten = new Map();
    const confirmed: PublishedView[] = [];
    const deleted: string[] = [];
    for (const [key, v] of batch) {
      if (v === null) deleted.push(key);
      else confirmed.push(v);
    }
    try {
      await this.record.recordPublished(confirmed, deleted);
      this.opts.onWritten?.();
    } catch (err) {
      if (this.opts.onFailed(err) === 'drop') {
        this.#dropped = true;
        this.#unwritten.clear();
        return;
      }
      // Back under whatever was queued meanwhile: a newer confirmation of a key wins.
      for (const [key, v] of batch) if (!this.#unwritten.has(key)) this.#unwritten.set(key, v);
      const ms = this.opts.retryMs ?? 1000;
      await (this.opts.sleep ?? ((t: number) => new Promise<void>((resolve) => setTimeout(resolve, t))))(ms);
    }
  }
}
