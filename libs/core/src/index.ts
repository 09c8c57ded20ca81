// @slicemesh/core: the one composition of the pure core that the CLI, the slicer, the hints
// service, the replay and the agents share, plus the in-memory projection they read.
export * from './affected.ts';
export * from './cluster-state.ts';
export * from './plan-service.ts';
export * from './service-view.ts';
export * from './slice-writes.ts';
export * from './sorted-names.ts';
export * from './hint-service.ts';
export * from './plan-cluster.ts';
export * from './hint-cluster.ts';
export * from './hint-reuse.ts';
