// Before starting anything: are NATS (with JetStream) and Postgres there? Both are checked, so
// one run names everything that is missing, with the command that starts it.

import { createDb } from '@slicemesh/db';
import { connectNats, jetstreamManager, redactNatsUrl, roleCredentials } from '@slicemesh/nats';

/** How to get both servers on a fresh machine (see README.md). */
export const FRESH_MACHINE_HINT =
  'On a fresh machine: `bash scripts/ensure-servers.sh` installs (Debian packages, as root) and starts both; ' +
  'or `docker compose up -d nats postgres`; or point NATS_URL / DATABASE_URL at servers you have.';

export interface PreflightResult {
  /** One line per missing or unusable server; empty when both answer. */
  readonly problems: readonly string[];
}

export interface PreflightOptions {
  readonly natsUrl: string;
  readonly databaseUrl: string;
  /** First-connection timeout, ms. Defaults to 3000. */
  readonly timeoutMs?: number;
  /** A locked-down NATS: the role seeds' directory (the check connects as admin). */
  readonly natsAuthDir?: string;
}

async function checkNats(url: string, timeoutMs: number, authDir: string | undefined): Promise<string | undefined> {
  let nc;
  try {
    nc = await connectNats({ url, name: 'slicemesh-preflight', timeoutMs, ...roleCredentials(authDir, 'admin') });
  } catch (err) {
    return err instanceof Error ? err.message : String(err); // names the URL and the start command
  }
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.getAccountInfo();
    return undefined;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return `NATS at ${redactNatsUrl(url)} answers but JetStream is not usable (${reason}) — restart nats-server with -js (and -sd <dir>)`;
  } finally {
    await nc.close();
  }
}

async function checkPostgres(url: string): Promise<string | undefined> {
  try {
    const h = await createDb({ url, max: 1 });
    await h.close();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err); // PostgresUnreachableError: URL, reason, start command
  }
}

/** Checks both servers concurrently. Never throws. */
export async function preflight(opts: PreflightOptions): Promise<PreflightResult> {
  const [nats, pg] = await Promise.all([checkNats(opts.natsUrl, opts.timeoutMs ?? 3000, opts.natsAuthDir), checkPostgres(opts.databaseUrl)]);
  return { problems: [nats, pg].filter((p): p is string => p !== undefined) };
}

/** The message printed when something is missing: one line per problem, then the fresh-machine hint. */
export function preflightMessage(problems: readonly string[]): string {
  return [`slicemesh: cannot start the stack:`, ...problems.map((p) => `  - ${p}`), FRESH_MACHINE_HINT, ''].join('\n');
}
