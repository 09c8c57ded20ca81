// The offline answer for the live pipeline: what `slicemesh plan` (the pure core) computes from
// the simulator's final state, and what the live stack holds (slices in Postgres, views in KV),
// both reduced to a comparable form: names, endpoint sets with conditions and hints, ports.

import type { ClusterSim } from '@slicemesh/cluster-sim';
import { planCluster } from '@slicemesh/cli';
import type { Db } from '@slicemesh/db';
import type { EndpointSlice, KubeObject, Node, Service } from '@slicemesh/model';
import { MANAGED_BY_CONTROLLER, parseKubeInput } from '@slicemesh/model';
import type { NatsConnection } from '@slicemesh/nats';
import { kvKeys, openKv, svcClusterFilter, viewKey } from '@slicemesh/nats';
import { zoneViews } from '@slicemesh/proxy-state';

/** The kinds the pipeline consumes. */
const KINDS = ['Service', 'Pod', 'Node', 'Endpoints'] as const;

/** The simulator's current objects, through the CLI's own input validation; `exclude` drops by name. */
export function simObjects(sim: ClusterSim, exclude: (name: string) => boolean = () => false): KubeObject[] {
  const items = KINDS.flatMap((k) => sim.store.list(k)).filter((o) => !exclude(o.metadata.name));
  return parseKubeInput(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), 'cluster-sim');
}

export interface Expected {
  /** By `<namespace>/<name>`: the slices as the slicer stores them (no hints: the hints service adds them downstream). */
  readonly slices: Map<string, string>;
  /** By view key: the zone views the hints service publishes. */
  readonly views: Map<string, string>;
  /** The planned slices with hints, for messages. */
  readonly planned: readonly EndpointSlice[];
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
  }
  return v;
}
const text = (v: unknown): string => JSON.stringify(canonical(v));

/**
 * The comparable form of a slice: name, namespace, address type, labels, owner, ports and
 * endpoints as sets (sorted), every endpoint field kept (conditions, hints, node, zone, target).
 * Dropped: uid, generation, resourceVersion, timestamps and annotations (the trigger time
 * depends on which syncs a process saw, A.10).
 */
export function comparable(s: EndpointSlice, opts: { readonly dropHints?: boolean } = {}): string {
  const endpoints = (s.endpoints ?? []).map((e) => {
    if (!opts.dropHints) return text(e);
    const { hints: _h, ...rest } = e;
    return text(rest);
  });
  // The name is in every map key (slices `<ns>/<name>`, views `…<service>.<slice>`), not here.
  return text({
    namespace: s.metadata.namespace,
    labels: s.metadata.labels ?? {},
    ownerReferences: (s.metadata.ownerReferences ?? []).map((o) => ({ kind: o.kind, name: o.name, uid: o.uid })),
    addressType: s.addressType,
    ports: (s.ports ?? []).map(text).sort(),
    endpoints: endpoints.sort(),
  });
}

/** `slicemesh plan` on `objects`, then the zone views of its hinted slices (preferSameNode gate on, as the services default). */
export function expectedFrom(objects: readonly KubeObject[], cluster: string): Expected {
  const plan = planCluster(objects, { maxEndpointsPerSlice: 100, managedBy: MANAGED_BY_CONTROLLER, output: 'slices' }, () => {});
  const planned = [...plan.unchanged, ...plan.update, ...plan.create];
  const slices = new Map(planned.map((s) => [`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`, comparable(s, { dropHints: true })]));
  const views = zoneViews({
    services: objects.filter((o): o is Service => o.kind === 'Service'),
    slices: planned,
    nodes: objects.filter((o): o is Node => o.kind === 'Node'),
    preferSameNodeGate: true,
  });
  const out = new Map<string, string>();
  for (const e of views.entries.values()) out.set(viewKey({ cluster, zone: e.zone, namespace: e.namespace, service: e.service, slice: e.sliceName }), comparable(e.slice));
  return { slices, views: out, planned };
}

export interface Live {
  readonly slices: Map<string, string>;
  readonly views: Map<string, string>;
}

/** The slices in Postgres and the views in KV of `cluster`, in comparable form. */
export async function liveState(db: Db, nc: NatsConnection, viewsBucket: string, cluster: string): Promise<Live> {
  const rows = await db.selectFrom('endpoint_slices').select(['namespace', 'name', 'body']).where('cluster', '=', cluster).execute();
  const slices = new Map(rows.map((r) => [`${r.namespace}/${r.name}`, comparable(r.body)]));
  const kv = await openKv(nc, viewsBucket);
  const views = new Map<string, string>();
  for (const k of await kvKeys(kv, svcClusterFilter(cluster))) {
    const e = await kv.get(k);
    if (e !== null && e.operation === 'PUT') views.set(k, comparable(e.json<EndpointSlice>()));
  }
  return { slices, views };
}

const short = (t: string): string => (t.length > 400 ? `${t.slice(0, 400)}…` : t);

/**
 * Every difference between two keyed maps, as lines; [] when equal. A key missing on one side
 * whose content appears under another key of the other side is reported once as a rename.
 */
export function differences(what: string, expected: ReadonlyMap<string, string>, actual: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  const missing = [...expected.keys()].filter((k) => !actual.has(k)).sort();
  const extra = new Set([...actual.keys()].filter((k) => !expected.has(k)));
  for (const k of missing) {
    const e = expected.get(k) as string;
    const twin = [...extra].find((x) => actual.get(x) === e);
    if (twin !== undefined) {
      extra.delete(twin);
      out.push(`${what} ${k}: same content is live under another name, ${twin}`);
    } else out.push(`${what} ${k}: missing live (expected ${short(e)})`);
  }
  for (const k of [...extra].sort()) out.push(`${what} ${k}: live but not expected (${short(actual.get(k) as string)})`);
  for (const k of [...expected.keys()].filter((x) => actual.has(x)).sort()) {
    if (expected.get(k) !== actual.get(k)) out.push(`${what} ${k}: differs\n  expected ${expected.get(k)}\n  live     ${actual.get(k)}`);
  }
  return out;
}

/** Live vs expected, slices then views; [] when the pipeline equals the offline answer. */
export function compareLive(expected: Expected, live: Live): string[] {
  return [...differences('slice', expected.slices, live.slices), ...differences('view', expected.views, live.views)];
}
