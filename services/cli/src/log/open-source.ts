// Which log a command reads, from its flags: `-f FILE`, or the live streams named by the same
// flags and environment variables the services use. Shared by `slicemesh log` and any other
// command that opens a log (SOURCE_OPTIONS are parseArgs options).

import type { LogSettings, LogSource } from '@slicemesh/history';
import { HistoryInputError, openLogFile } from '@slicemesh/history';
import { MAX_MAX_ENDPOINTS_PER_SLICE } from '@slicemesh/model';
import { CREDS_FILE_ENV, DEFAULT_NAMES, NKEY_SEED_FILE_ENV, redactNatsUrl } from '@slicemesh/nats';
import { UsageError } from '../cli-error.ts';
import { openLiveLog } from './live-log.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** The flags that choose and open a log, as node:util parseArgs options. */
export const SOURCE_OPTIONS = {
  file: { type: 'string', short: 'f' },
  'nats-url': { type: 'string' },
  'database-url': { type: 'string' },
  'db-schema': { type: 'string' },
  cluster: { type: 'string' },
  'kube-stream': { type: 'string' },
  'dlq-stream': { type: 'string' },
  'subject-prefix': { type: 'string' },
  'max-endpoints-per-slice': { type: 'string' },
  'managed-by': { type: 'string' },
  'nats-nkey-seed-file': { type: 'string' },
  'nats-creds-file': { type: 'string' },
} as const;

export type SourceFlags = Readonly<Partial<Record<keyof typeof SOURCE_OPTIONS, string>>>;

function settingsOverrides(flags: SourceFlags): Partial<Omit<LogSettings, 'cluster' | 'prefix'>> {
  const out: { managedBy?: string; maxEndpointsPerSlice?: number } = {};
  const max = flags['max-endpoints-per-slice'];
  if (max !== undefined) {
    const n = Number(max);
    if (!Number.isInteger(n) || n < 1 || n > MAX_MAX_ENDPOINTS_PER_SLICE) throw new UsageError(`--max-endpoints-per-slice must be an integer 1..${MAX_MAX_ENDPOINTS_PER_SLICE} (got ${JSON.stringify(max)})`);
    out.maxEndpointsPerSlice = n;
  }
  if (flags['managed-by'] !== undefined) out.managedBy = flags['managed-by'];
  return out;
}

/**
 * Opens the log the flags name: -f FILE, or the live streams (flags, then env, then defaults).
 * Throws UsageError for a bad setting, HistoryInputError when the log cannot be opened.
 */
export async function openLogSource(flags: SourceFlags, env: Env): Promise<LogSource> {
  const file = flags.file;
  if (file !== undefined) {
    const overrides = settingsOverrides(flags);
    const src = await openLogFile(file);
    if (Object.keys(overrides).length === 0) return src;
    const base = await src.settings();
    return { ...src, settings: async () => ({ ...base, ...overrides }) };
  }
  const pick = (flag: keyof SourceFlags, name: string): string | undefined => flags[flag] ?? env[name];
  const databaseUrl = pick('database-url', 'DATABASE_URL');
  const schema = pick('db-schema', 'DB_SCHEMA');
  const natsUrl = pick('nats-url', 'NATS_URL') ?? 'nats://127.0.0.1:4222';
  // An empty variable is no file, as the services read it.
  const nkeySeedFile = pick('nats-nkey-seed-file', NKEY_SEED_FILE_ENV);
  const credsFile = pick('nats-creds-file', CREDS_FILE_ENV);
  try {
    return await openLiveLog({
      natsUrl,
      ...(databaseUrl !== undefined && databaseUrl !== '' ? { databaseUrl } : {}),
      ...(schema !== undefined ? { schema } : {}),
      cluster: pick('cluster', 'CLUSTER') ?? 'local',
      names: {
        kube: pick('kube-stream', 'KUBE_STREAM') ?? DEFAULT_NAMES.kube,
        slices: env['SLICES_STREAM'] ?? DEFAULT_NAMES.slices,
        dlq: pick('dlq-stream', 'DLQ_STREAM') ?? DEFAULT_NAMES.dlq,
        prefix: pick('subject-prefix', 'SUBJECT_PREFIX') ?? '',
      },
      settings: settingsOverrides(flags),
      ...(nkeySeedFile !== undefined && nkeySeedFile !== '' ? { nkeySeedFile } : {}),
      ...(credsFile !== undefined && credsFile !== '' ? { credsFile } : {}),
    });
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new HistoryInputError(`cannot open the live log (NATS ${redactNatsUrl(natsUrl)}${databaseUrl ? ', Postgres' : ''}): ${err instanceof Error ? err.message : String(err)}; use -f FILE for an exported log`);
  }
}
