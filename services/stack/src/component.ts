// One service of the stack, whichever way it runs (in this process or as a child process), with
// the controls tests need: stop, kill (child processes), and restart with the same settings.

/** What every way of running a service provides for one start. */
export interface Incarnation {
  /** Resolves when the service reports ready; rejects when its startup fails. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  /** Port of its /metrics, /healthz and /readyz, once known. */
  healthPort(): number | undefined;
  /** Process id, for child processes. */
  readonly pid?: number;
  /** Graceful stop (close, or SIGTERM and wait). */
  stop(): Promise<void>;
  /** Child processes only: deliver `signal` and wait until it exited. */
  kill?(signal: NodeJS.Signals): Promise<void>;
}

export type ComponentMode = 'in-process' | 'process';

export interface Component {
  /** 'watcher', 'slicer', 'hints' or 'agent/<node>'. */
  readonly name: string;
  readonly mode: ComponentMode;
  /** Readiness of the current incarnation. */
  ready(): Promise<void>;
  isReady(): boolean;
  /** `http://127.0.0.1:<port>` of its health server, once known. */
  healthUrl(): string | undefined;
  pid(): number | undefined;
  /** True between a stop/kill and the next restart. */
  isStopped(): boolean;
  stop(): Promise<void>;
  /** Sends `signal` to the child process and waits for it to exit. Throws for in-process services. */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts a new incarnation with the same settings (stopping the current one first if running); resolves when it is ready. */
  restart(): Promise<void>;
}

/** A component that starts its first incarnation now and can be restarted by `start` again. */
export function restartableComponent(name: string, mode: ComponentMode, start: () => Incarnation): Component {
  let current = start();
  let stopped = false;
  const stopCurrent = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await current.stop();
  };
  return {
    name,
    mode,
    ready: () => current.ready,
    isReady: () => !stopped && current.isReady(),
    healthUrl: () => {
      const port = current.healthPort();
      return port === undefined ? undefined : `http://127.0.0.1:${port}`;
    },
    pid: () => current.pid,
    isStopped: () => stopped,
    stop: stopCurrent,
    kill: async (signal) => {
      if (current.kill === undefined) throw new Error(`${name} runs in this process: it cannot be killed, only stopped`);
      stopped = true;
      await current.kill(signal);
    },
    restart: async () => {
      await stopCurrent();
      current = start();
      stopped = false;
      await current.ready;
    },
  };
}
