// @slicemesh/hints: topology hints and per-zone endpoint views, as a service.

export { hintsConfig, hintsConfigWith } from './config.ts';
export type { HintsConfig } from './config.ts';
export { ClosedError, startHints } from './hints-service.ts';
export { hintsLeaseGroup } from './config.ts';
export type { HintsDeps, HintsHandle } from './hints-service.ts';
export { clusterConsumerSpecs, consumerSpecs } from './consumers.ts';
export type { ConsumerSpec } from './consumers.ts';
export { desiredViews, planKeyWrites, digestOf } from './view-plan.ts';
export { reconcileService } from './service-reconciler.ts';
export { VersionFloors } from './node-topology.ts';
export type { ServiceReconcileReport } from './service-reconciler.ts';
export { hintsService } from './service.ts';
