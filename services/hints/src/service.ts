// The hints service as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { HintsConfig } from './config.ts';
import { hintsConfig } from './config.ts';
import { startHints } from './hints-service.ts';

export const hintsService: ServiceDefinition<HintsConfig> = {
  name: 'hints',
  summary: 'Topology hints and per-zone endpoint views.',
  config: hintsConfig,
  common: (c) => c,
  start: (config, deps) => startHints(config, deps),
};
