// The whole CLI as one function of (argv, streams) -> exit code, so tests run it in-process.
// Exit codes: 0 success; 2 the user's input or flags are wrong; 1 anything unexpected.
// Every failure prints exactly one line on stderr; stdout only ever carries the result.

import { InvalidArgumentError, InvalidObjectError, parseKubeDocument } from '@slicemesh/model';
import type { CommandLine } from './args.ts';
import { parseCommandLine } from './args.ts';
import { UsageError } from './cli-error.ts';
import { hintsCommand } from './commands/hints.ts';
import { planCommand, planOptions } from './commands/plan.ts';
import { proxyPlanCommand, proxyPlanOptions } from './commands/proxy-plan.ts';
import type { InputSource } from './read-input.ts';
import { readInput } from './read-input.ts';
import { HistoryInputError } from '@slicemesh/history';
import { runLog } from './log/run-log.ts';
import { natsAuthCommand } from './nats-auth/command.ts';
import { COMMAND_USAGE, USAGE } from './usage.ts';

export interface Writable {
  write(chunk: string): unknown;
}

export interface CliIO extends InputSource {
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** Print the stack of internal errors as well (SLICEMESH_DEBUG=1). */
  readonly debug?: boolean;
  /** Environment for `log`, `ui` and `nats-auth` (NATS_URL, DATABASE_URL, CLUSTER, …); defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export const EXIT_OK = 0;
export const EXIT_INTERNAL = 1;
export const EXIT_INVALID = 2;

/** One printable line: control and line-separator characters become spaces. */
export function oneLine(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f\u0085\u2028\u2029]+/g, ' ').trim();
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

async function execute(cl: CommandLine, io: CliIO): Promise<void> {
  const warn = (line: string): void => void io.stderr.write(`slicemesh: warning: ${oneLine(line)}\n`);
  // Flags are checked before any input is read, so a bad flag never waits on stdin.
  const plan = cl.command === 'plan' ? planOptions(cl.flags) : undefined;
  const proxy = cl.command === 'proxy-plan' ? proxyPlanOptions(cl.flags) : undefined;
  const { text, source } = await readInput(cl.file, io);
  const doc = parseKubeDocument(text, source);
  if (doc.skipped.length > 0) {
    const kinds = [...new Set(doc.skipped.map((s) => s.kind))].sort().join(', ');
    warn(`ignored ${doc.skipped.length} object(s) of kinds slicemesh does not read: ${kinds}`);
  }
  if (plan) io.stdout.write(json(planCommand(doc.objects, plan, warn)));
  else if (proxy) {
    const out = proxyPlanCommand(doc.objects, proxy, warn);
    io.stdout.write('json' in out ? json(out.json) : out.text);
  } else io.stdout.write(json(hintsCommand(doc.objects)));
}

/**
 * Runs `slicemesh` with `argv` (arguments after the program name) and returns the exit code.
 * Never throws.
 */
export async function run(argv: readonly string[], io: CliIO): Promise<number> {
  const fail = (code: number, message: string): number => {
    io.stderr.write(`slicemesh: ${oneLine(message)}\n`);
    return code;
  };
  try {
    // `ui` serves the web view until stopped, with flags of its own (ui/command.ts); loaded
    // only when asked for, so the other commands do not pay for the HTTP server.
    if (argv[0] === 'ui') {
      const { uiCommand } = await import('./ui/command.ts');
      await uiCommand(argv.slice(1), io);
      return EXIT_OK;
    }
    // `nats-auth` writes key files, with flags of its own (nats-auth/args.ts).
    if (argv[0] === 'nats-auth') {
      await natsAuthCommand(argv.slice(1), io, io.env ?? process.env);
      return EXIT_OK;
    }
    // `log` has subcommands and flags of its own (log/log-args.ts).
    if (argv[0] === 'log') {
      await runLog(argv.slice(1), io, io.env ?? process.env);
      return EXIT_OK;
    }
    const cl = parseCommandLine(argv);
    if (cl.help) {
      io.stdout.write(cl.command === null ? USAGE : `Usage: ${COMMAND_USAGE[cl.command]}\n`);
      return EXIT_OK;
    }
    await execute(cl, io);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError || err instanceof InvalidObjectError || err instanceof InvalidArgumentError || err instanceof HistoryInputError) return fail(EXIT_INVALID, err.message);
    if (io.debug && err instanceof Error && err.stack) io.stderr.write(`${err.stack}\n`);
    const msg = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    return fail(EXIT_INTERNAL, `internal error: ${msg.split('\n')[0] ?? ''}`);
  }
}
