// The publisher as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { PublisherConfig } from './config.ts';
import { publisherConfig } from './config.ts';
import type { PublisherDeps } from './publisher.ts';
import { startPublisherProcess } from './publisher-process.ts';

/** `extra` adds deps a host supplies (the in-process stack passes an empty environment). */
export function publisherServiceWith(extra: Pick<PublisherDeps, 'env'> = {}): ServiceDefinition<PublisherConfig> {
  return {
    name: 'publisher',
    summary: 'Writes the EndpointSlices of the SLICES stream and the Events of the EVENTS stream to the Kubernetes API (or, in shadow mode, counts what it would write).',
    config: publisherConfig,
    common: (c) => c,
    start: (config, deps) => startPublisherProcess(config, { ...deps, ...extra }),
  };
}

export const publisherService = publisherServiceWith();
