export * from './kube.ts';
export * from './constants.ts';
export * from './ip.ts';
export * from './errors.ts';
export * from './slice-plan.ts';
export * from './validate/index.ts';
export * from './parse-input.ts';
