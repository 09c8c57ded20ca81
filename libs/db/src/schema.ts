// The kysely view of slicemesh's Postgres schema. Column names are the SQL names; the store
// modules map rows to domain shapes. Migrations never import this file: they describe the schema
// as it was at their time, this file describes it as it is now.
//
// Driver conventions (pg defaults, kept on purpose): int8/bigserial and xid8 arrive as strings
// (the stores convert sequence numbers with Number()), jsonb arrives parsed, timestamptz as Date.
// JSON columns are written as JSON text so arrays are never mistaken for Postgres arrays.

import type { ColumnType, Generated, Kysely, Transaction } from 'kysely';
import type { EndpointSlice, KubeEvent } from '@slicemesh/model';

/** A bigint column: read as a decimal string, written as number, string or bigint. */
export type Int8 = ColumnType<string, number | string | bigint, number | string | bigint>;
/** A jsonb column: read parsed, written as JSON text. */
export type Json<T> = ColumnType<T, string, string>;
/** A timestamptz column with a database default. */
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

/** Kinds the watcher projects into kube_objects. Cluster-scoped kinds (Node) use namespace ''. */
export type StoredKind = 'Service' | 'Pod' | 'Node' | 'Endpoints';

export interface KubeObjectsTable {
  cluster: string;
  kind: StoredKind;
  namespace: string;
  name: string;
  uid: string;
  /** Opaque Kubernetes resourceVersion; compared numerically when both sides are integers. */
  resource_version: string;
  /** A tombstone: the object was deleted at resource_version. */
  deleted: boolean;
  body: Json<unknown>;
  /** KUBE stream sequence of the message that wrote this row. */
  kube_seq: Int8;
}

export interface ConsumerOffsetsTable {
  consumer: string;
  last_seq: Int8;
}

export interface DirtyServicesTable {
  cluster: string;
  namespace: string;
  name: string;
  /** First KUBE sequence that marked the service since it was last reconciled. */
  since_seq: Int8;
  /** Newest KUBE sequence that marked it; a clear only succeeds up to this one. */
  last_seq: Int8;
  claimed_by: ColumnType<string | null, string | null | undefined, string | null>;
  claimed_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface EndpointSlicesTable {
  cluster: string;
  namespace: string;
  name: string;
  service: string;
  address_type: string;
  managed_by: string;
  generation: number;
  body: Json<EndpointSlice>;
}

export interface ReconcilesTable {
  id: Generated<string>;
  cluster: string;
  namespace: string;
  service: string;
  kube_seq_from: Int8;
  kube_seq_to: Int8;
  reconcile_id: string;
  created: number;
  updated: number;
  deleted: number;
  at: Timestamp;
  /** The settings the reconcile used (ReconcileSettings); null for records older than 0002. */
  settings: ColumnType<unknown, string | null | undefined, string | null>;
}

export interface OutboxTable {
  /** bigserial; may be pre-allocated from its sequence so msg_id can embed it. */
  id: ColumnType<string, number | string | bigint | undefined, never>;
  /** The writing transaction (pg_current_xact_id()); always the default. */
  txid: ColumnType<string, never, never>;
  subject: string;
  msg_id: string;
  payload: Json<unknown>;
  created_at: Timestamp;
}

export interface RelayPositionsTable {
  name: string;
  /** xid8 as its decimal text. */
  txid: string;
  id: Int8;
}

export interface HintSlicesTable {
  cluster: string;
  namespace: string;
  name: string;
  service: string;
  body: Json<EndpointSlice>;
}

/** Other controllers' slices (from KUBE), by namespace/name; `service` from the service-name label. */
export type HintForeignSlicesTable = HintSlicesTable;

export interface HintDecisionsTable {
  cluster: string;
  namespace: string;
  service: string;
  address_type: string;
  enabled: boolean;
  mode: string;
  event: ColumnType<KubeEvent | null, string | null, string | null>;
  reason: string;
  decided_at: ColumnType<Date, Date | string, Date | string>;
}

export interface HintNodesTable {
  cluster: string;
  name: string;
  body: Json<unknown>;
}

export interface HintServicesTable {
  cluster: string;
  namespace: string;
  name: string;
  body: Json<unknown>;
}

export interface PublishedViewsTable {
  cluster: string;
  key: string;
  revision: Int8;
  /** Only in rows written before migration 0004. */
  body: Json<unknown> | null;
  /** sha256 (hex) of the JSON text put into KV; null while unconfirmed and in old rows. */
  digest: string | null;
}

export interface PartitionLeasesTable {
  lease_group: string;
  partition: number;
  /** The member holding it; null when free. */
  holder: string | null;
  /** Fencing token: grows by one at every acquisition. */
  token: Int8;
  expires_at: Timestamp | null;
  acquired_at: Timestamp | null;
}

export interface LeaseMembersTable {
  lease_group: string;
  member: string;
  /** Random per process: tells two processes that share a member name apart. */
  incarnation: string;
  expires_at: Timestamp;
  joined_at: ColumnType<Date, never, never>;
}

export interface KubeSnapshotsTable {
  id: Generated<string>;
  cluster: string;
  partition: number;
  /** PARTITIONS when it was taken: a snapshot only serves a layout with as many. */
  partitions: number;
  /** The partition consumer's offset it reflects. */
  seq: Int8;
  /** The newest node message its nodes reflect. */
  nodes_seq: Int8;
  /** The newest reconciles.id whose slices it holds. */
  reconciles_to: Int8;
  objects: number;
  slices: number;
  /** Set, under the partition's lease, once every row is in. */
  complete: Generated<boolean>;
  taken_at: Timestamp;
}

export interface KubeSnapshotObjectsTable {
  snapshot_id: Int8;
  kind: StoredKind;
  namespace: string;
  name: string;
  uid: string;
  resource_version: string;
  deleted: boolean;
  body: Json<unknown>;
  kube_seq: Int8;
}

export interface KubeSnapshotSlicesTable {
  snapshot_id: Int8;
  namespace: string;
  name: string;
  service: string;
  body: Json<unknown>;
}

export interface KubeLogCutsTable {
  cluster: string;
  /** `p<N>` for a partition's subjects, `nodes` for the node subjects. */
  scope: string;
  /** The first sequence a purge kept: messages of the scope below it may be gone. */
  keep_from: Int8;
  /** Messages purged in all (for status pages). */
  purged: Int8;
  updated_at: Timestamp;
}

export interface Database {
  kube_objects: KubeObjectsTable;
  consumer_offsets: ConsumerOffsetsTable;
  dirty_services: DirtyServicesTable;
  endpoint_slices: EndpointSlicesTable;
  reconciles: ReconcilesTable;
  outbox: OutboxTable;
  relay_positions: RelayPositionsTable;
  hint_slices: HintSlicesTable;
  hint_foreign_slices: HintForeignSlicesTable;
  hint_decisions: HintDecisionsTable;
  hint_nodes: HintNodesTable;
  hint_services: HintServicesTable;
  published_views: PublishedViewsTable;
  partition_leases: PartitionLeasesTable;
  lease_members: LeaseMembersTable;
  kube_snapshots: KubeSnapshotsTable;
  kube_snapshot_objects: KubeSnapshotObjectsTable;
  kube_snapshot_slices: KubeSnapshotSlicesTable;
  kube_log_cuts: KubeLogCutsTable;
}

/** Either the pool-backed handle or a transaction: readers accept both. */
export type Db = Kysely<Database>;
/** Writers that must share the caller's transaction take this type. */
export type Trx = Transaction<Database>;
