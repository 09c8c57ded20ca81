// The publisher's process: the slice path (publisher.ts) and, unless RECORD_EVENTS=false, the
// event writer (events/event-writer.ts), side by side with one logger, one metrics registry and
// one /readyz that is ready only when both are.

import type { HostedService, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import type { PublisherConfig } from './config.ts';
import type { EventWriterHandle } from './events/event-writer.ts';
import { startEventWriter } from './events/event-writer.ts';
import type { PublisherDeps, PublisherHandle } from './publisher.ts';
import { startPublisher } from './publisher.ts';

export interface PublisherProcess extends HostedService {
  readonly slices: PublisherHandle;
  /** Undefined with RECORD_EVENTS=false. */
  readonly events: EventWriterHandle | undefined;
}

/** Both readiness answers as one: ready when both are, else every reason. */
export function bothReady(a: ReadyStatus, b: ReadyStatus | undefined): ReadyStatus {
  const reasons = [a, b].flatMap((s) => (s === undefined || s.ready ? [] : [s.reason]));
  return reasons.length === 0 ? { ready: true } : { ready: false, reason: reasons.join('; ') };
}

export function startPublisherProcess(config: PublisherConfig, deps: PublisherDeps & { readonly logger: Logger; readonly metrics: Metrics }): PublisherProcess {
  const slices = startPublisher(config, deps);
  const events = config.recordEvents
    ? startEventWriter(config, { logger: deps.logger, metrics: deps.metrics, ...(deps.clock ? { clock: deps.clock } : {}), ...(deps.env ? { env: deps.env } : {}) })
    : undefined;
  return {
    slices,
    events,
    ready: Promise.all([slices.ready, events?.ready]).then(() => {}),
    readiness: () => bothReady(slices.readiness(), events?.readiness()),
    close: async () => {
      await Promise.all([slices.close(), events?.close()]);
    },
  };
}
