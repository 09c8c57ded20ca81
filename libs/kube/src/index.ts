// @slicemesh/kube: the only package that imports @kubernetes/client-node.
export * from './to-domain.ts';
export * from './kube-config.ts';
export * from './list.ts';
export * from './informers.ts';
export type { KubeConfig } from '@kubernetes/client-node';
export * from './slice-api.ts';
export * from './event-api.ts';
export * from './service-export-api.ts';
export * from './service-import-api.ts';
