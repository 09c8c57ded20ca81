// Noticing a durable the server stopped serving. The client keeps pulling from a consumer that
// no longer answers and only reports it as notifications, so a loop over its messages waits for
// ever: in the NATS-cluster fault campaign a slicer partition's replicated consumer was left
// without a leader after a server's kill -9 ("JetStream system temporarily unavailable" for its
// info for 90 s and more) while its slicer, idle, noticed nothing. Past a bound the watchdog ends
// the loop with ConsumerStalledError; the services already restart a failed loop at their own
// stored position (restartDurableAt), which recreates the consumer.

import type { ConsumerNotification } from '@nats-io/jetstream';

/** The loop over a durable ended because the server stopped serving it (see the file comment). */
export class ConsumerStalledError extends Error {
  override readonly name = 'ConsumerStalledError';
}

/** How many missed heartbeats in a row (the client pulls with one every half expiry) end the loop. */
export const STALL_HEARTBEATS = 6;
/** How many failed lookups of a consumer in a row end the loop. */
export const STALL_NOT_FOUND = 3;

/** Why `n` means the server stopped serving the consumer, or undefined when it does not (yet). */
export function stallOf(n: ConsumerNotification): string | undefined {
  switch (n.type) {
    case 'heartbeats_missed':
      return n.count >= STALL_HEARTBEATS ? `${n.count} heartbeats missed in a row (no leader, or the server lost it)` : undefined;
    case 'consumer_not_found':
      return n.count >= STALL_NOT_FOUND ? `not found ${n.count} times in a row` : undefined;
    case 'consumer_deleted':
      return `deleted on the server (${n.code} ${n.description})`;
    case 'stream_not_found':
      return `its stream ${n.name} is gone`;
    default:
      return undefined;
  }
}

/**
 * Reads `status` until it reports a stall, then calls `stalled` once with the reason; ends when
 * the status iterator does. Never rejects.
 */
export async function watchConsumer(stream: string, durable: string, status: AsyncIterable<ConsumerNotification>, stalled: (err: ConsumerStalledError) => void): Promise<void> {
  try {
    for await (const n of status) {
      const why = stallOf(n);
      if (why === undefined) continue;
      stalled(new ConsumerStalledError(`consumer ${stream}/${durable}: ${why}`));
      return;
    }
  } catch {
    // The status stream ends with the messages; nothing to report from it.
  }
}
