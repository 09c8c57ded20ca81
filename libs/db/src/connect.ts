// Opens the pool and the kysely handle. Each deployment (and each test) works in its own schema,
// selected with the connection's search_path so every query stays unqualified.

import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from './schema.ts';
import { assertSchemaName } from './schema-name.ts';
import { prepareRepeated } from './prepared-statements.ts';

export interface CreateDbOptions {
  /** postgres://user[:password]@host:port/database */
  readonly url: string;
  /** search_path for every connection. Defaults to the server's (usually `public`). */
  readonly schema?: string;
  /** Pool size. Defaults to 10. */
  readonly max?: number;
  /** Called for errors of pooled connections, idle or busy (e.g. a server restart). Defaults to ignoring them: the query in flight fails and the pool drops the client. */
  readonly onPoolError?: (err: Error) => void;
}

export interface DbHandle {
  readonly db: Kysely<Database>;
  readonly pool: pg.Pool;
  readonly schema: string | undefined;
  /** Ends the pool; idempotent. */
  close(): Promise<void>;
}

/** Thrown by createDb when the first connection fails. The message is one line. */
export class PostgresUnreachableError extends Error {
  override readonly name = 'PostgresUnreachableError';
}

const START_HINT = 'start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

/**
 * Connects and proves the server answers (one `select 1`), so a missing server fails here with
 * one readable line instead of at the first query.
 */
export async function createDb(opts: CreateDbOptions): Promise<DbHandle> {
  if (opts.schema !== undefined) assertSchemaName(opts.schema);
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    ...(opts.schema !== undefined ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  const onError = opts.onPoolError ?? (() => {});
  pool.on('error', onError);
  // pg only listens for a client's errors while it sits idle in the pool. A connection that dies
  // while a query holds it (a server restart mid-transaction) would raise an unhandled 'error'
  // event and end the process; with a listener the query fails, the caller retries, and the
  // pool replaces the client. Attached at connect, before the client can carry any query.
  pool.on('connect', (client) => {
    client.on('error', onError);
    prepareRepeated(client);
  });
  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw new PostgresUnreachableError(describeConnectFailure(opts.url, err));
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let closed: Promise<void> | undefined;
  return {
    db,
    pool,
    schema: opts.schema,
    close: () => (closed ??= db.destroy()),
  };
}

/** The one-line message for a failed first connection; passwords in the URL are masked. */
export function describeConnectFailure(url: string, err: unknown): string {
  const reason = (err instanceof Error ? err.message || (err as NodeJS.ErrnoException).code : String(err)) ?? 'unknown error';
  return `Postgres not reachable at ${redactUrl(url)}: ${reason.replace(/\s+/g, ' ')} — ${START_HINT}`;
}

/** Replaces the password of a connection URL with `***`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:\/\/([^:/@]+):[^@]*@/, '://$1:***@');
  }
}
