export * from './kube.ts';
export * from './constants.ts';
export * from './ip.ts';
