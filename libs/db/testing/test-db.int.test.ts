import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createDb } from '../src/connect.ts';
import { testDatabaseUrl, withTestDb } from './test-db.ts';

const noContainerRuntime = !existsSync('/var/run/docker.sock') && !process.env['DOCKER_HOST'];

describe('withTestDb', () => {
  it('hands out a fresh migrated schema per call and drops it on close', async () => {
    const a = await withTestDb();
    const b = await withTestDb();
    expect(a.schema).not.toBe(b.schema);
    await a.db.insertInto('consumer_offsets').values({ consumer: 'x', last_seq: 1 }).execute();
    expect(await b.db.selectFrom('consumer_offsets').selectAll().execute()).toEqual([]);
    const admin = await createDb({ url: a.url, max: 1 });
    try {
      await a.close();
      await b.close();
      await a.close(); // idempotent
      const left = await sql<{ n: string }>`select count(*) as n from information_schema.schemata where schema_name in (${a.schema}, ${b.schema})`.execute(admin.db);
      expect(left.rows[0]?.n).toBe('0');
    } finally {
      await admin.close();
    }
  });

  it('migrate: false leaves the schema empty', async () => {
    const t = await withTestDb({ migrate: false });
    try {
      const r = await sql<{ n: string }>`select count(*) as n from information_schema.tables where table_schema = ${t.schema}`.execute(t.db);
      expect(r.rows[0]?.n).toBe('0');
    } finally {
      await t.close();
    }
  });

  it('uses DATABASE_URL when set', async () => {
    expect(await testDatabaseUrl({ DATABASE_URL: 'postgres://example/db' })).toBe('postgres://example/db');
  });

  it.skipIf(!noContainerRuntime)('without DATABASE_URL and without a container runtime, fails with one line', async () => {
    const err = await testDatabaseUrl({}).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^no Postgres for tests: DATABASE_URL is not set and a postgres:15 container could not start \(.+\); set DATABASE_URL=/);
    expect((err as Error).message).not.toContain('\n');
  });
});
