// Structured JSON logging for services. Libraries never log (habit 15): they return results
// or typed status, and the service logs them with the keys below.
import { randomUUID } from 'node:crypto';
import { pino, stdSerializers, stdTimeFunctions } from 'pino';
import type { DestinationStream, Level, Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * The stable keys of every log line. Use them (`{ [LOG_KEYS.slice]: name }` or the literal
 * key) rather than synonyms, so that one query finds a name across all services.
 */
export const LOG_KEYS = {
  /** The slicemesh process: watcher, slicer, hints, proxy-agent, cluster-sim. Set by createLogger. */
  component: 'component',
  /** A Kubernetes Service as `<namespace>/<name>` (the reconcile key). */
  service: 'service',
  /** The source cluster name, as used in subjects. */
  cluster: 'cluster',
  /** A Kubernetes Node name (for proxy-agent: the node it programs). */
  node: 'node',
  /** An EndpointSlice as `<namespace>/<name>`. */
  slice: 'slice',
  /** Correlates every line of one reconcile; see newReconcileID(). */
  reconcileID: 'reconcileID',
  /** A JetStream stream sequence number. */
  seq: 'seq',
  /** A NATS subject. */
  subject: 'subject',
  /** An Error, expanded by pino's err serializer (type, message, stack, cause). */
  err: 'err',
} as const;

export type LogKey = (typeof LOG_KEYS)[keyof typeof LOG_KEYS];

/** Options for `createLogger`. */
export interface LoggerOptions {
  /** The process name, logged under `component` on every line. */
  readonly service: string;
  /** Minimum level; defaults to `info`. `silent` disables output. */
  readonly level?: Level | 'silent';
  /** Where lines go; defaults to stdout. Tests pass a stream that collects lines. */
  readonly destination?: DestinationStream;
}

/**
 * Returns a pino logger writing one JSON object per line with `level` as a label, an ISO
 * `time`, `component`, and errors under `err` expanded by pino's standard serializer.
 *
 * ### Examples
 * ```ts
 * const log = createLogger({ service: 'slicer' });
 * log.child({ service: 'default/web', reconcileID: newReconcileID() }).info({ seq: 42 }, 'reconciled');
 * // {"level":"info","time":"…","component":"slicer","service":"default/web","reconcileID":"…","seq":42,"msg":"reconciled"}
 * ```
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      // The process name is not `service`: that key names the Kubernetes Service in reconcile logs.
      base: { [LOG_KEYS.component]: options.service },
      timestamp: stdTimeFunctions.isoTime,
      errorKey: LOG_KEYS.err,
      serializers: { [LOG_KEYS.err]: stdSerializers.err },
      formatters: { level: (label) => ({ level: label }) },
    },
    options.destination,
  );
}

/** A fresh ID for the `reconcileID` key (a random UUID). */
export function newReconcileID(): string {
  return randomUUID();
}

/** LOG_LEVEL / --log-level: every service's minimum log level, declared once. */
export const LOG_LEVEL_SETTING = {
  env: 'LOG_LEVEL',
  flag: '--log-level',
  default: 'info',
  choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
  parse: 'string',
  doc: 'Minimum log level.',
} as const;
