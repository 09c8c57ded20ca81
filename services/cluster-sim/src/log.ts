// The simulator logs through an injected function, so tests and embedders (services/stack)
// can pass their own. The service process adapts @slicemesh/runtime's pino logger to it.
import type { Logger } from '@slicemesh/runtime';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void;

const ORDER: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Discards everything (the default in tests). */
export const silentLog: Log = () => {};

/** Sends every call to a pino logger (which applies its own level); `fields` become keys of the line. */
export function pinoLog(logger: Logger): Log {
  return (level, msg, fields) => {
    if (fields) logger[level](fields, msg);
    else logger[level](msg);
  };
}

/** One JSON object per line on `write` (stderr by default) for lines at or above `min`. */
export function jsonLog(min: LogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Log {
  return (level, msg, fields) => {
    if (ORDER[level] < ORDER[min]) return;
    write(`${JSON.stringify({ level, time: new Date().toISOString(), component: 'cluster-sim', msg, ...fields })}\n`);
  };
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(ORDER, value);
}
