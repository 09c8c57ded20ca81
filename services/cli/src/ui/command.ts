// `slicemesh ui`: serves the web view until SIGINT or SIGTERM. Its flags are its own (parsed
// here, not in args.ts) because it is the one command that keeps running.
import { parseArgs } from 'node:util';
import type { CliIO } from '../run.ts';
import { UsageError } from '../cli-error.ts';
import { DEFAULT_NAMES } from '@slicemesh/nats';
import { openUiEngine } from './engine.ts';
import type { UiSourceOptions } from './engine.ts';
import { startUiServer } from './server.ts';
import { UiInputError } from './ui-errors.ts';

export const UI_USAGE = `slicemesh ui [--port N] [--host H] [-f FILE | live flags]
  Serves the web view of the log: services → slices → zones → nodes, a timeline to move
  through time, and why a node sends (or not) to each endpoint. Runs until Ctrl-C.
  --port N     port to listen on (default 8080; 0 picks a free one)
  --host H     address to listen on (default 127.0.0.1)
  -f FILE      an exported log (slicemesh log export); without it, the live log:
  --nats-url, --database-url, --db-schema, --cluster, --kube-stream, --dlq-stream,
  --subject-prefix   as for slicemesh log (env NATS_URL, DATABASE_URL, DB_SCHEMA, CLUSTER,
                     KUBE_STREAM, DLQ_STREAM, SUBJECT_PREFIX)`;

type Env = Readonly<Record<string, string | undefined>>;

export interface UiCommandLine {
  readonly help: boolean;
  readonly port: number;
  readonly host: string;
  readonly source: UiSourceOptions;
}

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  file: { type: 'string', short: 'f' },
  help: { type: 'boolean', short: 'h' },
  'nats-url': { type: 'string' },
  'database-url': { type: 'string' },
  'db-schema': { type: 'string' },
  cluster: { type: 'string' },
  'kube-stream': { type: 'string' },
  'dlq-stream': { type: 'string' },
  'subject-prefix': { type: 'string' },
} as const;

/** Parses the flags after `ui`, taking live settings from flags, then `env`, then defaults; throws UsageError. */
export function parseUiCommandLine(argv: readonly string[], env: Env = {}): UiCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError(`ui: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`);
  }
  const v = parsed.values;
  const portText = v.port ?? '8080';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) throw new UsageError(`ui: --port must be a port number 0..65535, not ${JSON.stringify(portText)}`);
  const live = ['nats-url', 'database-url', 'db-schema', 'cluster', 'kube-stream', 'dlq-stream', 'subject-prefix'] as const;
  if (v.file !== undefined) {
    const both = live.find((f) => v[f] !== undefined);
    if (both !== undefined) throw new UsageError(`ui: --${both} is for the live log; it does not apply with -f FILE`);
    return { help: v.help === true, port, host: v.host ?? '127.0.0.1', source: { file: v.file } };
  }
  const databaseUrl = v['database-url'] ?? env['DATABASE_URL'];
  const schema = v['db-schema'] ?? env['DB_SCHEMA'];
  const source: UiSourceOptions = {
    live: {
      natsUrl: v['nats-url'] ?? env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
      ...(databaseUrl !== undefined && databaseUrl !== '' ? { databaseUrl } : {}),
      ...(schema !== undefined ? { schema } : {}),
      cluster: v.cluster ?? env['CLUSTER'] ?? 'local',
      names: {
        kube: v['kube-stream'] ?? env['KUBE_STREAM'] ?? DEFAULT_NAMES.kube,
        slices: env['SLICES_STREAM'] ?? DEFAULT_NAMES.slices,
        dlq: v['dlq-stream'] ?? env['DLQ_STREAM'] ?? DEFAULT_NAMES.dlq,
        prefix: v['subject-prefix'] ?? env['SUBJECT_PREFIX'] ?? '',
      },
    },
  };
  return { help: v.help === true, port, host: v.host ?? '127.0.0.1', source };
}

/** Resolves when the process is asked to stop. */
function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: string) => () => resolve(sig);
    process.once('SIGINT', on('SIGINT'));
    process.once('SIGTERM', on('SIGTERM'));
  });
}

/**
 * Runs `slicemesh ui` with the arguments after `ui`; prints the address on stdout once it
 * listens, and returns when `stop` resolves (by default on SIGINT or SIGTERM).
 */
export async function uiCommand(argv: readonly string[], io: CliIO, stop: Promise<unknown> = untilSignal()): Promise<void> {
  const cl = parseUiCommandLine(argv, io.env ?? process.env);
  if (cl.help) {
    io.stdout.write(`Usage: ${UI_USAGE}\n`);
    return;
  }
  const engine = await openUiEngine(cl.source).catch((err: unknown) => {
    if (err instanceof UiInputError) throw new UsageError(`ui: ${err.message}`);
    if ('file' in cl.source) throw err;
    const msg = err instanceof Error ? err.message : String(err);
    throw new UsageError(`ui: cannot open the live log (NATS ${cl.source.live.natsUrl}): ${msg}; use -f FILE for an exported log`);
  });
  try {
    const server = await startUiServer({ engine, host: cl.host, port: cl.port }).catch((err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new UsageError(`ui: cannot listen on ${cl.host}:${cl.port} (${code})`);
      throw err;
    });
    io.stdout.write(`slicemesh ui: serving ${engine.source} at ${server.url}\n`);
    await stop;
    await server.close();
  } finally {
    await engine.close();
  }
}
