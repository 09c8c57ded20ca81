// The cluster-sim service: parses flags, starts the simulator, prints its URL, and shuts
// down cleanly on SIGINT/SIGTERM. Run: node src/main.ts [flags] (Node strips the types), or dist/cluster-sim.js when built.
import { createLogger } from '@slicemesh/runtime';
import { pinoLog } from './log.ts';
import { parseMainOptions, USAGE, UsageError } from './options.ts';
import { ScenarioError } from './scenario/reader.ts';
import { startClusterSim } from './start.ts';

async function main(): Promise<number> {
  let options;
  try {
    options = parseMainOptions(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    if (err.message) process.stderr.write(`cluster-sim: ${err.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  // Logs go to stderr: stdout carries only the "listening on" line that scripts read.
  const log = pinoLog(createLogger({ service: 'cluster-sim', level: options.logLevel, destination: process.stderr }));
  let sim;
  try {
    sim = await startClusterSim({
      port: options.port,
      host: options.host,
      ...(options.scenario ? { scenario: options.scenario } : {}),
      ...(options.seed ? { seed: options.seed } : {}),
      bookmarkIntervalMs: options.bookmarkIntervalMs,
      historySize: options.historySize,
      speed: options.speed,
      eventTTLMs: options.eventTTLMs,
      mcsApi: options.mcsApi,
      log,
    });
  } catch (err) {
    if (err instanceof ScenarioError) {
      process.stderr.write(`cluster-sim: ${err.message}\n`);
      return 2;
    }
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      process.stderr.write(`cluster-sim: port ${options.port} is in use (try --port 0)\n`);
      return 1;
    }
    throw err;
  }
  process.stdout.write(`cluster-sim listening on ${sim.url} (scenario ${sim.scenario.source})\n`);
  log('info', 'listening', { url: sim.url, scenario: sim.scenario.source });
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      log('info', 'shutting down', { signal });
      void sim.close().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cluster-sim: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
