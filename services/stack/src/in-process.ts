// The services started in this process through the service host, each with its own health
// server, metrics registry and logger — exactly what each main.ts runs, minus signals.

import type { LoggerOptions, ServiceDefinition } from '@slicemesh/runtime';
import { hostService } from '@slicemesh/runtime';
import { hintsService } from '@slicemesh/hints';
import { proxyAgentService } from '@slicemesh/proxy-agent';
import { publisherServiceWith } from '@slicemesh/publisher';
import { slicerService } from '@slicemesh/slicer';
import { watcherServiceWith } from '@slicemesh/watcher';
import type { Incarnation } from './component.ts';
import type { Env } from './service-env.ts';

/** Where a service's log lines go (a file per service); undefined: stdout. */
export type LogDestination = LoggerOptions['destination'];

function inProcess<C>(def: ServiceDefinition<C>, env: Env, destination: LogDestination): Incarnation {
  const host = hostService(def, def.config.parse([], env), { destination, host: '127.0.0.1' });
  return { ready: host.ready, isReady: () => host.isReady(), healthPort: () => host.healthPort(), stop: () => host.stop() };
}

// The environment is the service's own (service-env.ts), never this process's.
export const watcherInProcess = (env: Env, destination: LogDestination): Incarnation => inProcess(watcherServiceWith({ env: {} }), env, destination);
export const slicerInProcess = (env: Env, destination: LogDestination): Incarnation => inProcess(slicerService, env, destination);
export const hintsInProcess = (env: Env, destination: LogDestination): Incarnation => inProcess(hintsService, env, destination);
export const publisherInProcess = (env: Env, destination: LogDestination): Incarnation => inProcess(publisherServiceWith({ env: {} }), env, destination);
export const agentInProcess = (env: Env, destination: LogDestination): Incarnation => inProcess(proxyAgentService, env, destination);
