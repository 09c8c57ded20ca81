// The multi-cluster service as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { McsConfig } from './config.ts';
import { mcsConfig } from './config.ts';
import { startMcs } from './mcs-service.ts';

export const mcsService: ServiceDefinition<McsConfig> = {
  name: 'mcs',
  summary: "Multi-cluster services: this cluster's exports to the cluster set, and the set's imports as derived Services and zone views.",
  config: mcsConfig,
  common: (c) => c,
  start: (config, deps) => startMcs(config, deps),
};
