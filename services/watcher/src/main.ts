// Composition root: configuration, logger, metrics, the watcher, its health server and the
// shutdown hooks. No logic lives here.

import { ConfigError, createLogger, createMetrics, helpRequested, onShutdown, startHealthServer } from '@slicemesh/runtime';
import { watcherConfig } from './config.ts';
import type { WatcherConfig } from './config.ts';
import { startWatcher } from './start-watcher.ts';

async function main(argv: readonly string[]): Promise<void> {
  if (helpRequested(argv)) {
    process.stdout.write(`slicemesh watcher: Kubernetes list+watch into the KUBE stream\n\n${watcherConfig.usage()}`);
    return;
  }
  let config: WatcherConfig;
  try {
    config = watcherConfig.parse(argv, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`watcher: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger({ service: 'watcher', level: config.logLevel });
  const metrics = createMetrics('watcher');
  const watcher = startWatcher(config, { logger: log, metrics });
  let ready = false;
  watcher.ready.then(() => (ready = true), () => {});
  const health = await startHealthServer({
    port: config.healthPort,
    registry: metrics.registry,
    ready: () => (ready ? { ready: true } : { ready: false, reason: 'initial lists not yet published' }),
  });
  log.info({ port: health.port }, 'health server listening');
  const shutdown = onShutdown([() => health.close(), () => watcher.close()], { log });
  watcher.ready.catch(() => void shutdown.trigger('startup failed'));
}

await main(process.argv.slice(2));
