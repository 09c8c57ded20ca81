// The agent's metrics, named as kube-proxy names them (with our `slicemesh_` prefix): sync
// duration, network programming latency, rule counts, last sync time, changes, failures;
// plus conntrack cleanups, the health-check servers open, and the zone the agent reads.

import type { Metrics } from '@slicemesh/runtime';
import type { BackendKind } from './config.ts';

// prom-client's types through the runtime's factories (no direct dependency on prom-client).
type Histogram = ReturnType<Metrics['histogram']>;
type Gauge = ReturnType<Metrics['gauge']>;
type Counter = ReturnType<Metrics['counter']>;

export interface ProxyMetrics {
  /** kube-proxy's sync_full/partial_proxy_rules_duration_seconds as one histogram with a mode label. */
  readonly syncDuration: Histogram;
  /** From an endpoint change's trigger time (slice annotation) to the rules being applied. */
  readonly programmingLatency: Histogram;
  readonly lastSyncTimestamp: Gauge;
  readonly endpointChanges: Counter;
  readonly serviceChanges: Counter;
  readonly syncFailures: Counter;
  /** Stale UDP conntrack filters handled after syncs, by reason and result (D.7). */
  readonly conntrackCleanups: Counter;
  /** Conntrack entries the kernel deleted (D.7). */
  readonly conntrackEntriesDeleted: Counter;
  /** Time of one cleanup: every `conntrack -D` of a sync. */
  readonly conntrackCleanupDuration: Histogram;
  /** Health-check node port servers open (D.9.1). */
  readonly healthCheckServers: Gauge;
  /** Health-check node ports that could not be opened (each attempt). */
  readonly healthCheckListenFailures: Counter;
  /** 1 for the view the agent reads (its zone, or `_`) and where the zone comes from (override or node). */
  readonly zoneInfo: Gauge;
  /** Moves to another zone's views while running (the Node was relabelled). */
  readonly zoneMoves: Counter;
  /** Re-reads of a bucket after its shared feed missed deliveries or fell silent, by bucket. */
  readonly feedResyncs: Counter;
  /** Sets the backend's rule-count gauge. */
  setRuleCounts(counts: Readonly<Record<string, number>>): void;
}

/** kube-proxy's buckets: 1 ms doubling up to ~16 s. */
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);
/** kube-proxy's network-programming buckets: fine below a minute, coarser up to five. */
const LATENCY_BUCKETS = [
  0.25, 0.5,
  ...Array.from({ length: 59 }, (_, i) => i + 1),
  ...Array.from({ length: 12 }, (_, i) => 60 + 5 * i),
  ...Array.from({ length: 7 }, (_, i) => 120 + 30 * i),
];

const COUNT_GAUGES: Readonly<Record<BackendKind, { readonly name: string; readonly label: string; readonly help: string }>> = {
  iptables: { name: 'sync_proxy_rules_iptables_total', label: 'table', help: 'Rules in the chains the agent owns, per table, after the last sync.' },
  nftables: { name: 'sync_proxy_rules_nftables_objects', label: 'type', help: 'Per-service chains, rules, map/set elements and affinity sets after the last sync.' },
  ipvs: { name: 'sync_proxy_rules_ipvs_objects', label: 'type', help: 'IPVS virtual servers, real servers and bound addresses after the last sync.' },
  userspace: { name: 'sync_proxy_rules_userspace_objects', label: 'type', help: 'Proxy sockets and nat REDIRECT rules after the last sync, and the proxies\' connections, connect failures and retries so far.' },
  'dry-run': { name: 'sync_proxy_rules_dry_run_objects', label: 'type', help: 'Objects in the ruleset written by the last dry-run sync.' },
};

export function createProxyMetrics(m: Metrics, backend: BackendKind): ProxyMetrics {
  const g = COUNT_GAUGES[backend];
  const counts = m.gauge<string>({ name: g.name, help: g.help, labelNames: [g.label] });
  return {
    syncDuration: m.histogram<'mode'>({ name: 'sync_proxy_rules_duration_seconds', help: 'Duration of syncs (observe, render, apply), by mode.', labelNames: ['mode'], buckets: SYNC_BUCKETS }),
    programmingLatency: m.histogram({ name: 'network_programming_duration_seconds', help: 'Time from an endpoint change (its trigger time) to the rules being applied.', buckets: LATENCY_BUCKETS }),
    lastSyncTimestamp: m.gauge({ name: 'sync_proxy_rules_last_timestamp_seconds', help: 'When the rules were last synced successfully.' }),
    endpointChanges: m.counter({ name: 'sync_proxy_rules_endpoint_changes_total', help: 'Endpoint changes (view slices) that reached a sync.' }),
    serviceChanges: m.counter({ name: 'sync_proxy_rules_service_changes_total', help: 'Service changes that reached a sync.' }),
    syncFailures: m.counter<'mode'>({ name: 'sync_proxy_rules_failures_total', help: 'Syncs whose apply failed, by the mode tried.', labelNames: ['mode'] }),
    conntrackCleanups: m.counter<'reason' | 'result'>({
      name: 'conntrack_cleanup_filters_total',
      help: 'Stale UDP conntrack filters after syncs, by reason (endpoint-removed, newly-active, service-removed) and result (executed, failed, recorded).',
      labelNames: ['reason', 'result'],
    }),
    conntrackEntriesDeleted: m.counter({ name: 'conntrack_entries_deleted_total', help: 'UDP conntrack entries deleted after endpoint changes.' }),
    conntrackCleanupDuration: m.histogram({ name: 'conntrack_cleanup_duration_seconds', help: 'Time to run the conntrack deletions of one sync.', buckets: SYNC_BUCKETS }),
    healthCheckServers: m.gauge({ name: 'service_health_check_servers', help: 'Health-check node port servers open (Services with externalTrafficPolicy Local).' }),
    healthCheckListenFailures: m.counter({ name: 'service_health_check_listen_failures_total', help: 'Attempts to open a health-check node port that failed (retried at the next sync).' }),
    zoneInfo: m.gauge<'view' | 'source'>({ name: 'proxy_zone_info', help: 'The view this agent reads (its zone, or _ without one), 1; source: override (NODE_ZONE) or node (its Node\'s label).', labelNames: ['view', 'source'] }),
    zoneMoves: m.counter({ name: 'proxy_zone_moves_total', help: 'Moves to another zone\'s views after the Node was relabelled, without a restart.' }),
    feedResyncs: m.counter<'bucket'>({ name: 'proxy_feed_resyncs_total', help: 'Times a watched bucket was read again because its shared feed missed deliveries or fell silent, by bucket.', labelNames: ['bucket'] }),
    setRuleCounts: (values) => {
      for (const [k, v] of Object.entries(values)) counts.set({ [g.label]: k }, v);
    },
  };
}
