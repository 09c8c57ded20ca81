export * from './service-port.ts';
export * from './merge-endpoints.ts';
export * from './categorize-endpoints.ts';
export * from './proxy-plan.ts';
export * from './endpoint-slice-cache.ts';
export * from './service-change-tracker.ts';
export * from './zone-views.ts';
export { deepEqual } from './deep-equal.ts';
export * from './service-health.ts';
