import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb } from './connect.ts';
import { statementName } from './prepared-statements.ts';
import { testDatabaseUrl, uniqueSchemaName } from '../testing/test-db.ts';

describe('repeated writes as named prepared statements', () => {
  it('a write run again is prepared once per connection, keeps its results, and survives a change of its table', async () => {
    const url = await testDatabaseUrl();
    const schema = uniqueSchemaName();
    const h = await createDb({ url, max: 1 });
    try {
      await sql`create schema ${sql.id(schema)}`.execute(h.db);
      await sql`create table ${sql.id(schema, 'items')} (id int primary key, body jsonb not null)`.execute(h.db);
      const upsert = (id: number, body: unknown) =>
        sql<{ id: number; fresh: boolean }>`insert into ${sql.id(schema, 'items')} (id, body) values (${id}, ${JSON.stringify(body)}::jsonb)
          on conflict (id) do update set body = excluded.body returning id, (xmax = 0) as fresh`.execute(h.db);
      const results = [];
      for (let i = 0; i < 8; i++) results.push((await upsert(i % 3, { i })).rows[0]);
      expect(results.map((r) => [r?.id, r?.fresh])).toEqual([[0, true], [1, true], [2, true], [0, false], [1, false], [2, false], [0, false], [1, false]]);
      const text = (await upsert(5, {}).then(() => sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(h.db))).rows;
      expect(text).toHaveLength(1);
      expect(text[0]?.name).toBe(statementName(text[0]?.statement ?? ''));

      // The table changes under the prepared statement: Postgres replans it, the write still works.
      await sql`alter table ${sql.id(schema, 'items')} add column note text`.execute(h.db);
      expect((await upsert(9, { after: 'alter' })).rows[0]).toEqual({ id: 9, fresh: true });
      const stored = await sql<{ id: number; body: unknown }>`select id, body from ${sql.id(schema, 'items')} order by id`.execute(h.db);
      expect(stored.rows).toEqual([{ id: 0, body: { i: 6 } }, { id: 1, body: { i: 7 } }, { id: 2, body: { i: 5 } }, { id: 5, body: {} }, { id: 9, body: { after: 'alter' } }]);
    } finally {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(h.db);
      await h.close();
    }
  });
});
