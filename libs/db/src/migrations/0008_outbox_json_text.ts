// The outbox keeps each message as the JSON text the slicer wrote (`json`, not `jsonb`), and the
// relay publishes that text as it is. With `jsonb` Postgres built a binary tree of every slice
// on insert, the relay read it back as text, the driver parsed it into objects and the relay
// serialised those again, all for a message nothing reads inside — about 6 KB per SliceChanged
// of a 25-endpoint Service. Key order becomes the slicer's own instead of jsonb's.

import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { serverHasLz4 } from './0007_lz4_bodies.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await sql`alter table outbox alter column payload type json using payload::text::json`.execute(db);
  // A new type may come with the default compression again: keep 0007's choice.
  if (await serverHasLz4(db)) await sql`alter table outbox alter column payload set compression lz4`.execute(db);
}

export async function down(db: AnyDb): Promise<void> {
  await sql`alter table outbox alter column payload type jsonb using payload::jsonb`.execute(db);
}
