// @slicemesh/contracts: the one home of every message and key the services exchange — KUBE
// events, SLICES changes, dead letters, the KV keys — with their subjects, parsers and
// validators. Producers build them here and consumers parse them here; nothing else does.
export * from './errors.ts';
export * from './tokens.ts';
export * from './subjects.ts';
export * from './kube-event.ts';
export * from './slice-changed.ts';
export * from './hinted-entry.ts';
export * from './kv-values.ts';
export * from './dead-letter.ts';
export * from './slice-ownership.ts';
export * from './hints-consumers.ts';
export * from './event-request.ts';
export * from './service-export.ts';
export * from './export-status.ts';
export * from './service-import.ts';
