// Each reconcile record keeps the settings it ran with (max endpoints per slice, managed-by, …),
// so a replay plans with what live used rather than with today's flags.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('reconciles').addColumn('settings', 'jsonb').execute();
  // Restart loads every object of a cluster at once.
  await sql`create index if not exists kube_objects_cluster_idx on kube_objects (cluster, kind)`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await sql`drop index if exists kube_objects_cluster_idx`.execute(db);
  await db.schema.alterTable('reconciles').dropColumn('settings').execute();
}
