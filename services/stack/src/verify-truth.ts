// verify (b) "truth": the live slices against the cluster's actual final state. The Services,
// Pods, Endpoints, Nodes and other controllers' EndpointSlices are listed from the Kubernetes API
// the stack runs against (as a user would list them), planned offline by the CLI's composition
// (`slicemesh plan`, which hints the slices as `slicemesh hints` does), and compared with what
// the stack holds: the slicer's endpoint_slices in Postgres (no hints: those are added
// downstream) and the `hinted` KV entries (with hints).
//
// The comparison is semantic: per Service and address type, the set of endpoints (addresses,
// conditions, node, zone, hints, target, hostname, and the ports of the slice each sits in) and
// the port sets — not slice names, nor how the endpoints are split into slices, which depend on
// history. Everything but the listing and the reads is pure (semanticSlices, compareSemantic).

import type { EndpointSlice, Endpoint, KubeObject } from '@slicemesh/model';
import { LABEL_SERVICE_NAME } from '@slicemesh/model';
import { buildKubeConfig, listRaw, toDomain } from '@slicemesh/kube';
import type { WatchedKind } from '@slicemesh/kube';
import { planCluster } from '@slicemesh/cli';
import type { OwnManagers } from '@slicemesh/nats';
import { foreignSliceSelector, isOwnSlice, ownManagers } from '@slicemesh/nats';

/** One endpoint as the comparison sees it. Every field is a display string ('-' when unset). */
export interface EndpointFacts {
  readonly ready: string;
  readonly serving: string;
  readonly terminating: string;
  readonly nodeName: string;
  readonly zone: string;
  readonly zoneHints: string;
  readonly nodeHints: string;
  readonly target: string;
  readonly hostname: string;
  /** The ports of the slice the endpoint is in (what it serves). */
  readonly ports: string;
}

/** The endpoints and ports of one Service and address type. */
export interface SemanticGroup {
  /** By the endpoint's addresses (comma-joined, sorted); a repeated address set gets `#2`, `#3`, …. */
  readonly endpoints: ReadonlyMap<string, EndpointFacts>;
  /** The distinct port sets of its slices (of every slice when none has endpoints). */
  readonly portSets: readonly string[];
}

/** By `<namespace>/<service> <addressType>`. */
export type SemanticSlices = ReadonlyMap<string, SemanticGroup>;

const FIELDS: readonly (keyof EndpointFacts)[] = ['ready', 'serving', 'terminating', 'nodeName', 'zone', 'zoneHints', 'nodeHints', 'target', 'hostname', 'ports'];

const LABELS: Readonly<Record<keyof EndpointFacts, string>> = {
  ready: 'ready',
  serving: 'serving',
  terminating: 'terminating',
  nodeName: 'nodeName',
  zone: 'zone',
  zoneHints: 'zone hints',
  nodeHints: 'node hints',
  target: 'targetRef',
  hostname: 'hostname',
  ports: 'ports',
};

const shown = (v: string | boolean | undefined | null): string => (v === undefined || v === null || v === '' ? '-' : String(v));
const names = (list: readonly { readonly name: string }[] | undefined): string => (list === undefined || list.length === 0 ? '-' : `[${list.map((x) => x.name).sort().join(',')}]`);

/** The ports of a slice, order-free: `name:port/protocol` sorted. */
export function portSetOf(slice: Pick<EndpointSlice, 'ports'>): string {
  const ports = (slice.ports ?? []).map((p) => `${p.name ?? ''}:${p.port ?? '*'}/${p.protocol ?? 'TCP'}${p.appProtocol !== undefined ? `(${p.appProtocol})` : ''}`).sort();
  return `[${ports.join(' ')}]`;
}

function factsOf(ep: Endpoint, ports: string, withHints: boolean): EndpointFacts {
  const t = ep.targetRef;
  return {
    ready: shown(ep.conditions?.ready),
    serving: shown(ep.conditions?.serving),
    terminating: shown(ep.conditions?.terminating),
    nodeName: shown(ep.nodeName),
    zone: shown(ep.zone),
    zoneHints: withHints ? names(ep.hints?.forZones) : '-',
    nodeHints: withHints ? names(ep.hints?.forNodes) : '-',
    target: t === undefined ? '-' : `${t.kind ?? ''}/${t.namespace ?? ''}/${t.name ?? ''}`,
    hostname: shown(ep.hostname),
    ports,
  };
}

/**
 * The semantic form of `slices` (slices without a service-name label are left out). With
 * `hints: false` the hints are not part of it (for the slicer's slices, which carry none).
 */
export function semanticSlices(slices: Iterable<EndpointSlice>, opts: { readonly hints: boolean }): SemanticSlices {
  const groups = new Map<string, { endpoints: Map<string, EndpointFacts>; withEndpoints: Set<string>; all: Set<string> }>();
  for (const s of slices) {
    const service = s.metadata.labels?.[LABEL_SERVICE_NAME];
    if (service === undefined || service === '') continue;
    const key = `${s.metadata.namespace ?? 'default'}/${service} ${s.addressType}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { endpoints: new Map(), withEndpoints: new Set(), all: new Set() }));
    const ports = portSetOf(s);
    g.all.add(ports);
    if ((s.endpoints ?? []).length > 0) g.withEndpoints.add(ports);
    for (const ep of s.endpoints ?? []) {
      const base = [...ep.addresses].sort().join(',');
      let id = base;
      for (let n = 2; g.endpoints.has(id); n++) id = `${base}#${n}`;
      g.endpoints.set(id, factsOf(ep, ports, opts.hints));
    }
  }
  const out = new Map<string, SemanticGroup>();
  for (const [key, g] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out.set(key, { endpoints: g.endpoints, portSets: [...(g.withEndpoints.size > 0 ? g.withEndpoints : g.all)].sort() });
  }
  return out;
}

const describe = (f: EndpointFacts): string => `ready=${f.ready} serving=${f.serving} terminating=${f.terminating} node=${f.nodeName} zone=${f.zone} zoneHints=${f.zoneHints} ports=${f.ports}`;

/**
 * Every difference between the planned (expected) and the live semantic slices, one readable
 * line each, prefixed with `what` (e.g. `slicer`): a Service/address type on one side only, a
 * port set that differs, an endpoint missing or not planned, and each field of an endpoint that
 * differs. [] when equal.
 */
export function compareSemantic(what: string, planned: SemanticSlices, live: SemanticSlices): string[] {
  const out: string[] = [];
  const keys = [...new Set([...planned.keys(), ...live.keys()])].sort();
  for (const key of keys) {
    const p = planned.get(key);
    const l = live.get(key);
    if (l === undefined) {
      out.push(`${what} ${key}: planned with ${p?.endpoints.size ?? 0} endpoints, but no live slices`);
      continue;
    }
    if (p === undefined) {
      out.push(`${what} ${key}: live slices with ${l.endpoints.size} endpoints, but none planned`);
      continue;
    }
    if (p.portSets.join(' ') !== l.portSets.join(' ')) out.push(`${what} ${key}: ports live ${l.portSets.join(' ')} planned ${p.portSets.join(' ')}`);
    for (const id of [...new Set([...p.endpoints.keys(), ...l.endpoints.keys()])].sort()) {
      const pe = p.endpoints.get(id);
      const le = l.endpoints.get(id);
      if (le === undefined) out.push(`${what} ${key}: endpoint ${id} missing live (planned ${describe(pe as EndpointFacts)})`);
      else if (pe === undefined) out.push(`${what} ${key}: endpoint ${id} live but not planned (${describe(le)})`);
      else {
        for (const f of FIELDS) if (f !== 'zoneHints' && pe[f] !== le[f]) out.push(`${what} ${key}: endpoint ${id}: ${LABELS[f]} live ${le[f]} planned ${pe[f]}`);
      }
    }
    // Zone hints are compared per group, as how many endpoints carry each hint: which endpoints
    // a zone gets depends on the hints the slices had before (upstream keeps them where it can,
    // and so does the live hints service), so a plan from scratch may pick others, equally right.
    const lh = hintCounts(l);
    const ph = hintCounts(p);
    if (lh !== ph) out.push(`${what} ${key}: zone hints live ${lh || 'none'} planned ${ph || 'none'}`);
  }
  return out;
}

/** How many endpoints of a group carry each zone-hint set, e.g. `[zone-a]×3 [zone-b]×2` ('' when none has hints). */
function hintCounts(g: SemanticGroup): string {
  const n = new Map<string, number>();
  for (const f of g.endpoints.values()) if (f.zoneHints !== '-') n.set(f.zoneHints, (n.get(f.zoneHints) ?? 0) + 1);
  return [...n].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([h, c]) => `${h}×${c}`).join(' ');
}

/** The objects the offline plan reads, as the API server holds them. */
export interface ClusterObjects {
  /** Services, Pods, Nodes, Endpoints and other controllers' EndpointSlices. */
  readonly objects: readonly KubeObject[];
  /** Objects the watcher would dead-letter (invalid), left out like the pipeline leaves them out: `<kind> <key>: <reason>`. */
  readonly skipped: readonly string[];
}

const PATHS: readonly (readonly [Exclude<WatchedKind, 'ServiceExport'>, string])[] = [
  ['Node', '/api/v1/nodes'],
  ['Service', '/api/v1/services'],
  ['Endpoints', '/api/v1/endpoints'],
  ['Pod', '/api/v1/pods'],
  ['EndpointSlice', '/apis/discovery.k8s.io/v1/endpointslices'],
  // No ServiceExports: they change no slice (the mcs service reads them).
];

/**
 * Lists the cluster's objects from the API server at `server` (with @slicemesh/kube's pager, as
 * the watcher's initial list does), each validated and trimmed by the watcher's toDomain;
 * EndpointSlices only when not ours (the same label selector the watcher lists them with).
 */
export async function listClusterObjects(server: string, own: OwnManagers = ownManagers()): Promise<ClusterObjects> {
  const kc = buildKubeConfig({ type: 'server', url: server });
  const objects: KubeObject[] = [];
  const skipped: string[] = [];
  for (const [kind, path] of PATHS) {
    const list = await listRaw(kc, path, kind === 'EndpointSlice' ? { labelSelector: foreignSliceSelector(own) } : {});
    for (const raw of list.items) {
      try {
        objects.push(toDomain(kind, raw) as KubeObject);
      } catch (e) {
        const meta = (raw as { metadata?: { namespace?: string; name?: string } }).metadata;
        skipped.push(`${kind} ${meta?.namespace ?? ''}/${meta?.name ?? '?'}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  return { objects, skipped };
}

export interface PlanSettings {
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
}

export interface PlannedCluster {
  /** Our slices after the plan (created, updated, unchanged), with their hints. */
  readonly own: readonly EndpointSlice[];
  /** Every slice of the cluster after the plan: ours plus the other controllers'. */
  readonly all: readonly EndpointSlice[];
}

/**
 * `slicemesh plan --output slices` (which hints as `slicemesh hints` does) of `objects`: the
 * slices our controllers would write, and the whole cluster's slices after them.
 */
export function planOf(objects: readonly KubeObject[], settings: PlanSettings, own: OwnManagers = ownManagers()): PlannedCluster {
  const plan = planCluster(objects, { ...settings, output: 'slices' }, () => {});
  const ours = [...plan.create, ...plan.update, ...plan.unchanged].filter((s) => isOwnSlice(s.metadata.labels, own));
  const foreign = objects.filter((o): o is EndpointSlice => o.kind === 'EndpointSlice' && !isOwnSlice(o.metadata.labels, own));
  return { own: ours, all: [...foreign, ...ours] };
}

export interface TruthResult {
  readonly ok: boolean;
  /** Services the API server lists. */
  readonly services: number;
  readonly problems: readonly string[];
}

/**
 * The truth check on data already read: the planned slices against the slicer's slices
 * (without hints) and the hinted entries (with hints).
 */
export function compareTruth(planned: readonly EndpointSlice[], live: { readonly slicer: Iterable<EndpointSlice>; readonly hinted: Iterable<EndpointSlice> }, services: number): TruthResult {
  const problems = [
    ...compareSemantic('slicer', semanticSlices(planned, { hints: false }), semanticSlices(live.slicer, { hints: false })),
    ...compareSemantic('hinted', semanticSlices(planned, { hints: true }), semanticSlices(live.hinted, { hints: true })),
  ];
  return { ok: problems.length === 0, services, problems };
}
