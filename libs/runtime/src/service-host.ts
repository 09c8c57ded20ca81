// The one way a service runs: its settings parsed, a logger and a metrics registry made, the
// service started, /healthz /readyz /metrics served, and everything closed in order. A
// process's main.ts calls runServiceMain (adding signals and exit codes); the stack's
// in-process mode calls hostService for each service, so both run the same lifecycle.

import type { ReadyStatus } from './health-server.ts';
import { startHealthServer } from './health-server.ts';
import type { HealthServer } from './health-server.ts';
import { helpRequested } from './config.ts';
import { ConfigError } from './errors.ts';
import type { Logger, LoggerOptions } from './logger.ts';
import { createLogger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { createMetrics } from './metrics.ts';
import { onShutdown } from './shutdown.ts';

/** What a started service offers its host. */
export interface HostedService {
  /** Resolves once the service is ready; rejects if it cannot start. */
  readonly ready: Promise<void>;
  /** Answers /readyz. */
  readiness(): ReadyStatus;
  /** Answers /healthz (false: 503); absent, the process is live while it runs. */
  live?(): boolean;
  /** Stops the service and releases what it opened. Idempotent. */
  close(): Promise<void>;
}

/** How to run one service: its name, settings and start function. */
export interface ServiceDefinition<C> {
  /** `slicer`, `hints`, … (the log's `service` field and the metrics prefix). */
  readonly name: string;
  /** One line for --help. */
  readonly summary: string;
  readonly config: { parse(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): C; usage(): string };
  /** The settings every service has. */
  readonly common: (config: C) => { readonly logLevel: string; readonly healthPort: number };
  readonly start: (config: C, deps: { readonly logger: Logger; readonly metrics: Metrics }) => HostedService;
}

export interface HostOptions {
  /** Where log lines go; stdout by default. */
  readonly destination?: LoggerOptions['destination'];
  /** Interface of the health server; all by default. */
  readonly host?: string;
}

/** A service running under its host. */
export interface Host {
  /** Resolves when the service is ready and the health server listens. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  /** The health server's port once it listens. */
  healthPort(): number | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Closes the health server and the service. Idempotent. */
  stop(): Promise<void>;
}

/** Starts `def` with `config`: logger, metrics, the service, its health server. */
export function hostService<C>(def: ServiceDefinition<C>, config: C, opts: HostOptions = {}): Host {
  const common = def.common(config);
  const logger = createLogger({ service: def.name, level: common.logLevel as LoggerOptions['level'], ...(opts.destination !== undefined ? { destination: opts.destination } : {}) });
  const metrics = createMetrics(def.name);
  const service = def.start(config, { logger, metrics });
  let health: HealthServer | undefined;
  const listening = startHealthServer({ port: common.healthPort, ...(opts.host !== undefined ? { host: opts.host } : {}), registry: metrics.registry, ready: () => service.readiness(), ...(service.live ? { live: () => service.live?.() ?? true } : {}) }).then((h) => {
    health = h;
  });
  const ready = Promise.all([service.ready, listening]).then(() => {});
  ready.catch(() => {}); // observed by the caller through `ready`
  let stopping: Promise<void> | undefined;
  return {
    ready,
    isReady: () => service.readiness().ready,
    healthPort: () => health?.port,
    logger,
    metrics,
    stop: () =>
      (stopping ??= (async () => {
        await listening.catch(() => {});
        await Promise.all([health?.close(), service.close()]);
      })()),
  };
}

export interface MainIo {
  readonly stdout: { write(s: string): unknown };
  readonly stderr: { write(s: string): unknown };
  readonly exit: (code: number) => void;
}

/**
 * A service's process: `--help` prints the settings; a bad setting exits 2 with one line; the
 * service runs under hostService until SIGINT/SIGTERM; a startup failure exits 1.
 */
export async function runServiceMain<C>(def: ServiceDefinition<C>, argv: readonly string[], env: Readonly<Record<string, string | undefined>>, io: MainIo = { stdout: process.stdout, stderr: process.stderr, exit: (c) => process.exit(c) }): Promise<void> {
  if (helpRequested(argv)) {
    io.stdout.write(`Usage: ${def.name} [--flag value ...]\n\n${def.summary}\n\n${def.config.usage()}`);
    return;
  }
  let host: Host;
  try {
    host = hostService(def, def.config.parse(argv, env));
  } catch (err) {
    // Settings that parse but contradict each other are found when the service starts.
    if (!(err instanceof ConfigError)) throw err;
    io.stderr.write(`${def.name}: ${err.message}\n`);
    io.exit(2);
    return;
  }
  let failed = false;
  let stopping = false;
  const stop = async (): Promise<void> => {
    stopping = true;
    await host.stop();
  };
  const shutdown = onShutdown([stop], { log: host.logger, exit: (code) => io.exit(failed ? 1 : code) });
  host.ready.then(
    () => host.logger.info({ port: host.healthPort() }, 'ready; serving /metrics /healthz /readyz'),
    (err: unknown) => {
      if (stopping) return; // a signal during startup: a clean stop, not a failure
      failed = true;
      host.logger.error({ err }, `${def.name} failed to start`);
      void shutdown.trigger('startup failed');
    },
  );
}
