// The smallest interfaces the hints logic needs from Postgres and the KV buckets (habit 12).
// pg-store.ts and kv-port.ts implement them; the unit tests use in-memory fakes.

import type { HintDecision, PublishedView } from '@slicemesh/db';
import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import type { KubeEnvelope, SliceChangedV1 } from './messages.ts';

/** Writes of the three consumers: each one transaction with the consumer's offset. */
export interface IngestStore {
  /** Applies the slice changes unless `seq` ≤ the consumer's offset; false for a redelivery. */
  applySliceChanged(consumer: string, seq: number, msg: SliceChangedV1): Promise<boolean>;
  /** Stores or removes the node (stale versions ignored) unless already applied. */
  applyNodeEvent(consumer: string, seq: number, env: KubeEnvelope<Node>): Promise<boolean>;
  /** Stores or removes the service (stale versions ignored) unless already applied. */
  applyServiceEvent(consumer: string, seq: number, env: KubeEnvelope<Service>): Promise<boolean>;
}

export interface ViewIntent {
  /** Replaces every stored decision of the service when set ([] removes them). */
  readonly decisions?: readonly HintDecision[];
  /** Keys about to be put: recorded unconfirmed (revision 0) with their new body. */
  readonly pending: readonly { readonly key: string; readonly body: unknown }[];
}

/** What a service reconcile reads and records. */
export interface ServiceStateStore {
  loadService(namespace: string, name: string): Promise<Service | undefined>;
  /** The service's slices as received, sorted by name; [] when none. */
  loadSlices(namespace: string, name: string): Promise<readonly EndpointSlice[]>;
  /** Stored decisions of the service, sorted by address type; [] when none. */
  loadDecisions(namespace: string, name: string): Promise<readonly HintDecision[]>;
  /** One transaction, before any KV write. */
  recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void>;
  /** One transaction, after the KV writes: confirmed puts with their revisions, deleted keys forgotten. */
  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void>;
}

/** One KV bucket, JSON values. */
export interface KvPort {
  /** Stores `text` (JSON) under `key`; returns the new revision. */
  put(key: string, text: string): Promise<number>;
  /** Deletes `key`; deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /** Keys (not deleted) matching `filter`, e.g. `<cluster>.>`; [] when none. */
  keys(filter: string): Promise<readonly string[]>;
}
