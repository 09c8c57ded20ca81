// Test support: a store and driver on a ManualClock for one inline scenario.
import { isPodReady, isTerminating, nodeNameOf } from '../cluster/pod-status.ts';
import { ObjectStore } from '../store/object-store.ts';
import type { KubeObj } from '../store/types.ts';
import { ManualClock } from '../time/manual-clock.ts';
import { ScenarioDriver } from './driver.ts';
import { parseScenario } from './parse-scenario.ts';

export const T0 = Date.UTC(2026, 0, 1);

export interface Sim {
  readonly store: ObjectStore;
  readonly clock: ManualClock;
  readonly driver: ScenarioDriver;
}

export function startSim(yaml: string, options: { seed?: string; defaultReadinessDelayMs?: number } = {}): Sim {
  const scenario = parseScenario(yaml, 'test.yaml');
  const clock = new ManualClock(T0);
  const store = new ObjectStore({ now: () => clock.now(), seed: options.seed ?? scenario.seed, serviceCIDR: scenario.cluster.serviceCIDR });
  const driver = new ScenarioDriver({ store, clock, scenario, ...options });
  driver.start();
  return { store, clock, driver };
}

export function podsOf(store: ObjectStore, namespace: string, app: string): KubeObj[] {
  return store.list('Pod', { namespace }).filter((p) => p.metadata.labels?.['app'] === app);
}

/** Pods counted as a deployment's replicas: not terminating. */
export function activeOf(store: ObjectStore, namespace: string, app: string): KubeObj[] {
  return podsOf(store, namespace, app).filter((p) => !isTerminating(p));
}

export function readyOf(store: ObjectStore, namespace: string, app: string): KubeObj[] {
  return activeOf(store, namespace, app).filter(isPodReady);
}

export function nodesOf(pods: readonly KubeObj[]): string[] {
  return pods.map((p) => nodeNameOf(p) ?? '<none>').sort();
}

/** The whole store as JSON, for determinism comparisons. */
export function dump(store: ObjectStore): string {
  return JSON.stringify(['Namespace', 'Node', 'Service', 'Endpoints', 'Pod'].map((k) => store.list(k)));
}
