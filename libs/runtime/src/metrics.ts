// Prometheus metrics for one service, on a registry of its own: nothing is registered on
// prom-client's global registry, so tests can create as many as they like.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CounterConfiguration, GaugeConfiguration, HistogramConfiguration } from 'prom-client';

/** Every metric created through `Metrics` is named `slicemesh_<name>`. */
export const METRIC_PREFIX = 'slicemesh_';

type Config<C> = Omit<C, 'registers'>;

/** A registry plus factories that register on it. */
export interface Metrics {
  readonly registry: Registry;
  /** `name` without the prefix, e.g. `reconciles_total`. */
  counter<L extends string = string>(config: Config<CounterConfiguration<L>>): Counter<L>;
  gauge<L extends string = string>(config: Config<GaugeConfiguration<L>>): Gauge<L>;
  histogram<L extends string = string>(config: Config<HistogramConfiguration<L>>): Histogram<L>;
}

/**
 * Returns a fresh registry holding prom-client's default process and Node.js metrics
 * (unprefixed, e.g. `process_cpu_seconds_total`), with the label `component=<service>` on
 * every series. Creating the same metric name twice on one Metrics throws.
 *
 * ### Examples
 * ```ts
 * const m = createMetrics('slicer');
 * const reconciles = m.counter({ name: 'reconciles_total', help: 'Reconciles by outcome.', labelNames: ['outcome'] });
 * reconciles.inc({ outcome: 'success' }); // slicemesh_reconciles_total{outcome="success",component="slicer"} 1
 * ```
 */
export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ component: service });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    counter: (config) => new Counter({ ...config, name: METRIC_PREFIX + config.name, registers }),
    gauge: (config) => new Gauge({ ...config, name: METRIC_PREFIX + config.name, registers }),
    histogram: (config) => new Histogram({ ...config, name: METRIC_PREFIX + config.name, registers }),
  };
}
