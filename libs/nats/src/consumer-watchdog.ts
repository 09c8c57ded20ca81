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
    // Not 'consumer_deleted': nats-server 2.9 also answers pending pulls with 409 "Consumer
    // Deleted" while a replicated consumer changes leader (seen in the cluster campaign); the
    // client then looks the consumer up, and 'consumer_not_found' follows if it is really gone.
    case 'stream_not_found':
      return `its stream ${n.name} is gone`;
    default:
      return undefined;
  }
}

/** How long a consume loop may go without a pull or a message before it counts as stalled, ms. */
export const STALL_SILENCE_MS = 30_000;

export interface ConsumerWatch {
  /** A message arrived: the consumer is alive. */
  alive(): void;
  /** Runs a handler: silence while it runs is the loop's, not the consumer's, and does not count. */
  handling<T>(work: Promise<T>): Promise<T>;
  /** Stops watching (the loop ended). */
  stop(): void;
}

/**
 * Watches one consume loop: its status notifications (stallOf) and its silence. The client pulls
 * again every expiry (a `next` notification) while it is healthy, idle or not; when a server's
 * loss left the consumer without a leader, the client's own recovery (after a reconnect it asks
 * the consumer's info until that works, with its heartbeat monitor off) can wait for ever without
 * a single notification — so no pull and no message for `silenceMs` is a stall too. Calls
 * `stalled` once.
 */
export function watchConsumer(
  stream: string,
  durable: string,
  status: AsyncIterable<ConsumerNotification>,
  stalled: (err: ConsumerStalledError) => void,
  opts: {
    readonly silenceMs?: number;
    readonly now?: () => number;
    /**
     * Asks the server about the consumer (its info); while every answer fails for `silenceMs` the
     * consumer counts as stalled. The client was seen to go on pulling from a replicated consumer
     * without a leader (its info "JetStream system temporarily unavailable" for 90 s) without a
     * notification, so the pulls alone prove nothing.
     */
    readonly probe?: () => Promise<unknown>;
    readonly probeEveryMs?: number;
  } = {},
): ConsumerWatch {
  const now = opts.now ?? Date.now;
  const silenceMs = opts.silenceMs ?? STALL_SILENCE_MS;
  const probeEveryMs = opts.probeEveryMs ?? Math.max(50, Math.min(10_000, silenceMs / 3));
  let last = now();
  let lastProbe = last;
  let done = false;
  let handlers = 0;
  let probing = false;
  let failingSince: number | undefined;
  const report = (why: string): void => {
    if (done) return;
    done = true;
    clearInterval(timer);
    stalled(new ConsumerStalledError(`consumer ${stream}/${durable}: ${why}`));
  };
  const askServer = (probe: () => Promise<unknown>): void => {
    probing = true;
    probe().then(
      () => {
        failingSince = undefined;
        probing = false;
      },
      (err: unknown) => {
        probing = false;
        failingSince ??= now();
        const failingMs = now() - failingSince;
        if (failingMs > silenceMs) report(`the server has not answered for it for ${Math.round(failingMs / 1000)} s (${err instanceof Error ? err.message : String(err)})`);
      },
    );
  };
  // One tick checks the silence and, every probeEveryMs, asks the server.
  const timer = setInterval(() => {
    const t = now();
    if (handlers > 0) last = t;
    if (t - last > silenceMs) return report(`no pull and no message for ${Math.round((t - last) / 1000)} s (the client is waiting for a consumer the server does not serve)`);
    if (opts.probe !== undefined && !probing && t - lastProbe >= probeEveryMs) {
      lastProbe = t;
      askServer(opts.probe);
    }
  }, Math.min(Math.max(50, Math.min(5000, silenceMs / 4)), opts.probe === undefined ? Infinity : probeEveryMs));
  timer.unref?.();
  void (async () => {
    try {
      for await (const n of status) {
        if (done) return;
        if (n.type === 'next') last = now();
        const why = stallOf(n);
        if (why !== undefined) return report(why);
      }
    } catch {
      // The status stream ends with the messages; nothing to report from it.
    }
  })();
  return {
    alive: () => void (last = now()),
    handling: async (work) => {
      handlers++;
      try {
        return await work;
      } finally {
        handlers--;
        last = now();
      }
    },
    stop: () => {
      done = true;
      clearInterval(timer);
    },
  };
}
