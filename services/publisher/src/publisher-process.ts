// The publisher's process: the slice path (publisher.ts) and, unless turned off, the event writer
// (events/event-writer.ts), the ServiceExport status writer (export-status/status-writer.ts) and
// the ServiceImport writer (service-imports/import-writer.ts), side by side with one logger, one
// metrics registry, one NATS connection (a lost server costs the process one reconnect, not one
// per part) and one /readyz that is ready only when all are.

import { connectNats, natsConnectionOf } from '@slicemesh/nats';
import type { NatsConnection } from '@slicemesh/nats';
import type { HostedService, Logger, Metrics, ReadyStatus } from '@slicemesh/runtime';
import type { PublisherConfig } from './config.ts';
import type { EventWriterHandle } from './events/event-writer.ts';
import { startEventWriter } from './events/event-writer.ts';
import type { StatusWriterHandle } from './export-status/status-writer.ts';
import { startStatusWriter } from './export-status/status-writer.ts';
import type { ImportWriterHandle } from './service-imports/import-writer.ts';
import { startImportWriter } from './service-imports/import-writer.ts';
import type { PublisherDeps, PublisherHandle } from './publisher.ts';
import { startPublisher } from './publisher.ts';

export interface PublisherProcess extends HostedService {
  readonly slices: PublisherHandle;
  /** Undefined with RECORD_EVENTS=false. */
  readonly events: EventWriterHandle | undefined;
  /** Undefined with WRITE_EXPORT_STATUS=false. */
  readonly exportStatus: StatusWriterHandle | undefined;
  /** Undefined with WRITE_SERVICE_IMPORTS=false. */
  readonly serviceImports: ImportWriterHandle | undefined;
}

/** The readiness answers as one: ready when all are, else every reason. */
export function bothReady(a: ReadyStatus, ...others: (ReadyStatus | undefined)[]): ReadyStatus {
  const reasons = [a, ...others].flatMap((s) => (s === undefined || s.ready ? [] : [s.reason]));
  return reasons.length === 0 ? { ready: true } : { ready: false, reason: reasons.join('; ') };
}

export function startPublisherProcess(config: PublisherConfig, deps: PublisherDeps & { readonly logger: Logger; readonly metrics: Metrics }): PublisherProcess {
  const log = deps.logger.child({ cluster: config.cluster });
  const nats: Promise<NatsConnection> = deps.nats ?? connectNats({ url: config.natsUrl, role: 'publisher', ...natsConnectionOf(config), name: `publisher-${config.cluster}`, log: (e) => log.info({ natsStatus: e.type, detail: e.detail }, 'nats status') });
  nats.catch(() => {}); // each part's start reports a failed connect
  const shared = { logger: deps.logger, metrics: deps.metrics, nats, ...(deps.env ? { env: deps.env } : {}) };
  const slices = startPublisher(config, { ...deps, nats });
  const events = config.recordEvents ? startEventWriter(config, { ...shared, ...(deps.clock ? { clock: deps.clock } : {}) }) : undefined;
  const exportStatus = config.writeExportStatus ? startStatusWriter(config, shared) : undefined;
  const serviceImports = config.writeServiceImports ? startImportWriter(config, shared) : undefined;
  return {
    slices,
    events,
    exportStatus,
    serviceImports,
    ready: Promise.all([slices.ready, events?.ready, exportStatus?.ready, serviceImports?.ready]).then(() => {}),
    readiness: () => bothReady(slices.readiness(), events?.readiness(), exportStatus?.readiness(), serviceImports?.readiness()),
    close: async () => {
      await Promise.all([slices.close(), events?.close(), exportStatus?.close(), serviceImports?.close()]);
      if (deps.nats !== undefined) return; // the caller's
      const nc = await nats.catch(() => undefined);
      await nc?.drain().catch(() => nc.close());
    },
  };
}
