// The large documents (objects, slices, the outbox's messages) are compressed with lz4 rather
// than Postgres's default pglz when the server has it (PostgreSQL 14+ built with lz4, as
// Debian's and the postgres image are). Every slice write stores about 12 KB of JSON twice
// compressed (its row and its outbox message); measured here on 150 slices of 25 endpoints, the
// insert took 21-29 ms with lz4 against 36 ms with pglz. Only values written afterwards are
// affected; older ones stay readable as they are.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Table and column of every document worth compressing faster. */
export const LZ4_COLUMNS: readonly (readonly [string, string])[] = [
  ['kube_objects', 'body'],
  ['endpoint_slices', 'body'],
  ['outbox', 'payload'],
  ['hint_slices', 'body'],
  ['hint_foreign_slices', 'body'],
  ['hint_services', 'body'],
  ['hint_nodes', 'body'],
  ['kube_snapshot_objects', 'body'],
  ['kube_snapshot_slices', 'body'],
];

export async function serverHasLz4(db: AnyDb): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select coalesce(bool_or('lz4' = any(enumvals)), false) as ok from pg_settings where name = 'default_toast_compression'`.execute(db);
  return r.rows[0]?.ok === true;
}

async function setCompression(db: AnyDb, method: 'lz4' | 'default'): Promise<void> {
  for (const [table, column] of LZ4_COLUMNS) {
    await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} set compression ${sql.raw(method)}`.execute(db);
  }
}

export async function up(db: AnyDb): Promise<void> {
  if (await serverHasLz4(db)) await setCompression(db, 'lz4');
}

export async function down(db: AnyDb): Promise<void> {
  await setCompression(db, 'default');
}
