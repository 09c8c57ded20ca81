// Publishes the outbox to SLICES. The relay in @slicemesh/db reads rows in commit-safe order
// and never skips a late-committing transaction; each row goes out with its own msgId, so a
// row re-published after a crash is dropped by the stream's duplicate window. A row's payload is
// the JSON text the reconcile stored (migration 0008), sent as it is. A row written before SLICES
// subjects carried the partition token goes out under the current form (same msgId), so no
// message in the older form reaches the stream after an upgraded slicer starts.

import type { Db, LeaseClaim, OutboxRecord, RelayWaker } from '@slicemesh/db';
import { runOutboxRelay } from '@slicemesh/db';
import type { JetStreamClient } from '@slicemesh/nats';
import { currentSlicesSubject, publishAckedText } from '@slicemesh/nats';

export interface RelayOptions {
  readonly db: Db;
  readonly js: JetStreamClient;
  /** Position name in relay_positions: one running relay per schema and name. */
  readonly name: string;
  readonly signal: AbortSignal;
  /** Pause when caught up. Defaults to 100 ms. */
  readonly pollMs?: number;
  /** Called after each row is stored by the stream (duplicate: it was already there). */
  readonly onPublished?: (row: OutboxRecord, duplicate: boolean) => void;
  readonly onError?: (err: unknown) => void;
  /** Woken by the reconcile loop after each commit that wrote outbox rows. */
  readonly waker?: RelayWaker;
  /** The relay lease: positions are stored only while it holds. */
  readonly fence?: readonly LeaseClaim[];
  /** PARTITIONS and the stream subject prefix: what an older-form row's subject is rewritten with. */
  readonly partitions: number;
  readonly prefix: string;
}

/** Runs until `signal` aborts; resolves then. */
export async function runSlicesRelay(opts: RelayOptions): Promise<void> {
  await runOutboxRelay({
    db: opts.db,
    name: opts.name,
    signal: opts.signal,
    pollMs: opts.pollMs ?? 100,
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.waker ? { waker: opts.waker } : {}),
    ...(opts.fence ? { fence: opts.fence } : {}),
    publish: async (row) => {
      const ack = await publishAckedText(opts.js, subjectOf(row.subject, opts), row.payload, { msgID: row.msgId });
      opts.onPublished?.(row, ack.duplicate);
    },
  });
}

/** The row's subject in the current SLICES form; a subject that is not a SLICES one goes out as it is. */
function subjectOf(subject: string, opts: RelayOptions): string {
  try {
    return currentSlicesSubject(subject, opts.partitions, { prefix: opts.prefix });
  } catch {
    return subject;
  }
}
export { outboxBacklog } from '@slicemesh/db';
