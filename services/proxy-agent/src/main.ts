// Composition root of the proxy agent: config → logger/metrics → agent → health server →
// shutdown hooks. Nothing else lives here.

import { ConfigError, createLogger, createMetrics, helpRequested, onShutdown, startHealthServer } from '@slicemesh/runtime';
import { parseProxyAgentConfig, proxyAgentConfig } from './config.ts';
import { startProxyAgent } from './proxy-agent.ts';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (helpRequested(argv)) {
    process.stdout.write(`Usage: proxy-agent [settings]\n\n${proxyAgentConfig.usage()}`);
    return;
  }
  let config;
  try {
    config = parseProxyAgentConfig(argv, process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`proxy-agent: ${err.message}\n`);
    process.exit(2);
  }
  const log = createLogger({ service: 'proxy-agent', level: config.logLevel });
  const metrics = createMetrics('proxy-agent');
  const agent = startProxyAgent(config, { log, metrics });
  const health = await startHealthServer({
    port: config.healthPort,
    registry: metrics.registry,
    ready: () => (agent.isReady() ? { ready: true } : { ready: false, reason: agent.lastSync?.error ?? 'waiting for the initial state and the first sync' }),
  });
  log.info({ port: health.port }, 'health server listening');
  let startupFailed = false;
  const shutdown = onShutdown([() => health.close(), () => agent.close()], { log, exit: (code) => process.exit(startupFailed ? 1 : code) });
  agent.ready.catch((err: unknown) => {
    startupFailed = true;
    log.error({ err }, 'proxy agent cannot start');
    void shutdown.trigger('startup failed');
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`proxy-agent: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
