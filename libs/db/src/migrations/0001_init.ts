// The first schema: the slicer's projections, offsets, work list, slices, replay record and
// outbox, plus the hints service's state. Tables are created unqualified: migrateToLatest runs
// this with search_path set to the target schema.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// Migrations see the database untyped: they describe the schema at their own point in time.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('kube_objects')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('uid', 'text', (c) => c.notNull())
    .addColumn('resource_version', 'text', (c) => c.notNull())
    .addColumn('deleted', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addColumn('kube_seq', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('kube_objects_pk', ['cluster', 'kind', 'namespace', 'name'])
    .execute();
  // Namespace loads read services, pods and endpoints of one namespace together.
  await db.schema.createIndex('kube_objects_namespace_idx').on('kube_objects').columns(['cluster', 'namespace', 'kind']).execute();

  await db.schema
    .createTable('consumer_offsets')
    .addColumn('consumer', 'text', (c) => c.primaryKey())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dirty_services')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('since_seq', 'bigint', (c) => c.notNull())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'timestamptz')
    .addPrimaryKeyConstraint('dirty_services_pk', ['cluster', 'namespace', 'name'])
    .execute();

  await db.schema
    .createTable('endpoint_slices')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('address_type', 'text', (c) => c.notNull())
    .addColumn('managed_by', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().check(sql`generation >= 1`))
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('endpoint_slices_pk', ['cluster', 'namespace', 'name'])
    .execute();
  await db.schema.createIndex('endpoint_slices_service_idx').on('endpoint_slices').columns(['cluster', 'namespace', 'service']).execute();

  await db.schema
    .createTable('reconciles')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('kube_seq_from', 'bigint', (c) => c.notNull())
    .addColumn('kube_seq_to', 'bigint', (c) => c.notNull())
    .addColumn('reconcile_id', 'text', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .addColumn('updated', 'integer', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('reconciles_service_idx').on('reconciles').columns(['cluster', 'namespace', 'service', 'id']).execute();

  await db.schema
    .createTable('outbox')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('txid', sql`xid8`, (c) => c.notNull().defaultTo(sql`pg_current_xact_id()`))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('msg_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The relay scans in (txid, id) order from its stored position.
  await db.schema.createIndex('outbox_txid_id_idx').on('outbox').columns(['txid', 'id']).execute();

  await db.schema
    .createTable('relay_positions')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('txid', sql`xid8`, (c) => c.notNull())
    .addColumn('id', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('hint_slices')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('hint_slices_pk', ['cluster', 'namespace', 'name'])
    .execute();
  await db.schema.createIndex('hint_slices_service_idx').on('hint_slices').columns(['cluster', 'namespace', 'service']).execute();

  await db.schema
    .createTable('hint_decisions')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('address_type', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('event', 'jsonb')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('hint_decisions_pk', ['cluster', 'namespace', 'service', 'address_type'])
    .execute();

  await db.schema
    .createTable('hint_nodes')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('hint_nodes_pk', ['cluster', 'name'])
    .execute();

  await db.schema
    .createTable('hint_services')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('hint_services_pk', ['cluster', 'namespace', 'name'])
    .execute();

  await db.schema
    .createTable('published_views')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('published_views_pk', ['cluster', 'key'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  const tables = [
    'published_views', 'hint_services', 'hint_nodes', 'hint_decisions', 'hint_slices', 'relay_positions',
    'outbox', 'reconciles', 'endpoint_slices', 'dirty_services', 'consumer_offsets', 'kube_objects',
  ];
  for (const t of tables) await db.schema.dropTable(t).ifExists().execute();
}
