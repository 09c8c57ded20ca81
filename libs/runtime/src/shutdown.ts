// Graceful shutdown: on the first termination signal, run the service's cleanup hooks in
// order, then exit — within a deadline, because Kubernetes follows SIGTERM with SIGKILL.
import { realClock } from './clock.ts';
import type { Clock } from './clock.ts';

/** The part of `process` used to listen for signals (an EventEmitter in tests). */
export interface SignalSource {
  on(signal: string, listener: () => void): unknown;
  off(signal: string, listener: () => void): unknown;
}

/** The part of a pino logger used here. */
export interface ShutdownLog {
  info(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Options for `onShutdown`. */
export interface ShutdownOptions {
  /** Defaults to SIGINT and SIGTERM. */
  readonly signals?: readonly string[];
  /** Deadline for all hooks together; then exit 1. Defaults to 10_000. */
  readonly timeoutMs?: number;
  /** Defaults to silent. */
  readonly log?: ShutdownLog;
  /** Defaults to the real `process`. */
  readonly process?: SignalSource;
  /** Defaults to `process.exit`. */
  readonly exit?: (code: number) => void;
  /** Measures the deadline; defaults to realClock. */
  readonly clock?: Clock;
}

/** Returned by `onShutdown`. */
export interface ShutdownHandle {
  /**
   * Starts shutdown as a signal would (e.g. after a fatal error); resolves with the exit
   * code once exit was called. Later calls and signals return the same promise.
   */
  trigger(reason: string): Promise<number>;
  /** Stops listening for the signals (shutdown already started is not affected). */
  dispose(): void;
}

const silent: ShutdownLog = { info: () => {}, error: () => {} };

/**
 * On the first of `signals` (or `trigger`), runs `hooks` one after another, exactly once,
 * then calls `exit(0)`. A hook that throws is logged and the remaining hooks still run, but
 * the exit code becomes 1. If the hooks have not all finished after `timeoutMs`, exits 1
 * at once. Later signals are logged and otherwise ignored. With no hooks, exits 0 at once.
 *
 * ### Examples
 * ```ts
 * onShutdown([() => health.close(), async () => { queue.shutDown(); await workers; }, () => nc.drain()], { log });
 * ```
 */
export function onShutdown(hooks: ReadonlyArray<() => Promise<void>>, options: ShutdownOptions = {}): ShutdownHandle {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM'];
  const timeoutMs = options.timeoutMs ?? 10_000;
  const log = options.log ?? silent;
  const source = options.process ?? process;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const clock = options.clock ?? realClock;
  let running: Promise<number> | undefined;

  async function runHooks(): Promise<number> {
    let code = 0;
    for (const [index, hook] of hooks.entries()) {
      try {
        await hook();
      } catch (err) {
        code = 1;
        log.error({ err, hook: index }, 'shutdown hook failed');
      }
    }
    return code;
  }

  function trigger(reason: string): Promise<number> {
    if (running) {
      log.info({ reason }, 'already shutting down');
      return running;
    }
    log.info({ reason, timeoutMs }, 'shutting down');
    running = new Promise<number>((resolve) => {
      let settled = false;
      const finish = (code: number, msg: string): void => {
        if (settled) return;
        settled = true;
        clock.clearTimer(timer);
        (code === 0 ? log.info : log.error).call(log, { code }, msg);
        exit(code);
        resolve(code);
      };
      const timer = clock.setTimer(() => finish(1, 'shutdown timed out'), timeoutMs);
      void runHooks().then((code) => finish(code, 'shutdown complete'));
    });
    return running;
  }

  const listeners = signals.map((signal) => {
    const listener = (): void => void trigger(signal);
    source.on(signal, listener);
    return { signal, listener };
  });

  return {
    trigger,
    dispose: () => {
      for (const { signal, listener } of listeners) source.off(signal, listener);
    },
  };
}
