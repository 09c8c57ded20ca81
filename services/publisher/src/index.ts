// @slicemesh/publisher: the slices of the SLICES stream, written to the Kubernetes API.

export { publisherConfig, publisherConfigWith, parseManagedBy, kubeConnectionOf } from './config.ts';
export type { PublisherConfig } from './config.ts';
export { startPublisher, publisherNames } from './publisher.ts';
export type { PublisherDeps, PublisherHandle } from './publisher.ts';
export { coalesce, decide, sameSlice, writableSlice, managedByOf } from './decide.ts';
export type { Decision, DecisionKind, SliceAction, SequencedChange } from './decide.ts';
export { applyAction, applyActions, rateLimitedApi, PUBLISHER_MODES } from './apply.ts';
export type { ActionResult, Outcome, PublisherMode } from './apply.ts';
export { publisherService, publisherServiceWith } from './service.ts';
export { startPublisherProcess } from './publisher-process.ts';
export type { PublisherProcess } from './publisher-process.ts';
export { startEventWriter, eventWriterDurable } from './events/event-writer.ts';
export type { EventWriterConfig, EventWriterDeps, EventWriterHandle } from './events/event-writer.ts';
export { EventCorrelator, RECORDER_DEFAULTS } from './events/correlator.ts';
export type { Correlation, RecordedEvent, RecorderOptions } from './events/correlator.ts';
