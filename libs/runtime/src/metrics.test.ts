import { describe, expect, it } from 'vitest';
import { register as globalRegistry } from 'prom-client';
import { createMetrics, METRIC_PREFIX } from './metrics.ts';

describe('createMetrics', () => {
  const cases: readonly { name: string; record: (m: ReturnType<typeof createMetrics>) => void; want: readonly string[] }[] = [
    {
      name: 'prefixes a counter with slicemesh_ and labels it with the component',
      record: (m) => m.counter({ name: 'reconciles_total', help: 'Reconciles.', labelNames: ['outcome'] as const }).inc({ outcome: 'success' }, 2),
      want: ['# TYPE slicemesh_reconciles_total counter', 'slicemesh_reconciles_total{outcome="success",component="slicer"} 2'],
    },
    {
      name: 'prefixes a gauge',
      record: (m) => m.gauge({ name: 'queue_depth', help: 'Keys ready.' }).set(7),
      want: ['# TYPE slicemesh_queue_depth gauge', 'slicemesh_queue_depth{component="slicer"} 7'],
    },
    {
      name: 'prefixes a histogram and keeps its buckets',
      record: (m) => m.histogram({ name: 'sync_seconds', help: 'Sync time.', buckets: [0.1, 1] }).observe(0.5),
      want: ['slicemesh_sync_seconds_bucket{le="0.1",component="slicer"} 0', 'slicemesh_sync_seconds_bucket{le="1",component="slicer"} 1', 'slicemesh_sync_seconds_count{component="slicer"} 1'],
    },
    {
      name: 'includes the default process and Node.js metrics, unprefixed',
      record: () => {},
      want: ['# TYPE process_cpu_seconds_total counter', '# TYPE nodejs_eventloop_lag_seconds gauge'],
    },
  ];
  for (const tc of cases) {
    it(tc.name, async () => {
      const m = createMetrics('slicer');
      tc.record(m);
      const text = await m.registry.metrics();
      for (const line of tc.want) expect(text).toContain(line);
    });
  }

  it('gives each call its own registry and leaves the global one alone', async () => {
    const before = (await globalRegistry.getMetricsAsJSON()).length;
    const a = createMetrics('a');
    const b = createMetrics('b');
    a.counter({ name: 'same_total', help: 'x' }).inc();
    b.counter({ name: 'same_total', help: 'x' }).inc(3);
    expect(await a.registry.getSingleMetricAsString(`${METRIC_PREFIX}same_total`)).toContain('slicemesh_same_total{component="a"} 1');
    expect(await b.registry.getSingleMetricAsString(`${METRIC_PREFIX}same_total`)).toContain('slicemesh_same_total{component="b"} 3');
    expect((await globalRegistry.getMetricsAsJSON()).length).toBe(before);
  });

  it('rejects the same metric twice on one registry', () => {
    const m = createMetrics('x');
    m.counter({ name: 'dup_total', help: 'x' });
    expect(() => m.counter({ name: 'dup_total', help: 'x' })).toThrow(/already been registered/);
  });
});
