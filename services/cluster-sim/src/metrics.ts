// Prometheus metrics of the simulator, on a registry of its own (createMetrics), served at
// /metrics on the API port. Callers record through small methods so that the HTTP layer and
// the scenario driver need not know prom-client's types.
import { createMetrics } from '@slicemesh/runtime';
import type { Metrics } from '@slicemesh/runtime';
import { KINDS } from './store/kinds.ts';
import type { ObjectStore } from './store/object-store.ts';

/** Where a 410 Gone was sent: as an HTTP response, or as an ERROR event inside an open watch. */
export type GoneSource = 'response' | 'watch';

export interface SimMetrics {
  readonly registry: Metrics['registry'];
  /** One finished (or abandoned) API request; `resource` is '' for non-resource paths. */
  request(verb: string, resource: string, code: number): void;
  /** One event written into a watch stream (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR). */
  watchEvent(resource: string, type: string): void;
  gone(source: GoneSource): void;
  /** One timeline action the scenario driver performed. */
  scenarioAction(action: string): void;
  /** Sets the gauges that mirror current state; called right before each scrape. */
  observe(store: ObjectStore, openWatches: number): void;
}

/** A fresh registry with the simulator's metrics (all `slicemesh_sim_*`) and the default process metrics. */
export function createSimMetrics(): SimMetrics {
  const m = createMetrics('cluster-sim');
  const requests = m.counter({ name: 'sim_requests_total', help: 'API requests by verb, resource and HTTP code (watches count when they end).', labelNames: ['verb', 'resource', 'code'] });
  const openWatches = m.gauge({ name: 'sim_open_watches', help: 'Watch streams currently open.' });
  const objects = m.gauge({ name: 'sim_objects', help: 'Stored objects by kind.', labelNames: ['kind'] });
  const resourceVersion = m.gauge({ name: 'sim_resource_version', help: 'The current global resourceVersion.' });
  const watchEvents = m.counter({ name: 'sim_watch_events_total', help: 'Events written into watch streams by resource and type.', labelNames: ['resource', 'type'] });
  const gone = m.counter({ name: 'sim_gone_total', help: '410 Gone answers: HTTP responses, and ERROR events in open watches after compaction.', labelNames: ['source'] });
  const actions = m.counter({ name: 'sim_scenario_actions_total', help: 'Timeline actions applied by the scenario driver.', labelNames: ['action'] });
  return {
    registry: m.registry,
    request: (verb, resource, code) => requests.inc({ verb, resource, code: String(code) }),
    watchEvent: (resource, type) => watchEvents.inc({ resource, type }),
    gone: (source) => gone.inc({ source }),
    scenarioAction: (action) => actions.inc({ action }),
    observe: (store, open) => {
      openWatches.set(open);
      resourceVersion.set(store.resourceVersion);
      for (const k of KINDS) objects.set({ kind: k.kind }, store.count(k.kind));
    },
  };
}
