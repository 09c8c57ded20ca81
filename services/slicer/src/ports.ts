// The smallest interfaces the slicer needs from the outside. @slicemesh/db implements the store
// on Postgres (slicerStore below wires it); testing/memory-store.ts implements it in memory.

import type { IngestCommit, SliceWrites, SlicerSnapshot } from '@slicemesh/db';

/** The slicer's durable record: what it restarts from, and its two kinds of batched write. */
export interface SlicerStore {
  /** Objects, slices and the offsets of `consumers`, read in one snapshot. */
  loadSnapshot(consumers: readonly string[]): Promise<SlicerSnapshot>;
  /** Stores an ingested batch with its consumer's new offset, in one transaction. */
  commitIngest(batch: IngestCommit): Promise<void>;
  /** Stores a batch of reconciles (slices, outbox, replay records), in one transaction. */
  commitSlices(writes: SliceWrites): Promise<void>;
}

/** A rejected KUBE message on its way to the dead-letter subject. */
export interface RejectedMessage {
  readonly reason: string;
  readonly field?: string;
  readonly subject: string;
  /** KUBE stream sequence: one dead letter per rejected message, however often it is redelivered. */
  readonly seq: number;
  readonly raw: Uint8Array;
}

export interface DeadLetterSink {
  /** Resolves once the dead letter is stored; rejects to retry the message later. */
  publish(letter: RejectedMessage): Promise<void>;
}

export type { IngestCommit, SliceWrites, SlicerSnapshot };
