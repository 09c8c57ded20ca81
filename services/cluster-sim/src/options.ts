// Command-line flags and environment variables of the cluster-sim service.
import { parseArgs } from 'node:util';
import { isLogLevel } from './log.ts';
import type { LogLevel } from './log.ts';
import { parseDuration } from './scenario/quantities.ts';

/** 8001 is `kubectl proxy`'s port: a client configured for a proxied real cluster works unchanged. */
export const DEFAULT_PORT = 8001;

export interface MainOptions {
  readonly port: number;
  readonly host: string;
  readonly scenario?: string;
  readonly seed?: string;
  readonly bookmarkIntervalMs: number;
  readonly historySize: number;
  readonly speed: number;
  readonly logLevel: LogLevel;
  readonly eventTTLMs: number;
  /** Serve the MCS API (ServiceExports, ServiceImports); false simulates a cluster without its CRDs. */
  readonly mcsApi: boolean;
}

export const USAGE = `usage: cluster-sim [--port N] [--host ADDR] [--scenario FILE] [--seed S]
                   [--bookmark-interval DURATION] [--history N] [--speed X] [--log-level LEVEL]
                   [--event-ttl DURATION] [--no-mcs-api]
  --port               listen port (env CLUSTER_SIM_PORT, default ${DEFAULT_PORT}; 0 = any free port)
  --host               listen address (env CLUSTER_SIM_HOST, default 127.0.0.1)
  --scenario           scenario YAML (env CLUSTER_SIM_SCENARIO, default scenarios/default.yaml)
  --seed               override the scenario seed (env CLUSTER_SIM_SEED)
  --bookmark-interval  BOOKMARK period for watches, e.g. 10s (env CLUSTER_SIM_BOOKMARK_INTERVAL, default 10s)
  --history            watch events kept per kind (env CLUSTER_SIM_HISTORY, default 10000)
  --speed              run the scenario timeline X times faster (env CLUSTER_SIM_SPEED, default 1)
  --log-level          debug|info|warn|error (env CLUSTER_SIM_LOG_LEVEL, default info)
  --event-ttl          delete Events this long after their last write, 0 = never (env CLUSTER_SIM_EVENT_TTL, default 1h)
  --no-mcs-api         do not serve multicluster.x-k8s.io (ServiceExports, ServiceImports): a cluster without the MCS CRDs
                       (env CLUSTER_SIM_MCS_API=false)`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

function int(name: string, v: string, min: number, max: number): number {
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${name}: must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** Flags win over environment variables, which win over defaults. Throws UsageError. */
export function parseMainOptions(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): MainOptions {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' }, host: { type: 'string' }, scenario: { type: 'string' }, seed: { type: 'string' },
        'bookmark-interval': { type: 'string' }, history: { type: 'string' }, speed: { type: 'string' },
        'log-level': { type: 'string' }, 'event-ttl': { type: 'string' }, 'no-mcs-api': { type: 'boolean' }, help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values['help']) throw new UsageError('');
  const pick = (flag: string, envName: string): string | undefined => (values[flag] as string | undefined) ?? env[envName];
  const bookmark = pick('bookmark-interval', 'CLUSTER_SIM_BOOKMARK_INTERVAL') ?? '10s';
  const bookmarkIntervalMs = parseDuration(bookmark);
  if (bookmarkIntervalMs === undefined || bookmarkIntervalMs <= 0) throw new UsageError(`--bookmark-interval: must be a positive duration like 10s, got ${JSON.stringify(bookmark)}`);
  const speedText = pick('speed', 'CLUSTER_SIM_SPEED') ?? '1';
  const speed = Number(speedText);
  if (!Number.isFinite(speed) || speed <= 0) throw new UsageError(`--speed: must be a positive number, got ${JSON.stringify(speedText)}`);
  const logLevel = pick('log-level', 'CLUSTER_SIM_LOG_LEVEL') ?? 'info';
  if (!isLogLevel(logLevel)) throw new UsageError(`--log-level: must be debug, info, warn or error, got ${JSON.stringify(logLevel)}`);
  const ttlText = pick('event-ttl', 'CLUSTER_SIM_EVENT_TTL') ?? '1h';
  const eventTTLMs = parseDuration(ttlText);
  if (eventTTLMs === undefined || eventTTLMs < 0) throw new UsageError(`--event-ttl: must be a duration like 1h or 0, got ${JSON.stringify(ttlText)}`);
  const mcsEnv = env['CLUSTER_SIM_MCS_API'] ?? 'true';
  if (mcsEnv !== 'true' && mcsEnv !== 'false') throw new UsageError(`CLUSTER_SIM_MCS_API: must be true or false, got ${JSON.stringify(mcsEnv)}`);
  const mcsApi = values['no-mcs-api'] === true ? false : mcsEnv === 'true';
  const scenario = pick('scenario', 'CLUSTER_SIM_SCENARIO');
  const seed = pick('seed', 'CLUSTER_SIM_SEED');
  return {
    port: int('port', pick('port', 'CLUSTER_SIM_PORT') ?? String(DEFAULT_PORT), 0, 65535),
    host: pick('host', 'CLUSTER_SIM_HOST') ?? '127.0.0.1',
    ...(scenario ? { scenario } : {}),
    ...(seed ? { seed } : {}),
    bookmarkIntervalMs,
    historySize: int('history', pick('history', 'CLUSTER_SIM_HISTORY') ?? '10000', 1, 10_000_000),
    speed,
    logLevel,
    eventTTLMs,
    mcsApi,
  };
}
