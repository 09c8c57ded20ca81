// The watcher as the service host runs it (main.ts and the stack's in-process mode).

import type { ServiceDefinition } from '@slicemesh/runtime';
import type { WatcherConfig } from './config.ts';
import { watcherConfig } from './config.ts';
import type { WatcherDeps } from './start-watcher.ts';
import { startWatcher } from './start-watcher.ts';

/** `extra` adds deps a host supplies (the in-process stack passes an empty environment). */
export function watcherServiceWith(extra: Pick<WatcherDeps, 'env'> = {}): ServiceDefinition<WatcherConfig> {
  return {
    name: 'watcher',
    summary: 'Kubernetes list+watch into the KUBE stream.',
    config: watcherConfig,
    common: (c) => c,
    start: (config, deps) => {
      const w = startWatcher(config, { ...deps, ...extra });
      let ready = false;
      w.ready.then(() => (ready = true), () => {});
      return { ready: w.ready, readiness: () => (ready ? { ready: true } : { ready: false, reason: 'initial lists not yet published' }), close: () => w.close() };
    },
  };
}

export const watcherService = watcherServiceWith();
