// The hints service compares what it would publish with what it published by a digest of the
// JSON text (sha256), no longer of a key-sorted rendering of it:
// - published_views keeps that digest instead of each view's body, which was written on every
//   intent and confirmation only to be hashed again at the next start;
// - the bodies the hints service restarts from (its slices, other controllers' slices, its
//   Services) become `json`, which keeps the text as written, key order included. With `jsonb`
//   a restart read the keys back reordered, every view serialised to another text, and only a
//   key-sorted digest — the most expensive step of a view update — could tell them equal.
// Rows written before this migration have no digest: their keys count as unknown and are put
// once more.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const BODIES = ['hint_slices', 'hint_foreign_slices', 'hint_services'] as const;

export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('published_views').addColumn('digest', 'text').execute();
  await sql`alter table published_views alter column body drop not null`.execute(db);
  for (const table of BODIES) await sql`alter table ${sql.table(table)} alter column body type json using body::text::json`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  for (const table of BODIES) await sql`alter table ${sql.table(table)} alter column body type jsonb using body::jsonb`.execute(db);
  await db.schema.alterTable('published_views').dropColumn('digest').execute();
}
