// Command-line parsing with node:util parseArgs. Flags may come before or after the command;
// a flag that belongs to another command is an error rather than silently ignored.

import { parseArgs } from 'node:util';
import { UsageError } from './cli-error.ts';

export const COMMANDS = ['plan', 'hints', 'proxy-plan'] as const;
export type Command = (typeof COMMANDS)[number];

const OPTIONS = {
  file: { type: 'string', short: 'f' },
  help: { type: 'boolean', short: 'h' },
  'max-endpoints-per-slice': { type: 'string' },
  'managed-by': { type: 'string' },
  output: { type: 'string' },
  node: { type: 'string' },
  format: { type: 'string' },
  'ip-family': { type: 'string' },
  'iptables-chains': { type: 'string' },
  'ipvs-interface': { type: 'string' },
} as const;

type Flag = keyof typeof OPTIONS;

const COMMON: readonly Flag[] = ['file', 'help'];
const FLAGS_OF: Readonly<Record<Command, readonly Flag[]>> = {
  plan: [...COMMON, 'max-endpoints-per-slice', 'managed-by', 'output'],
  hints: COMMON,
  'proxy-plan': [...COMMON, 'node', 'format', 'ip-family', 'iptables-chains', 'ipvs-interface'],
};

export interface CommandLine {
  /** null when no command was given (only valid together with --help). */
  readonly command: Command | null;
  readonly help: boolean;
  readonly file: string | undefined;
  /** String-valued flags by long name. */
  readonly flags: Readonly<Partial<Record<Flag, string>>>;
}

const isCommand = (s: string): s is Command => (COMMANDS as readonly string[]).includes(s);

/** Turns parseArgs' (sometimes multi-line) messages into one short line. */
function describeParseError(err: unknown): string {
  const code = (err as { code?: string }).code;
  const msg = err instanceof Error ? err.message : String(err);
  const flag = /'(-[^' ]*)/.exec(msg)?.[1] ?? '';
  const long = /--[a-z-]+/.exec(msg)?.[0] ?? flag;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${flag}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    if (msg.includes('argument missing')) return `flag ${long} needs a value`;
    if (msg.includes('ambiguous')) return `flag ${long} needs a value (write ${long}=VALUE for a value starting with "-")`;
    if (msg.includes('does not take an argument')) return `flag ${long} takes no value`;
  }
  return msg.split('\n')[0] ?? msg;
}

const parseStrict = (argv: readonly string[]) => parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });

/**
 * Parses `argv` (without node and script). Throws UsageError for unknown flags, missing
 * values, extra arguments, an unknown command, or a flag of another command.
 */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  let parsed: ReturnType<typeof parseStrict>;
  try {
    parsed = parseStrict(argv);
  } catch (err) {
    throw new UsageError(describeParseError(err));
  }
  const [first, ...extra] = parsed.positionals;
  const help = parsed.values.help === true;
  if (first === undefined) {
    if (help) return { command: null, help, file: undefined, flags: {} };
    throw new UsageError(`missing command (one of ${COMMANDS.join(', ')}); see slicemesh --help`);
  }
  if (!isCommand(first)) throw new UsageError(`unknown command ${JSON.stringify(first)} (one of ${COMMANDS.join(', ')})`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const flags: Partial<Record<Flag, string>> = {};
  for (const [name, value] of Object.entries(parsed.values) as [Flag, string | boolean | undefined][]) {
    if (value === undefined) continue;
    if (!FLAGS_OF[first].includes(name)) throw new UsageError(`flag --${name} does not apply to ${first}`);
    if (typeof value === 'string') flags[name] = value;
  }
  return { command: first, help, file: flags.file, flags };
}
