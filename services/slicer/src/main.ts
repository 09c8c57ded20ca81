// Composition root: settings → logger → slicer → signal handling. Nothing else.
// Run: node --import tsx services/slicer/src/main.ts [--flag value ...]   (--help for settings)

import { ConfigError, createLogger, helpRequested, onShutdown } from '@slicemesh/runtime';
import { slicerConfig } from './config.ts';
import { ClosedError, startSlicer } from './slicer.ts';

const argv = process.argv.slice(2);
if (helpRequested(argv)) {
  process.stdout.write(`Usage: slicer [--flag value ...]\n\nThe EndpointSlice and mirroring controllers over the KUBE event log.\n\n${slicerConfig.usage()}`);
  process.exit(0);
}

let config;
try {
  config = slicerConfig.parse(argv, process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`slicer: ${err.message}\n`);
  process.exit(2);
}

const log = createLogger({ service: 'slicer', level: config.logLevel });
let slicer;
try {
  slicer = startSlicer(config, { logger: log });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`slicer: ${err.message}\n`);
  process.exit(2);
}
const running = slicer;
let failed = false;
const shutdown = onShutdown([() => running.close()], { log, exit: (code) => process.exit(failed ? 1 : code) });
running.ready.then(
  () => log.info({ port: running.healthPort() }, 'serving /metrics /healthz /readyz'),
  (err: unknown) => {
    if (err instanceof ClosedError) return; // a signal arrived during startup
    failed = true;
    log.error({ err }, 'slicer failed to start');
    void shutdown.trigger('startup failed');
  },
);
