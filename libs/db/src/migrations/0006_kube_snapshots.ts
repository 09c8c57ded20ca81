// Snapshots of the KUBE projection per partition, and the cuts below which KUBE may have been
// purged (issue 9.4, a bounded log). A snapshot holds, for one (cluster, partition) at KUBE
// sequence `seq`, the partition's objects and tombstones as its owner had applied them, the
// nodes as of `nodes_seq`, and the partition's slices; `reconciles_to` is the newest reconcile
// record whose slices it holds, so a replay continues with the records after it and the KUBE
// messages after `seq`; it counts once `complete` (set under the partition's lease).
// kube_log_cuts says, per scope (`p<N>` or `nodes`), the first sequence
// a purge kept: a replay of a scope with a cut must start from a snapshot.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('kube_snapshots')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('partition', 'integer', (c) => c.notNull())
    .addColumn('partitions', 'integer', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('nodes_seq', 'bigint', (c) => c.notNull())
    .addColumn('reconciles_to', 'bigint', (c) => c.notNull())
    .addColumn('objects', 'integer', (c) => c.notNull())
    .addColumn('slices', 'integer', (c) => c.notNull())
    .addColumn('complete', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('taken_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('kube_snapshots_partition_idx').on('kube_snapshots').columns(['cluster', 'partition', 'seq']).execute();
  await db.schema
    .createTable('kube_snapshot_objects')
    .addColumn('snapshot_id', 'bigint', (c) => c.notNull().references('kube_snapshots.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('resource_version', 'text', (c) => c.notNull())
    .addColumn('deleted', 'boolean', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addColumn('kube_seq', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('kube_snapshot_objects_pk', ['snapshot_id', 'kind', 'namespace', 'name'])
    .execute();
  await db.schema
    .createTable('kube_snapshot_slices')
    .addColumn('snapshot_id', 'bigint', (c) => c.notNull().references('kube_snapshots.id').onDelete('cascade'))
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('kube_snapshot_slices_pk', ['snapshot_id', 'namespace', 'name'])
    .execute();
  await db.schema
    .createTable('kube_log_cuts')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('keep_from', 'bigint', (c) => c.notNull())
    .addColumn('purged', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('kube_log_cuts_pk', ['cluster', 'scope'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('kube_log_cuts').ifExists().execute();
  await db.schema.dropTable('kube_snapshot_slices').ifExists().execute();
  await db.schema.dropTable('kube_snapshot_objects').ifExists().execute();
  await db.schema.dropTable('kube_snapshots').ifExists().execute();
}
