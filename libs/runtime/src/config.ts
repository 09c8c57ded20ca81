// Declarative service configuration: each setting is declared once with its flag, env var,
// default and doc, so `usage()` and the parser can never disagree.
import { ConfigError } from './errors.ts';
import { formatDuration, parseDuration } from './duration.ts';

/** Built-in parsers. `duration` yields milliseconds; `url` yields the text, validated. */
export type BuiltinParser = 'string' | 'int' | 'bool' | 'duration' | 'url';

/** One setting. */
export interface FieldSpec {
  /** Environment variable, e.g. `NATS_URL`. An empty value counts as unset. */
  readonly env?: string;
  /** Command-line flag, e.g. `--nats-url`; takes `--x v` or `--x=v` (bools: `--x`, `--x=false`). */
  readonly flag?: string;
  /**
   * Used when neither flag nor env is set: a value of the field's type, or text parsed as if
   * it came from the environment (e.g. `'500ms'`). Without a default the setting is required
   * unless `optional` is set.
   */
  readonly default?: unknown;
  /** One sentence for `usage()`. */
  readonly doc: string;
  /** A built-in parser or a function that returns the value or throws with the reason. */
  readonly parse: BuiltinParser | ((text: string) => unknown);
  /** Inclusive bounds for numeric values (durations in ms). */
  readonly min?: number;
  readonly max?: number;
  /** Allowed values; the field's type narrows to their union. */
  readonly choices?: readonly string[];
  /** Without a default, yields undefined instead of failing when unset. */
  readonly optional?: boolean;
}

type Parsed<P> = P extends 'string' | 'url'
  ? string
  : P extends 'int' | 'duration'
    ? number
    : P extends 'bool'
      ? boolean
      : P extends (text: string) => infer T
        ? T
        : never;
type FieldValue<F extends FieldSpec> = F extends { readonly choices: readonly (infer C)[] } ? C : Parsed<F['parse']>;

/** The parsed configuration for a spec. */
export type ConfigOf<S extends Readonly<Record<string, FieldSpec>>> = {
  readonly [K in keyof S]: S[K] extends { readonly optional: true } ? FieldValue<S[K]> | undefined : FieldValue<S[K]>;
};

/** What `defineConfig` returns. */
export interface ConfigDefinition<S extends Readonly<Record<string, FieldSpec>>> {
  readonly spec: S;
  /**
   * Resolves every field: flag, else env, else default. Throws one ConfigError naming the
   * first bad flag/env/default and the reason; unknown flags and positional arguments are
   * errors. Callers check `helpRequested(argv)` first.
   */
  parse(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ConfigOf<S>;
  /** One entry per field: flag, env, default, allowed values or bounds, and doc. */
  usage(): string;
}

/** True when argv asks for usage (`--help` or `-h`). */
export function helpRequested(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

const FLAG = /^--[a-z0-9][a-z0-9-]*$/;
const ENV = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off']);

function parseBuiltin(kind: BuiltinParser, text: string): unknown {
  switch (kind) {
    case 'string':
      return text;
    case 'int': {
      const n = Number(text);
      if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(n)) throw new Error('not an integer');
      return n;
    }
    case 'bool': {
      const t = text.toLowerCase();
      if (TRUE.has(t)) return true;
      if (FALSE.has(t)) return false;
      throw new Error('not a boolean (true or false)');
    }
    case 'duration':
      return parseDuration(text);
    case 'url':
      if (!URL.canParse(text)) throw new Error('not a URL');
      return text;
    default: {
      const unknownKind: never = kind;
      throw new Error(`unknown parser ${String(unknownKind)}`);
    }
  }
}

function show(field: FieldSpec, value: unknown): string {
  return field.parse === 'duration' && typeof value === 'number' ? formatDuration(value) : String(value);
}

// Parses (when text) and range-checks one value; the reason of any failure becomes a ConfigError.
function resolve(field: FieldSpec, setting: string, raw: unknown, fromText: boolean): unknown {
  let value = raw;
  if (fromText) {
    try {
      value = typeof field.parse === 'function' ? field.parse(raw as string) : parseBuiltin(field.parse, raw as string);
    } catch (e) {
      throw new ConfigError(setting, `${JSON.stringify(raw)}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (field.choices && !field.choices.includes(String(value))) {
    throw new ConfigError(setting, `${JSON.stringify(String(value))} is not one of ${field.choices.join(', ')}`);
  }
  if (typeof value === 'number') {
    if (field.min !== undefined && value < field.min) throw new ConfigError(setting, `${show(field, value)} is below the minimum ${show(field, field.min)}`);
    if (field.max !== undefined && value > field.max) throw new ConfigError(setting, `${show(field, value)} is above the maximum ${show(field, field.max)}`);
  }
  return value;
}

function nameOf(key: string, field: FieldSpec): string {
  return field.flag ?? (field.env ? `env ${field.env}` : key);
}

/**
 * Declares a service's settings. Validates the spec itself eagerly (duplicate or malformed
 * flags/env names throw Error; a bad default throws ConfigError).
 *
 * ### Examples
 * ```ts
 * export const config = defineConfig({
 *   natsUrl: { env: 'NATS_URL', flag: '--nats-url', default: 'nats://127.0.0.1:4222', doc: 'NATS server.', parse: 'url' },
 *   workers: { env: 'WORKERS', flag: '--workers', default: 5, min: 1, doc: 'Concurrent reconciles.', parse: 'int' },
 *   batch: { env: 'BATCH_PERIOD', flag: '--batch-period', default: '1s', doc: 'Pod batching window.', parse: 'duration' },
 * });
 * const c = config.parse(process.argv.slice(2), process.env); // c.batch === 1000
 * ```
 */
export function defineConfig<const S extends Readonly<Record<string, FieldSpec>>>(spec: S): ConfigDefinition<S> {
  const byFlag = new Map<string, string>();
  const envs = new Set<string>();
  const defaults = new Map<string, unknown>();
  for (const [key, field] of Object.entries(spec)) {
    if (field.flag !== undefined) {
      if (!FLAG.test(field.flag)) throw new Error(`config ${key}: flag ${field.flag} must look like --kebab-case`);
      if (field.flag === '--help' || byFlag.has(field.flag)) throw new Error(`config ${key}: flag ${field.flag} is taken`);
      byFlag.set(field.flag, key);
    }
    if (field.env !== undefined) {
      if (!ENV.test(field.env)) throw new Error(`config ${key}: env ${field.env} is not a variable name`);
      if (envs.has(field.env)) throw new Error(`config ${key}: env ${field.env} is taken`);
      envs.add(field.env);
    }
    if (field.default !== undefined) {
      const setting = `default of ${nameOf(key, field)}`;
      defaults.set(key, resolve(field, setting, field.default, typeof field.default === 'string'));
    }
  }

  function parse(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ConfigOf<S> {
    const fromFlags = new Map<string, string>();
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i] as string;
      if (!arg.startsWith('--') || arg === '--') throw new ConfigError(arg, 'unexpected argument (settings are --flag value)');
      const eq = arg.indexOf('=');
      const flag = eq < 0 ? arg : arg.slice(0, eq);
      const key = byFlag.get(flag);
      if (key === undefined) throw new ConfigError(flag, 'unknown flag (see --help)');
      let text = eq < 0 ? undefined : arg.slice(eq + 1);
      if (text === undefined) text = spec[key]?.parse === 'bool' ? 'true' : argv[++i];
      if (text === undefined) throw new ConfigError(flag, 'needs a value');
      fromFlags.set(key, text); // the last occurrence wins
    }

    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(spec)) {
      const flagText = fromFlags.get(key);
      const envText = field.env === undefined ? undefined : env[field.env];
      if (flagText !== undefined) out[key] = resolve(field, field.flag as string, flagText, true);
      else if (envText !== undefined && envText !== '') out[key] = resolve(field, `env ${field.env}`, envText, true);
      else if (defaults.has(key)) out[key] = defaults.get(key);
      else if (field.optional) out[key] = undefined;
      else throw new ConfigError(nameOf(key, field), `required${field.flag && field.env ? ` (or env ${field.env})` : ''}`);
    }
    return Object.freeze(out) as ConfigOf<S>;
  }

  function usage(): string {
    const lines: string[] = [];
    for (const [key, field] of Object.entries(spec)) {
      const kind = field.choices ? field.choices.join('|') : typeof field.parse === 'string' ? field.parse : 'value';
      const head = field.flag ? (field.parse === 'bool' ? `${field.flag}[=false]` : `${field.flag} <${kind}>`) : key;
      const facts: string[] = [];
      if (field.env) facts.push(`env ${field.env}`);
      if (field.default !== undefined) facts.push(`default ${show(field, field.default)}`);
      else facts.push(field.optional ? 'optional' : 'required');
      if (field.min !== undefined) facts.push(`min ${show(field, field.min)}`);
      if (field.max !== undefined) facts.push(`max ${show(field, field.max)}`);
      lines.push(`  ${head}  (${facts.join('; ')})`, `      ${field.doc}`);
    }
    return `Settings (a flag overrides its env variable, which overrides the default):\n${lines.join('\n')}\n`;
  }

  return { spec, parse, usage };
}
