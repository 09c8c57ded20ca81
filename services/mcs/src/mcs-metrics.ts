// The multi-cluster service's Prometheus metrics (slicemesh_mcs_*: the registry adds slicemesh_).
import type { Metrics } from '@slicemesh/runtime';

export function mcsMetrics(metrics: Metrics) {
  return {
    imports: metrics.gauge({ name: 'mcs_imports', help: 'Services imported into this cluster (derived Services written).' }),
    liveClusters: metrics.gauge({ name: 'mcs_live_clusters', help: 'Clusters of the set whose heartbeat is within the TTL, this one included.' }),
    writes: metrics.counter({ name: 'mcs_kv_writes_total', help: 'KV writes by bucket (exports, svc, views, exportstatus, serviceimports) and operation.', labelNames: ['bucket', 'op'] }),
    heartbeats: metrics.counter({ name: 'mcs_heartbeats_total', help: "This cluster's heartbeats written to the exports bucket." }),
    hubErrors: metrics.counter({ name: 'mcs_exports_errors_total', help: 'Failed reads and writes of the exports bucket (the hub out of reach).' }),
  };
}
