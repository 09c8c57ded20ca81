// Reading the pipeline's progress from the outside — streams, consumers, Postgres, KV — so the
// numbers are the same whether the services run in this process or as child processes.

import type { Db } from '@slicemesh/db';
import { countSlices, loadDecisionFlags } from '@slicemesh/db';
import type { JetStreamManager, KV, NatsConnection } from '@slicemesh/nats';
import { isApiError, openKv, pendingCount, svcClusterFilter } from '@slicemesh/nats';
import { clusterConsumerSpecs } from '@slicemesh/hints';
import { RELAY_NAME, outboxBacklog, resolveSlicerSettings, slicerConfig, slicerDurables } from '@slicemesh/slicer';
import type { StackLayout } from './service-env.ts';
import { slicerEnv } from './service-env.ts';

/** A durable consumer whose backlog tells whether a service has caught up. */
export interface WatchedConsumer {
  readonly service: 'slicer' | 'hints';
  readonly stream: string;
  readonly durable: string;
}

/** The slicer's and the hints service's durables for `layout` (their default durable prefixes). */
export function consumersOf(layout: StackLayout): WatchedConsumer[] {
  const settings = resolveSlicerSettings(slicerConfig.parse([], slicerEnv(layout, 0)));
  const slicer = slicerDurables(settings.durablePrefix, settings.partitions);
  return [
    ...slicer.map((durable) => ({ service: 'slicer' as const, stream: layout.names.kube, durable })),
    ...clusterConsumerSpecs(layout.cluster, layout.names, 'hints', layout.partitions).map((s) => ({ service: 'hints' as const, stream: s.stream, durable: s.durable })),
  ];
}

/** One reading of the backbone. Counts are null when their source does not exist yet. */
export interface BackboneReading {
  readonly kubeSeq: number | null;
  readonly slicesSeq: number | null;
  /** Last sequence of the views bucket's stream: moves with every put and delete. */
  readonly viewsSeq: number | null;
  readonly deadLetters: number | null;
  /** Messages the slicer and hints consumers have not finished (null: a consumer is missing). */
  readonly pending: number | null;
  /** Services marked dirty in Postgres (the slicer's unreconciled work). */
  readonly dirty: number;
  /** Outbox rows not yet on SLICES. */
  readonly outbox: number;
  readonly slices: number;
  readonly hintedServices: number;
  readonly decidedServices: number;
}

export interface ProbeDeps {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly db: Db;
  readonly layout: StackLayout;
  /** Health URLs of the slicers: their dirty marks live in memory and are read from /metrics. */
  readonly slicerUrls?: () => readonly (string | undefined)[];
}

async function lastSeq(jsm: JetStreamManager, stream: string): Promise<number | null> {
  try {
    return (await jsm.streams.info(stream)).state.last_seq;
  } catch (err) {
    if (isApiError(err, 10059)) return null; // stream not found (yet)
    throw err;
  }
}

async function messages(jsm: JetStreamManager, stream: string): Promise<number | null> {
  try {
    return (await jsm.streams.info(stream)).state.messages;
  } catch (err) {
    if (isApiError(err, 10059)) return null;
    throw err;
  }
}

async function pendingOf(jsm: JetStreamManager, consumers: readonly WatchedConsumer[]): Promise<number | null> {
  let total = 0;
  for (const c of consumers) {
    try {
      total += await pendingCount(jsm, c.stream, c.durable);
    } catch {
      return null; // not created yet (service still starting) or stream missing
    }
  }
  return total;
}

// Unreachable slicers count as 0: one still starting has not consumed anything either, and the
// consumers' pending counts keep a settle check honest meanwhile.
async function dirtyServices(urls: readonly (string | undefined)[]): Promise<number> {
  const counts = await Promise.all(urls.map((u) => scrapeMetric(u, 'slicemesh_slicer_dirty_services')));
  return counts.reduce<number>((n, c) => n + (c ?? 0), 0);
}

/** Reads everything BackboneReading holds; throws only when NATS or Postgres fail. */
export async function readBackbone(deps: ProbeDeps, consumers: readonly WatchedConsumer[]): Promise<BackboneReading> {
  const { jsm, db, layout } = deps;
  const n = layout.names;
  const [kubeSeq, slicesSeq, viewsSeq, deadLetters, pending, dirty, outbox, sliceCount, decisions] = await Promise.all([
    lastSeq(jsm, n.kube),
    lastSeq(jsm, n.slices),
    lastSeq(jsm, `KV_${n.views}`),
    messages(jsm, n.dlq),
    pendingOf(jsm, consumers),
    dirtyServices(deps.slicerUrls?.() ?? []),
    outboxBacklog(db, RELAY_NAME),
    countSlices(db, layout.cluster),
    loadDecisionFlags(db, layout.cluster),
  ]);
  const key = (d: { namespace: string; service: string }): string => `${d.namespace}/${d.service}`;
  return {
    kubeSeq, slicesSeq, viewsSeq, deadLetters, pending, dirty, outbox,
    slices: sliceCount,
    hintedServices: new Set(decisions.filter((d) => d.enabled).map(key)).size,
    decidedServices: new Set(decisions.map(key)).size,
  };
}

/** Keys of this cluster in the views bucket; null when the bucket does not exist yet. */
export async function countViewKeys(deps: ProbeDeps): Promise<number | null> {
  let kv: KV;
  try {
    kv = await openKv(deps.nc, deps.layout.names.views);
  } catch {
    return null;
  }
  let n = 0;
  for await (const _k of await kv.keys(svcClusterFilter(deps.layout.cluster))) n++;
  return n;
}

/** Sum of every series of `metric` in a Prometheus text exposition; null when absent. */
export function sumMetric(text: string, metric: string): number | null {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (!line.startsWith(metric)) continue;
    const rest = line.slice(metric.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue; // another metric sharing the prefix
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum = (sum ?? 0) + value;
  }
  return sum;
}

/** Scrapes `<url>/metrics` and sums `metric`; null when unreachable or absent. */
export async function scrapeMetric(url: string | undefined, metric: string): Promise<number | null> {
  if (url === undefined) return null;
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    return res.ok ? sumMetric(await res.text(), metric) : null;
  } catch {
    return null;
  }
}
