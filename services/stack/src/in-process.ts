// The services started in this process through their programmatic entry points, each with its
// own health server, metrics registry and logger — what each main.ts does, minus signals.

import type { HealthServer, LoggerOptions, ReadyStatus } from '@slicemesh/runtime';
import { createLogger, createMetrics, startHealthServer } from '@slicemesh/runtime';
import { startHints, hintsConfig } from '@slicemesh/hints';
import { parseProxyAgentConfig, startProxyAgent } from '@slicemesh/proxy-agent';
import { slicerConfig, startSlicer } from '@slicemesh/slicer';
import { startWatcher, watcherConfig } from '@slicemesh/watcher';
import type { Incarnation } from './component.ts';
import type { Env } from './service-env.ts';

/** Where a service's log lines go (a file per service); undefined: stdout. */
export type LogDestination = LoggerOptions['destination'];

interface Started {
  readonly ready: Promise<void>;
  readonly readiness: () => ReadyStatus;
  readonly registry: Parameters<typeof startHealthServer>[0]['registry'];
  readonly healthPort: number;
  readonly close: () => Promise<void>;
}

/** Adds the health server main.ts would add, and closes both together. */
function withHealth(s: Started): Incarnation {
  let health: HealthServer | undefined;
  const listening = startHealthServer({ port: s.healthPort, host: '127.0.0.1', registry: s.registry, ready: s.readiness }).then((h) => {
    health = h;
  });
  const ready = Promise.all([s.ready, listening]).then(() => {});
  ready.catch(() => {}); // observed by the stack; never an unhandled rejection
  return {
    ready,
    isReady: () => s.readiness().ready,
    healthPort: () => health?.port,
    stop: async () => {
      await listening.catch(() => {});
      await Promise.all([health?.close(), s.close()]);
    },
  };
}

export function watcherInProcess(env: Env, destination: LogDestination): Incarnation {
  const config = watcherConfig.parse([], env);
  const metrics = createMetrics('watcher');
  const w = startWatcher(config, { logger: createLogger({ service: 'watcher', level: config.logLevel, destination }), metrics, env: {} });
  let ready = false;
  w.ready.then(() => (ready = true), () => {});
  return withHealth({
    ready: w.ready,
    readiness: () => (ready ? { ready: true } : { ready: false, reason: 'initial lists not yet published' }),
    registry: metrics.registry,
    healthPort: config.healthPort,
    close: () => w.close(),
  });
}

export function slicerInProcess(env: Env, destination: LogDestination): Incarnation {
  const config = slicerConfig.parse([], env);
  const s = startSlicer(config, { logger: createLogger({ service: 'slicer', level: config.logLevel, destination }) });
  s.ready.catch(() => {});
  // The slicer serves its own /metrics /healthz /readyz on config.healthPort.
  return { ready: s.ready, isReady: () => s.isReady(), healthPort: () => s.healthPort(), stop: () => s.close() };
}

export function hintsInProcess(env: Env, destination: LogDestination): Incarnation {
  const config = hintsConfig.parse([], env);
  const metrics = createMetrics('hints');
  const h = startHints(config, { logger: createLogger({ service: 'hints', level: config.logLevel, destination }), metrics });
  return withHealth({ ready: h.ready, readiness: () => h.readiness(), registry: metrics.registry, healthPort: config.healthPort, close: () => h.close() });
}

export function agentInProcess(env: Env, destination: LogDestination): Incarnation {
  const config = parseProxyAgentConfig([], env);
  const metrics = createMetrics('proxy-agent');
  const a = startProxyAgent(config, { log: createLogger({ service: 'proxy-agent', level: config.logLevel, destination }), metrics });
  return withHealth({
    ready: a.ready,
    readiness: () => (a.isReady() ? { ready: true } : { ready: false, reason: a.lastSync?.error ?? 'waiting for the initial state and the first sync' }),
    registry: metrics.registry,
    healthPort: config.healthPort,
    close: () => a.close(),
  });
}
