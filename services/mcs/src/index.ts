// @slicemesh/mcs: multi-cluster services (exports and imports across a cluster set), as a service.
export { mcsConfig, mcsConfigWith, mcsConfigProblem } from './config.ts';
export type { McsConfig } from './config.ts';
export { startMcs } from './mcs-service.ts';
export type { McsDeps, McsHandle } from './mcs-service.ts';
export { mcsService } from './service.ts';
