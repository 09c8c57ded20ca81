// @slicemesh/nats: the only package that imports the NATS client.
export * from './errors.ts';
// Subjects, keys and message bodies are defined once, in @slicemesh/contracts.
export * from '@slicemesh/contracts';
export * from './connect.ts';
export * from './credentials.ts';
export * from './permissions.ts';
export * from './auth-config.ts';
export * from './auth-files.ts';
export * from './streams.ts';
export * from './publish.ts';
export * from './consume.ts';
export * from './consume-batches.ts';
export * from './consumer-watchdog.ts';
export * from './follow-subject.ts';
export * from './kv.ts';
export * from './stream-reader.ts';
export * from './fetch-to-end.ts';
export * from './redrive.ts';
export * from './event-requests.ts';
export type { NatsConnection } from '@nats-io/transport-node';
export type { JetStreamClient, JetStreamManager, StreamInfo, ConsumerInfo } from '@nats-io/jetstream';
export type { KV } from '@nats-io/kv';
export { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
export * from './log-retention.ts';
export * from './local-cluster.ts';
export * from './servers.ts';
export * from './settings.ts';
export * from './counts.ts';
