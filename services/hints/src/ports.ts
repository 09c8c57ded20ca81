// The smallest interfaces the hints logic needs from its state and from the outside (habit 12).
// projection.ts holds the state in memory; @slicemesh/db's HintsProjectionStore is the durable
// record behind IngestStore and (through batched-records.ts) ServiceRecordStore; kv-port.ts
// wraps the buckets. Unit tests use the in-memory fakes of test-fixtures.ts.

import type { HintDecision, HintsIngestRows, PublishedView } from '@slicemesh/db';
import type { EndpointSlice, Service } from '@slicemesh/model';
import type { ServiceKey } from './published-index.ts';

/** The durable side of ingest: a batch's rows and its consumer's offset, in one transaction. */
export interface IngestStore {
  /** Writes `rows` and moves `consumer`'s offset to `seq`; false (nothing written) when already there. */
  commitIngest(consumer: string, seq: number, rows: HintsIngestRows): Promise<boolean>;
}

/** What a service reconcile reads: the current state, from memory, synchronously. */
export interface ServiceStateReader {
  service(key: ServiceKey): Service | undefined;
  /** The service's slices as received from the slicer, sorted by name; [] when none. */
  slices(key: ServiceKey): readonly EndpointSlice[];
  /** Other controllers' slices of the service that kube-proxy would program, sorted by name; [] when none. */
  foreignSlices(key: ServiceKey): readonly EndpointSlice[];
  /** Stored decisions of the service, sorted by address type; [] when none. */
  decisions(key: ServiceKey): readonly HintDecision[];
}

export interface ViewIntent {
  /** Replaces every stored decision of the service when set ([] removes them). */
  readonly decisions?: readonly HintDecision[];
  /** Keys about to be put: recorded unconfirmed (revision 0, digest unknown). */
  readonly pending: readonly { readonly key: string }[];
}

/** What a service reconcile records; each call is durable when it resolves. */
export interface ServiceRecordStore {
  /** Before any KV write. The decisions read back by ServiceStateReader once it resolves. */
  recordIntent(namespace: string, name: string, intent: ViewIntent): Promise<void>;
  /** After the KV writes: confirmed puts with their revisions, deleted keys forgotten. */
  recordPublished(confirmed: readonly PublishedView[], deleted: readonly string[]): Promise<void>;
}

/** One KV bucket, JSON values. */
export interface KvPort {
  /** Stores `text` (JSON) under `key`; returns the new revision. */
  put(key: string, text: string): Promise<number>;
  /** Deletes `key`; deleting an absent key is not an error. */
  delete(key: string): Promise<void>;
  /** Each key (not deleted) matching `filter`, e.g. `<cluster>.>`, with its current revision. */
  revisions(filter: string): Promise<ReadonlyMap<string, number>>;
}
