import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { PostgresUnreachableError, createDb } from './connect.ts';
import { testDatabaseUrl, uniqueSchemaName } from '../testing/test-db.ts';

describe('createDb', () => {
  it('fails with one line naming the URL, the reason and how to start Postgres when nothing listens', async () => {
    const err = await createDb({ url: 'postgres://postgres:secret@127.0.0.1:1/postgres' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PostgresUnreachableError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/^Postgres not reachable at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/postgres: .*ECONNREFUSED.* — start it with: pg_ctlcluster --skip-systemctl-redirect \$\(ls \/etc\/postgresql\) main start$/);
    expect(msg).not.toContain('secret');
    expect(msg).not.toContain('\n');
  });

  it('sets search_path to the schema on every pooled connection', async () => {
    const schema = uniqueSchemaName('conn');
    const h = await createDb({ url: await testDatabaseUrl(), schema, max: 3 });
    try {
      const paths = await Promise.all([1, 2, 3].map(() => sql<{ search_path: string }>`select current_setting('search_path') as search_path, pg_sleep(0.05)`.execute(h.db)));
      expect(paths.map((p) => p.rows[0]?.search_path)).toEqual([schema, schema, schema]);
    } finally {
      await h.close();
      await h.close(); // idempotent
    }
  });
});
