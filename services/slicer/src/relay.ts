// Publishes the outbox to SLICES. The relay in @slicemesh/db reads rows in commit-safe order
// and never skips a late-committing transaction; each row goes out with its own msgId, so a
// row re-published after a crash is dropped by the stream's duplicate window.

import type { Db } from '@slicemesh/db';
import { loadRelayPosition, runOutboxRelay } from '@slicemesh/db';
import type { OutboxRecord } from '@slicemesh/db';
import type { JetStreamClient } from '@slicemesh/nats';
import { publishAcked } from '@slicemesh/nats';

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
}

/** Runs until `signal` aborts; resolves then. */
export async function runSlicesRelay(opts: RelayOptions): Promise<void> {
  await runOutboxRelay({
    db: opts.db,
    name: opts.name,
    signal: opts.signal,
    pollMs: opts.pollMs ?? 100,
    ...(opts.onError ? { onError: opts.onError } : {}),
    publish: async (row) => {
      const ack = await publishAcked(opts.js, row.subject, row.payload, { msgID: row.msgId });
      opts.onPublished?.(row, ack.duplicate);
    },
  });
}

/**
 * Outbox rows not yet published by relay `name` (by id past its position; a row of a
 * late-committing transaction may be counted once more). For the outbox lag gauge.
 */
export async function outboxBacklog(db: Db, name: string): Promise<number> {
  const pos = await loadRelayPosition(db, name);
  const row = await db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('id', '>', String(pos?.id ?? 0))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
