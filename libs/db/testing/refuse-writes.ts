// A table that stops taking one kind of write, for tests of what a service does while its
// record refuses it (and of how it recovers once the writes are taken again).

import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from '../src/schema.ts';

export type WriteKind = 'insert' | 'update' | 'delete';

/**
 * Makes every `kind` of row write to `table` in `schema` fail with `message`, until the returned
 * function is called. A trigger, so the statement fails inside Postgres as a real refusal would.
 */
export async function refuseWrites(db: Kysely<Database>, schema: string, table: string, kind: WriteKind, message: string): Promise<() => Promise<void>> {
  const fn = sql.id(schema, `refuse_${table}_${kind}`);
  await sql`create function ${fn}() returns trigger language plpgsql as ${sql.lit(`begin raise exception '%', ${quoteLiteral(message)}; end`)}`.execute(db);
  await sql`create trigger ${sql.id(`refuse_${kind}`)} before ${sql.raw(kind)} on ${sql.id(schema, table)} for each row execute function ${fn}()`.execute(db);
  return async () => {
    await sql`drop trigger if exists ${sql.id(`refuse_${kind}`)} on ${sql.id(schema, table)}`.execute(db);
    await sql`drop function if exists ${fn}()`.execute(db);
  };
}

function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
