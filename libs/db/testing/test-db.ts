// Test databases: every call gets a fresh schema on one shared server, dropped on close.
// The server is DATABASE_URL when set, otherwise one postgres:15 container per test process
// (started on first use, reaped by testcontainers when the process exits).

import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { createDb } from '../src/connect.ts';
import { dropSchema, migrateToLatest } from '../src/migrate.ts';
import type { Database } from '../src/schema.ts';

export interface TestDb {
  readonly db: Kysely<Database>;
  readonly schema: string;
  /** The server URL (without schema): open more connections to the same schema with createDb({ url, schema }). */
  readonly url: string;
  /** Drops the schema and closes the pool; idempotent. */
  close(): Promise<void>;
}

export interface TestDbOptions {
  /** Apply migrations before returning. Defaults to true. */
  readonly migrate?: boolean;
  /** Pool size. Defaults to 4. */
  readonly max?: number;
}

let containerUrl: Promise<string> | undefined;

/** The server for tests: DATABASE_URL, else a container; one-line error when neither works. */
export async function testDatabaseUrl(env: Readonly<Record<string, string | undefined>> = process.env): Promise<string> {
  const fromEnv = env['DATABASE_URL'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  containerUrl ??= startContainer().catch((err: unknown) => {
    containerUrl = undefined;
    const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new Error(`no Postgres for tests: DATABASE_URL is not set and a postgres:15 container could not start (${reason}); set DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres`);
  });
  return containerUrl;
}

async function startContainer(): Promise<string> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const c = await new GenericContainer('postgres:15')
    .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  return `postgres://postgres@${c.getHost()}:${c.getMappedPort(5432)}/postgres`;
}

let counter = 0;

/** A unique lowercase schema name for one test. */
export function uniqueSchemaName(prefix = 't'): string {
  counter += 1;
  return `${prefix}_${process.pid}_${counter}_${randomBytes(4).toString('hex')}`;
}

export async function withTestDb(opts: TestDbOptions = {}): Promise<TestDb> {
  const url = await testDatabaseUrl();
  const schema = uniqueSchemaName();
  const handle = await createDb({ url, schema, max: opts.max ?? 4 });
  try {
    if (opts.migrate ?? true) await migrateToLatest(handle.db, schema);
  } catch (err) {
    await handle.close();
    throw err;
  }
  let closed: Promise<void> | undefined;
  const close = async (): Promise<void> => {
    try {
      await dropSchema(handle.db, schema);
    } finally {
      await handle.close();
    }
  };
  return { db: handle.db, schema, url, close: () => (closed ??= close()) };
}
export { refuseWrites } from './refuse-writes.ts';
export type { WriteKind } from './refuse-writes.ts';
