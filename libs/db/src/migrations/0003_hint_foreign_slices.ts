// Other controllers' EndpointSlices, as the hints service last received them from KUBE (the
// watcher publishes every slice whose managed-by value is not ours). Kept apart from
// hint_slices, the slicer's slices: the two arrive on different streams with different
// offsets, and a foreign slice is never hinted.

import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('hint_foreign_slices')
    .addColumn('cluster', 'text', (c) => c.notNull())
    .addColumn('namespace', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('body', 'jsonb', (c) => c.notNull())
    .addPrimaryKeyConstraint('hint_foreign_slices_pk', ['cluster', 'namespace', 'name'])
    .execute();
}

export async function down(db: AnyDb): Promise<void> {
  await db.schema.dropTable('hint_foreign_slices').ifExists().execute();
}
