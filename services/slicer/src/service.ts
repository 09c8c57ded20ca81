// The slicer as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { SlicerConfig } from './config.ts';
import { slicerConfig } from './config.ts';
import { startSlicer } from './slicer.ts';

export const slicerService: ServiceDefinition<SlicerConfig> = {
  name: 'slicer',
  summary: 'The EndpointSlice and mirroring controllers over the KUBE event log.',
  config: slicerConfig,
  common: (c) => c,
  start: (config, deps) => startSlicer(config, deps),
};
