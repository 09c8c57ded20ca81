// A minimal injected logger. The service will move to @slicemesh/runtime's pino logger
// once that dependency is installed; until then this keeps call sites structured.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, msg: string, fields?: Readonly<Record<string, unknown>>) => void;

const ORDER: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Discards everything (the default in tests). */
export const silentLog: Log = () => {};

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
