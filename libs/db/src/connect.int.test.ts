import { describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { PostgresUnreachableError, createDb } from './connect.ts';
import { testDatabaseUrl, uniqueSchemaName } from '../testing/test-db.ts';

describe('createDb', () => {
  it('a connection that dies while checked out (between two statements of a transaction) is reported, and the process lives on', async () => {
    const url = await testDatabaseUrl();
    const errors: Error[] = [];
    const h = await createDb({ url, max: 2, onPoolError: (e) => errors.push(e) });
    const admin = await createDb({ url, max: 1 });
    try {
      const client = await h.pool.connect();
      await client.query('begin');
      const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid;
      // The server goes away while the client is ours but no query runs (a Postgres restart
      // between two statements): pg emits 'error' on the client, which without a listener of
      // our own ends the process (here: an uncaught error that fails the run).
      await sql`select pg_terminate_backend(${pid})`.execute(admin.db);
      await vi.waitFor(() => expect(errors.length).toBeGreaterThanOrEqual(1), { timeout: 3000, interval: 20 });
      await expect(client.query('commit')).rejects.toThrow();
      client.release(true);
      // The pool replaces the connection: the next query works.
      expect((await sql<{ one: number }>`select 1 as one`.execute(h.db)).rows[0]?.one).toBe(1);
    } finally {
      await admin.close();
      await h.close();
    }
  });

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
