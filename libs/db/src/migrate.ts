// Brings a schema to the latest migration. Starters of the same schema may race (several slicer
// replicas, parallel tests): a transaction-scoped advisory lock keyed on the schema name makes
// them take turns, and the whole run - schema creation included - commits or rolls back as one.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Migration, MigrationProvider } from 'kysely/migration';
import * as m0001 from './migrations/0001_init.ts';
import * as m0002 from './migrations/0002_reconcile_settings.ts';
import * as m0003 from './migrations/0003_hint_foreign_slices.ts';
import * as m0004 from './migrations/0004_published_view_digests.ts';
import * as m0005 from './migrations/0005_partition_leases.ts';
import * as m0006 from './migrations/0006_kube_snapshots.ts';
import * as m0007 from './migrations/0007_lz4_bodies.ts';
import * as m0008 from './migrations/0008_outbox_json_text.ts';
import type { Database } from './schema.ts';
import { assertSchemaName } from './schema-name.ts';

/** Every migration, listed statically (no filesystem scan); names must sort in apply order. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = Object.freeze({
  '0001_init': m0001,
  '0002_reconcile_settings': m0002,
  '0003_hint_foreign_slices': m0003,
  '0004_published_view_digests': m0004,
  '0005_partition_leases': m0005,
  '0006_kube_snapshots': m0006,
  '0007_lz4_bodies': m0007,
  '0008_outbox_json_text': m0008,
});

const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({ ...MIGRATIONS }),
};

export const MIGRATION_TABLE = 'slicemesh_migration';
/** Advisory lock name: migrations hold it shared, dropSchema exclusive. */
export const SCHEMAS_LOCK = 'slicemesh.schemas';

/** Drops `schema` and everything in it (absent: nothing happens), never while a migration runs. */
export async function dropSchema(db: Kysely<Database>, schema: string): Promise<void> {
  assertSchemaName(schema);
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${SCHEMAS_LOCK}))`.execute(trx);
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(trx);
  });
}
export const MIGRATION_LOCK_TABLE = 'slicemesh_migration_lock';

export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';
}

/**
 * Creates `schema` if needed and applies every pending migration inside it.
 * Returns the names applied by this call, in order ([] when already up to date, e.g. for every
 * concurrent starter but the first). Throws MigrationFailedError (nothing is applied) on failure.
 */
export async function migrateToLatest(db: Kysely<Database>, schema: string): Promise<readonly string[]> {
  assertSchemaName(schema);
  if (await upToDate(db, schema)) return [];
  return db.transaction().execute(async (trx) => {
    // Shared with every other migration, exclusive with dropSchema: kysely's migrator looks for
    // its table among the tables of every schema, and a schema dropped meanwhile fails that
    // lookup ("schema … does not exist", seen when parallel test runs dropped theirs).
    await sql`select pg_advisory_xact_lock_shared(hashtext(${SCHEMAS_LOCK}))`.execute(trx);
    await sql`select pg_advisory_xact_lock(hashtext(${`slicemesh.migrate.${schema}`}))`.execute(trx);
    await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
    // Migrations create unqualified tables; pin them to the target schema whatever the pool's path.
    await sql`set local search_path to ${sql.id(schema)}`.execute(trx);
    const migrator = new Migrator({
      db: trx,
      provider: migrationProvider,
      migrationTableSchema: schema,
      migrationTableName: MIGRATION_TABLE,
      migrationLockTableName: MIGRATION_LOCK_TABLE,
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      const reason = error instanceof Error ? error.message : String(error);
      throw new MigrationFailedError(`migration ${failed ?? '(setup)'} failed in schema ${schema}: ${reason}`, { cause: error });
    }
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  });
}

/**
 * Whether `schema` already has exactly the migrations listed here, read in two small queries
 * without a lock: the common case of every restart, where the migrator's own checks (locks, the
 * lookup of its table among every schema's) took 0.1-0.5 s of a slicer's restart. Anything else
 * (no table, a migration missing or unknown) is left to migrateToLatest's full path, which
 * applies or reports.
 */
async function upToDate(db: Kysely<Database>, schema: string): Promise<boolean> {
  // The schema name is a plain lowercase identifier (assertSchemaName): no quoting needed.
  const table = `${schema}.${MIGRATION_TABLE}`;
  const found = await sql<{ exists: boolean }>`select to_regclass(${table}) is not null as exists`.execute(db);
  if (found.rows[0]?.exists !== true) return false;
  const applied = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
  const names = new Set(applied.rows.map((r) => r.name));
  const wanted = Object.keys(MIGRATIONS);
  return names.size === wanted.length && wanted.every((n) => names.has(n));
}
