// `slicemesh log …` command line: the subcommand, its positionals, and the flags, checked
// before anything is opened so a typo never waits on a server.

import { parseArgs } from 'node:util';
import { UsageError } from '../cli-error.ts';
import { SOURCE_OPTIONS } from './open-source.ts';

export const LOG_COMMANDS = ['history', 'at', 'why', 'diff', 'dlq', 'export'] as const;
export type LogCommand = (typeof LOG_COMMANDS)[number];

const OPTIONS = {
  ...SOURCE_OPTIONS,
  help: { type: 'boolean', short: 'h' },
  output: { type: 'string' },
  progress: { type: 'boolean' },
  node: { type: 'string' },
  at: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string', short: 'o' },
  gzip: { type: 'boolean' },
  all: { type: 'boolean' },
} as const;

type Flag = keyof typeof OPTIONS;

const SOURCE: readonly Flag[] = ['file', 'help', 'nats-url', 'nats-nkey-seed-file', 'nats-creds-file', 'database-url', 'db-schema', 'cluster', 'kube-stream', 'dlq-stream', 'subject-prefix', 'max-endpoints-per-slice', 'managed-by', 'output', 'progress'];
const FLAGS_OF: Readonly<Record<LogCommand, readonly Flag[]>> = {
  history: SOURCE,
  at: [...SOURCE, 'node'],
  why: [...SOURCE, 'node', 'at'],
  diff: SOURCE,
  dlq: [...SOURCE, 'all'],
  export: [...SOURCE, 'from', 'to', 'out', 'gzip'],
};
const POSITIONALS: Readonly<Record<LogCommand, readonly [number, number]>> = {
  history: [1, 1],
  at: [1, 1],
  why: [1, 1],
  diff: [2, 2],
  dlq: [0, Number.MAX_SAFE_INTEGER],
  export: [0, 0],
};

export interface LogCommandLine {
  readonly command: LogCommand | null;
  readonly help: boolean;
  readonly args: readonly string[];
  readonly flags: Readonly<Partial<Record<Flag, string>>>;
  readonly switches: Readonly<Partial<Record<'progress' | 'gzip' | 'all', boolean>>>;
}

const isLogCommand = (s: string): s is LogCommand => (LOG_COMMANDS as readonly string[]).includes(s);

/** Parses the arguments after `log`. Throws UsageError for anything wrong. */
export function parseLogCommandLine(argv: readonly string[]): LogCommandLine {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    throw new UsageError(msg.split('\n')[0] ?? msg);
  }
  const [first, ...args] = parsed.positionals;
  const help = parsed.values.help === true;
  if (first === undefined) {
    if (help) return { command: null, help, args: [], flags: {}, switches: {} };
    throw new UsageError(`log needs a command (one of ${LOG_COMMANDS.join(', ')}); see slicemesh log --help`);
  }
  if (!isLogCommand(first)) throw new UsageError(`unknown log command ${JSON.stringify(first)} (one of ${LOG_COMMANDS.join(', ')})`);
  const flags: Partial<Record<Flag, string>> = {};
  const switches: Partial<Record<'progress' | 'gzip' | 'all', boolean>> = {};
  for (const [name, value] of Object.entries(parsed.values) as [Flag, string | boolean | undefined][]) {
    if (value === undefined) continue;
    if (!FLAGS_OF[first].includes(name)) throw new UsageError(`flag --${name} does not apply to log ${first}`);
    if (typeof value === 'string') flags[name] = value;
    else if (name === 'progress' || name === 'gzip' || name === 'all') switches[name] = value;
  }
  if (!help) {
    const [min, max] = POSITIONALS[first];
    if (args.length < min) throw new UsageError(`log ${first} needs ${min === 1 ? 'an argument' : `${min} arguments`}; see slicemesh log --help`);
    if (args.length > max) throw new UsageError(`unexpected argument ${JSON.stringify(args[max])}`);
    if (first === 'why' && flags.node === undefined) throw new UsageError('log why needs --node NAME');
  }
  if (flags.output !== undefined && flags.output !== 'text' && flags.output !== 'json') throw new UsageError(`--output must be text or json (got ${JSON.stringify(flags.output)})`);
  return { command: first, help, args, flags, switches };
}

/** `ns/name` → its parts; throws UsageError otherwise. */
export function serviceRef(arg: string): { readonly namespace: string; readonly name: string } {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(arg);
  if (m === null) throw new UsageError(`a Service is written <namespace>/<name>, e.g. shop/web (got ${JSON.stringify(arg)})`);
  return { namespace: m[1] as string, name: m[3] as string };
}
