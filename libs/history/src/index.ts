// @slicemesh/history: the log, read for people. A pure engine over a LogSource (a .slog file or
// the live streams): the state at any point, the history of a Service with its causes in plain
// words, why a node sends to an endpoint, diffs between points, export. It folds KUBE events
// into the slicer's ClusterState and calls libs/core and libs/proxy-state, so a replayed answer
// is the one the live services compute. The live adapter is openLiveLog in @slicemesh/cli.
export * from './source.ts';
export * from './errors.ts';
export * from './replayer.ts';
export * from './checkpoints.ts';
export * from './points.ts';
export * from './service-state.ts';
export * from './state-at.ts';
export * from './node-program.ts';
export * from './why.ts';
export * from './history-of.ts';
export * from './diff.ts';
export * from './compare.ts';
export * from './causes.ts';
export * from './log-format.ts';
export * from './log-file.ts';
export * from './export-log.ts';
export * from './memory-log.ts';
export * from './dead-letters.ts';
