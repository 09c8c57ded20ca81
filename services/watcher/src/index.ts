// @slicemesh/watcher: Kubernetes list+watch into the KUBE stream.
export * from './config.ts';
export * from './kube-message.ts';
export * from './kube-log.ts';
export * from './keyed-window.ts';
export * from './watcher.ts';
export * from './watcher-metrics.ts';
export * from './start-watcher.ts';
export * from './service.ts';
