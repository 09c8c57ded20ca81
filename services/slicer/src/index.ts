// @slicemesh/slicer: the EndpointSlice and mirroring controllers over the KUBE event log.
export * from './config.ts';
export * from './slicer.ts';
export * from './engine.ts';
export * from './ingest.ts';
export * from './dirty-marks.ts';
export * from './store.ts';
export * from './reconcile.ts';
export * from './relay.ts';
export * from './kube-log.ts';
export * from './replay.ts';
export type * from './ports.ts';
export type { SlicerMetrics } from './metrics.ts';
export * from './service.ts';
export * from './compaction.ts';
export * from './compactor.ts';
