// @slicemesh/multicluster: the pure core of multi-cluster services (MCS, KEP-1645) — what a
// cluster exports, how the exports of a cluster set merge into one import, the derived Service
// and ClusterSet IP, and the per-zone views of an import with locality. No I/O.
export * from './export-of.ts';
export * from './merge-exports.ts';
export * from './derived-service.ts';
export * from './import-views.ts';
export * from './liveness.ts';
export * from './cluster-set-state.ts';
export * from './export-status.ts';
export * from './service-import.ts';
