// Composition root: configuration, logger, metrics, the service, its health server and the
// shutdown hooks. No logic lives here.

import { ConfigError, createLogger, createMetrics, helpRequested, onShutdown, startHealthServer } from '@slicemesh/runtime';
import { hintsConfig } from './config.ts';
import type { HintsConfig } from './config.ts';
import { startHints } from './hints-service.ts';

async function main(argv: readonly string[]): Promise<void> {
  if (helpRequested(argv)) {
    process.stdout.write(`slicemesh hints: topology hints and per-zone endpoint views\n\n${hintsConfig.usage()}`);
    return;
  }
  let config: HintsConfig;
  try {
    config = hintsConfig.parse(argv, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`hints: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger({ service: 'hints', level: config.logLevel });
  const metrics = createMetrics('hints');
  const hints = startHints(config, { logger: log, metrics });
  const health = await startHealthServer({ port: config.healthPort, registry: metrics.registry, ready: () => hints.readiness() });
  log.info({ port: health.port }, 'health server listening');
  const shutdown = onShutdown([() => health.close(), () => hints.close()], { log });
  hints.ready.catch(() => void shutdown.trigger('startup failed'));
}

await main(process.argv.slice(2));
