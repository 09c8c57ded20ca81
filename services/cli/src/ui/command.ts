// `slicemesh ui`: serves the web view until SIGINT or SIGTERM. Its flags are its own (parsed
// here, not in args.ts) because it is the one command that keeps running; the log it reads is
// chosen and opened as `slicemesh log` does it (SOURCE_OPTIONS, openLogSource).
import { parseArgs } from 'node:util';
import type { CliIO } from '../run.ts';
import { UsageError } from '../cli-error.ts';
import type { SourceFlags } from '../log/open-source.ts';
import { SOURCE_OPTIONS, openLogSource } from '../log/open-source.ts';
import { uiEngineOf } from './engine.ts';
import { startUiServer } from './server.ts';

export const UI_USAGE = `slicemesh ui [--port N] [--host H] [-f FILE | live flags]
  Serves the web view of the log: services → slices → zones → nodes, a timeline to move
  through time, and why a node sends (or not) to each endpoint. Runs until Ctrl-C.
  --port N     port to listen on (default 8080; 0 picks a free one)
  --host H     address to listen on (default 127.0.0.1; the view has no login)
  -f FILE      an exported log (slicemesh log export); without it, the live log, chosen by
               the flags and variables of slicemesh log (--nats-url, --nats-nkey-seed-file,
               --nats-creds-file, --database-url, --db-schema, --cluster, --kube-stream,
               --dlq-stream, --subject-prefix, --max-endpoints-per-slice, --managed-by; see
               slicemesh log --help)`;

export interface UiCommandLine {
  readonly help: boolean;
  readonly port: number;
  readonly host: string;
  /** Which log, as `slicemesh log` takes it. */
  readonly source: SourceFlags;
}

const OPTIONS = {
  ...SOURCE_OPTIONS,
  port: { type: 'string' },
  host: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Parses the flags after `ui`; throws UsageError. */
export function parseUiCommandLine(argv: readonly string[]): UiCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false, strict: true });
  } catch (err) {
    throw new UsageError(`ui: ${(err instanceof Error ? err.message : String(err)).split('\n')[0] ?? ''}`);
  }
  const { help, port: portText = '8080', host = '127.0.0.1', ...source } = parsed.values;
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65_535) throw new UsageError(`ui: --port must be a port number 0..65535, not ${JSON.stringify(portText)}`);
  return { help: help === true, port, host, source };
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
 * listens, and returns when `stop` resolves (by default on SIGINT or SIGTERM). A log that cannot
 * be opened is a HistoryInputError and a bad flag a UsageError: one line, exit 2 (run.ts).
 */
export async function uiCommand(argv: readonly string[], io: CliIO, stop: Promise<unknown> = untilSignal()): Promise<void> {
  const cl = parseUiCommandLine(argv);
  if (cl.help) {
    io.stdout.write(`Usage: ${UI_USAGE}\n`);
    return;
  }
  const engine = uiEngineOf(await openLogSource(cl.source, io.env ?? process.env));
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
