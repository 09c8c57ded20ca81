// Programmatic entry point: a store, the HTTP API on it, and a scenario driving it.
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtRootOf } from '@slicemesh/runtime';
import { createApiServer } from './http/server.ts';
import { silentLog } from './log.ts';
import type { Log } from './log.ts';
import { createSimMetrics } from './metrics.ts';
import type { SimMetrics } from './metrics.ts';
import { ScenarioDriver } from './scenario/driver.ts';
import { loadScenario, parseScenario } from './scenario/parse-scenario.ts';
import type { Scenario } from './scenario/schema.ts';
import { MCS_GROUP } from './store/kinds.ts';
import { ObjectStore } from './store/object-store.ts';
import { realClock } from './time/clock.ts';
import type { Clock } from './time/clock.ts';

/** A bundled scenario: beside the sources, or in dist/scenarios/ where the build copies them. */
function scenarioFile(name: string): string {
  const built = builtRootOf(import.meta.url);
  return built === undefined ? fileURLToPath(new URL(`../scenarios/${name}`, import.meta.url)) : join(built, 'dist', 'scenarios', name);
}

/** The scenario `npm start` and the tests use by default. */
export const DEFAULT_SCENARIO_FILE = scenarioFile('default.yaml');
/** The benchmark scenario (500 nodes, 20k pods). */
export const LARGE_SCENARIO_FILE = scenarioFile('large.yaml');
/** A static cluster: no timeline, no churn; only clients (kubectl) change it. */
export const STATIC_SCENARIO_FILE = scenarioFile('static.yaml');

/** A cluster with nothing but the default namespaces: for tests that create their own objects. */
export const EMPTY_SCENARIO: Scenario = parseScenario('cluster: {kubernetesService: false}', '<empty>');

export interface ClusterSimOptions {
  /** TCP port; 0 (the default here) picks a free one. */
  readonly port?: number;
  /** Interface to listen on. Defaults to 127.0.0.1. */
  readonly host?: string;
  /** A scenario, a path to a scenario file, or undefined for the default scenario. */
  readonly scenario?: Scenario | string;
  /** Overrides the scenario's seed (uids, names, churn choices). */
  readonly seed?: string;
  /** BOOKMARK period of watches that allow bookmarks. Defaults to 10 s. */
  readonly bookmarkIntervalMs?: number;
  /** Watch events kept per kind for resuming watches. Defaults to 10000. */
  readonly historySize?: number;
  /** Longest a watch stays open before the server ends it (0 = no limit, the default). */
  readonly maxWatchSeconds?: number;
  /** Time source for objects, timers and the scenario. Defaults to the wall clock. */
  readonly clock?: Clock;
  /** With the default clock: play the scenario (timeline, delays, churn) this many times faster. */
  readonly speed?: number;
  readonly log?: Log;
  /** Readiness delay of pods created through the API. Defaults to 1000 ms. */
  readonly apiPodReadinessDelayMs?: number;
  /** Events are deleted this long after their last write (upstream's --event-ttl); 0 keeps them. Defaults to 1 h. */
  readonly eventTTLMs?: number;
  /** Serve the MCS API (ServiceExports and ServiceImports, as its CRDs installed). False: a cluster without them (404). Defaults to true. */
  readonly mcsApi?: boolean;
}

export interface ClusterSim {
  /** `http://host:port`, ready for `kubectl --server` or a kubeconfig. */
  readonly url: string;
  readonly port: number;
  readonly store: ObjectStore;
  readonly driver: ScenarioDriver;
  readonly scenario: Scenario;
  /** The registry behind /metrics, for reading values in tests. */
  readonly metrics: SimMetrics;
  /** Stops the scenario, ends open watches and closes the server. */
  close(): Promise<void>;
}

function resolveScenario(s: Scenario | string | undefined): Scenario {
  if (s === undefined) return loadScenario(DEFAULT_SCENARIO_FILE);
  return typeof s === 'string' ? loadScenario(s) : s;
}

/** Starts the simulator and resolves once it accepts connections. */
export async function startClusterSim(options: ClusterSimOptions = {}): Promise<ClusterSim> {
  const scenario = resolveScenario(options.scenario);
  const clock = options.clock ?? realClock();
  const scenarioClock = options.clock ?? realClock(options.speed ?? 1);
  const log = options.log ?? silentLog;
  const seed = options.seed ?? scenario.seed;
  const store = new ObjectStore({
    now: () => clock.now(),
    seed,
    serviceCIDR: scenario.cluster.serviceCIDR,
    ...(options.historySize !== undefined ? { historySize: options.historySize } : {}),
    ...(options.eventTTLMs !== undefined ? { ttlMs: { Event: options.eventTTLMs } } : {}),
    timers: clock,
    onWatcherError: (err) => log('error', 'watcher failed', { err: String((err as Error)?.stack ?? err) }),
  });
  const metrics = createSimMetrics();
  const driver = new ScenarioDriver({
    store, clock: scenarioClock, scenario, log, seed,
    onAction: (action) => metrics.scenarioAction(action.action),
    ...(options.apiPodReadinessDelayMs !== undefined ? { defaultReadinessDelayMs: options.apiPodReadinessDelayMs } : {}),
  });
  // /readyz is 503 until the scenario's initial objects exist, and again while closing.
  let ready = false;
  const api = createApiServer({
    store, clock, log, metrics, ready: () => ready,
    ...(options.bookmarkIntervalMs !== undefined ? { bookmarkIntervalMs: options.bookmarkIntervalMs } : {}),
    ...(options.maxWatchSeconds !== undefined ? { maxWatchSeconds: options.maxWatchSeconds } : {}),
    ...(options.mcsApi === false ? { withoutGroups: [MCS_GROUP] } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    api.server.once('error', reject);
    api.server.listen(options.port ?? 0, host, () => {
      api.server.off('error', reject);
      resolve();
    });
  });
  driver.start();
  ready = true;
  const port = (api.server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    store,
    driver,
    scenario,
    metrics,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        ready = false;
        driver.stop();
        store.stop();
        api.endWatches();
        api.server.close(() => resolve());
        api.server.closeAllConnections();
      });
      return closing;
    },
  };
}
