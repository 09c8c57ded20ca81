// The smallest interfaces the slicer needs from the outside (habit 12). pg-store.ts implements
// the stores on Postgres; testing/memory-store.ts implements them in memory for unit tests.

import type { EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import type {
  AppendedOutboxRow,
  AppliedSliceChanges,
  DirtyService,
  KubeObjectRow,
  ObjectKey,
  OutboxMessage,
  ReconcileRecord,
  ServiceKey,
  SliceChanges,
} from '@slicemesh/db';

/** What ingest reads and writes inside one transaction. */
export interface IngestTx {
  /** Last applied KUBE sequence of `consumer`; 0 when none. */
  getOffset(consumer: string): Promise<number>;
  /** The stored row (tombstones included); undefined when never written. */
  loadObject(key: ObjectKey): Promise<KubeObjectRow | undefined>;
  /** Writes the row unless a newer resourceVersion is stored; true when it changed the row. */
  upsertObject(row: KubeObjectRow): Promise<boolean>;
  /** Live Services of a namespace, sorted by name. */
  servicesInNamespace(cluster: string, namespace: string): Promise<readonly Service[]>;
  /** Live Pods (every namespace) whose spec.nodeName is `node`, sorted by namespace/name. */
  podsOnNode(cluster: string, node: string): Promise<readonly Pod[]>;
  /** Marks the Services dirty as of `seq`. */
  markDirty(keys: readonly ServiceKey[], seq: number): Promise<void>;
  /** Moves the consumer's offset forward to `seq`. */
  advanceOffset(consumer: string, seq: number): Promise<void>;
}

export interface IngestStore {
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: IngestTx) => Promise<T>): Promise<T>;
}

/** What a reconcile reads and writes inside one snapshot transaction. */
export interface ReconcileTx {
  /** The dirty mark of a Service; undefined when it is clean. */
  loadDirty(key: ServiceKey): Promise<DirtyService | undefined>;
  getOffset(consumer: string): Promise<number>;
  /** The stored row (tombstones included); undefined when never written. */
  loadObject(key: ObjectKey): Promise<KubeObjectRow | undefined>;
  /**
   * Live pods of the namespace whose labels include every pair of `selector`, sorted by name
   * (the database filters, so a reconcile reads only its Service's pods).
   */
  selectPods(cluster: string, namespace: string, selector: Readonly<Record<string, string>>): Promise<readonly Pod[]>;
  loadNodes(cluster: string): Promise<readonly Node[]>;
  /** Slices labelled with the Service's name (every managed-by value), sorted by name. */
  loadSlices(cluster: string, namespace: string, service: string): Promise<readonly EndpointSlice[]>;
  /** Names of every slice of the namespace (new names must avoid them). */
  sliceNamesInNamespace(cluster: string, namespace: string): Promise<readonly string[]>;
  applySliceChanges(changes: SliceChanges): Promise<AppliedSliceChanges>;
  appendOutbox(rows: readonly OutboxMessage[]): Promise<readonly AppendedOutboxRow[]>;
  recordReconcile(rec: ReconcileRecord): Promise<number>;
  /** Clears the mark if nothing newer than `upToSeq` marked it; true when cleared. */
  clearDirty(key: ServiceKey, upToSeq: number): Promise<boolean>;
}

export interface ReconcileStore {
  /**
   * Runs `fn` in one transaction that reads a single snapshot (every read sees the same
   * committed state). Concurrent-update conflicts are retried by the store.
   */
  snapshot<T>(fn: (tx: ReconcileTx) => Promise<T>): Promise<T>;
  /** Every dirty mark (startup recovery). */
  listDirty(): Promise<readonly DirtyService[]>;
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

export type { DirtyService, KubeObjectRow, ObjectKey, ServiceKey };
