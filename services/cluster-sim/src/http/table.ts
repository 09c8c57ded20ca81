// Server-side printing: `kubectl get` asks for a meta.k8s.io Table and prints its columns
// as is. Columns follow what kubectl shows for these kinds against a real cluster.
import { toWire } from '../store/kinds.ts';
import type { KindInfo } from '../store/kinds.ts';
import type { KubeObj } from '../store/types.ts';
import { humanAge, parseTimestamp } from '../time/timestamps.ts';

type Cell = string | number;
type Json = Record<string, unknown>;

interface Column {
  readonly name: string;
  readonly priority: number;
  readonly format?: string;
  readonly description: string;
  readonly cell: (obj: Json, now: number) => Cell;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** True when the Accept header asks for a Table (as `kubectl get` does for human output). */
export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

/** True when the Accept header asks for metadata-only objects (client-go metadata clients). */
export function wantsPartialMetadata(accept: string | undefined): boolean {
  return !!accept && /as=PartialObjectMetadata/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

const get = (obj: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((cur, k) => (cur !== null && typeof cur === 'object' ? (cur as Json)[k] : undefined), obj);

const name: Column = { name: 'Name', priority: 0, format: 'name', description: 'Name must be unique within a namespace.', cell: (o) => String(get(o, 'metadata', 'name') ?? '') };
const age: Column = {
  name: 'Age', priority: 0, description: 'CreationTimestamp of the object.',
  cell: (o, now) => {
    const t = parseTimestamp(get(o, 'metadata', 'creationTimestamp') as string | undefined);
    return t === undefined ? '<unknown>' : humanAge(now - t);
  },
};

function col(title: string, priority: number, cell: Column['cell']): Column {
  return { name: title, priority, description: title, cell };
}

function conditionStatus(obj: Json, type: string): string | undefined {
  const conds = get(obj, 'status', 'conditions');
  return Array.isArray(conds) ? (conds.find((c: Json) => c['type'] === type) as Json | undefined)?.['status'] as string | undefined : undefined;
}

function podColumns(): Column[] {
  return [
    name,
    col('Ready', 0, (o) => {
      const n = (get(o, 'spec', 'containers') as unknown[] | undefined)?.length ?? 0;
      return `${conditionStatus(o, 'Ready') === 'True' ? n : 0}/${n}`;
    }),
    col('Status', 0, (o) => (get(o, 'metadata', 'deletionTimestamp') ? 'Terminating' : String(get(o, 'status', 'reason') ?? get(o, 'status', 'phase') ?? 'Pending'))),
    col('Restarts', 0, () => '0'),
    age,
    col('IP', 1, (o) => String(get(o, 'status', 'podIP') ?? '<none>')),
    col('Node', 1, (o) => String(get(o, 'spec', 'nodeName') ?? '<none>')),
    col('Nominated Node', 1, () => '<none>'),
    col('Readiness Gates', 1, () => '<none>'),
  ];
}

function servicePorts(o: Json): string {
  const ports = (get(o, 'spec', 'ports') as Json[] | undefined) ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${p['port']}${p['nodePort'] ? `:${p['nodePort']}` : ''}/${p['protocol'] ?? 'TCP'}`).join(',');
}

function serviceColumns(): Column[] {
  return [
    name,
    col('Type', 0, (o) => String(get(o, 'spec', 'type') ?? 'ClusterIP')),
    col('Cluster-IP', 0, (o) => String(get(o, 'spec', 'clusterIP') ?? '<none>')),
    col('External-IP', 0, (o) => {
      const ingress = (get(o, 'status', 'loadBalancer', 'ingress') as Json[] | undefined) ?? [];
      const external = [...((get(o, 'spec', 'externalIPs') as string[] | undefined) ?? []), ...ingress.map((i) => String(i['ip'] ?? i['hostname']))];
      if (external.length > 0) return external.join(',');
      if (get(o, 'spec', 'type') === 'LoadBalancer') return '<pending>';
      if (get(o, 'spec', 'type') === 'ExternalName') return String(get(o, 'spec', 'externalName'));
      return '<none>';
    }),
    col('Port(s)', 0, servicePorts),
    age,
    col('Selector', 1, (o) => {
      const sel = get(o, 'spec', 'selector') as Record<string, string> | undefined;
      return sel && Object.keys(sel).length > 0 ? Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(',') : '<none>';
    }),
  ];
}

function nodeColumns(): Column[] {
  return [
    name,
    col('Status', 0, (o) => {
      const ready = conditionStatus(o, 'Ready');
      const base = ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown';
      return get(o, 'spec', 'unschedulable') ? `${base},SchedulingDisabled` : base;
    }),
    col('Roles', 0, (o) => {
      const labels = (get(o, 'metadata', 'labels') as Record<string, string> | undefined) ?? {};
      const roles = Object.keys(labels).filter((k) => k.startsWith('node-role.kubernetes.io/')).map((k) => k.slice('node-role.kubernetes.io/'.length));
      return roles.length > 0 ? roles.sort().join(',') : '<none>';
    }),
    age,
    col('Version', 0, (o) => String(get(o, 'status', 'nodeInfo', 'kubeletVersion') ?? '')),
    col('Internal-IP', 1, (o) => {
      const addrs = (get(o, 'status', 'addresses') as Json[] | undefined) ?? [];
      return String(addrs.find((a) => a['type'] === 'InternalIP')?.['address'] ?? '<none>');
    }),
  ];
}

function endpointsColumns(): Column[] {
  return [
    name,
    col('Endpoints', 0, (o) => {
      const list: string[] = [];
      for (const s of (get(o, 'subsets') as Json[] | undefined) ?? []) {
        const ports = (s['ports'] as Json[] | undefined) ?? [];
        for (const a of (s['addresses'] as Json[] | undefined) ?? []) {
          if (ports.length === 0) list.push(String(a['ip']));
          for (const p of ports) list.push(`${a['ip']}:${p['port']}`);
        }
      }
      if (list.length === 0) return '<none>';
      return list.length > 3 ? `${list.slice(0, 3).join(',')} + ${list.length - 3} more...` : list.join(',');
    }),
    age,
  ];
}

/** The first three values, `a,b,c + N more...` past that, `<unset>` for none (upstream's listWithMoreString). */
function firstThree(values: readonly string[]): string {
  if (values.length > 3) return `${values.slice(0, 3).join(',')} + ${values.length - 3} more...`;
  return values.length === 0 ? '<unset>' : values.join(',');
}

function sliceColumns(): Column[] {
  return [
    name,
    col('AddressType', 0, (o) => String(get(o, 'addressType') ?? '')),
    // A port without a number (all ports) shows its name, or `*`.
    col('Ports', 0, (o) => firstThree(((get(o, 'ports') as Json[] | undefined) ?? []).map((p) => String(p['port'] ?? p['name'] ?? '*')))),
    col('Endpoints', 0, (o) => firstThree(((get(o, 'endpoints') as Json[] | undefined) ?? []).flatMap((e) => (e['addresses'] as string[] | undefined) ?? []))),
    age,
  ];
}

function sinceOrUnknown(value: unknown, now: number): string {
  const t = typeof value === 'string' ? parseTimestamp(value) : undefined;
  return t === undefined ? '<unknown>' : humanAge(now - t);
}

// Upstream's printEvent: new-style events (eventTime, series) and old ones (first/last
// timestamp, count) print alike; the object is `kind/name` in lower case.
function eventColumns(): Column[] {
  const first = (o: Json, now: number): string => sinceOrUnknown(get(o, 'firstTimestamp') ?? get(o, 'eventTime'), now);
  const last = (o: Json, now: number): string => {
    if (get(o, 'series')) return sinceOrUnknown(get(o, 'series', 'lastObservedTime'), now);
    return get(o, 'lastTimestamp') ? sinceOrUnknown(get(o, 'lastTimestamp'), now) : first(o, now);
  };
  const text = (v: unknown): string => (typeof v === 'string' ? v : '');
  return [
    col('Last Seen', 0, last),
    col('Type', 0, (o) => text(get(o, 'type'))),
    col('Reason', 0, (o) => text(get(o, 'reason'))),
    col('Object', 0, (o) => {
      const kind = text(get(o, 'involvedObject', 'kind')).toLowerCase();
      const objName = text(get(o, 'involvedObject', 'name'));
      return objName ? `${kind}/${objName}` : kind;
    }),
    col('Subobject', 1, (o) => text(get(o, 'involvedObject', 'fieldPath'))),
    col('Source', 1, (o) => {
      const component = text(get(o, 'source', 'component')) || text(get(o, 'reportingComponent'));
      const instance = text(get(o, 'source', 'host')) || text(get(o, 'reportingInstance'));
      return instance ? `${component}, ${instance}` : component;
    }),
    col('Message', 0, (o) => text(get(o, 'message')).trim()),
    col('First Seen', 1, first),
    col('Count', 1, (o) => {
      const series = get(o, 'series', 'count');
      if (get(o, 'series')) return typeof series === 'number' ? series : 0;
      const count = get(o, 'count');
      return typeof count === 'number' && count !== 0 ? count : 1;
    }),
    { ...name, priority: 1 },
  ];
}

const COLUMNS: Readonly<Record<string, Column[]>> = {
  Pod: podColumns(),
  Service: serviceColumns(),
  Node: nodeColumns(),
  Endpoints: endpointsColumns(),
  EndpointSlice: sliceColumns(),
  Event: eventColumns(),
  Lease: [name, col('Holder', 0, (o) => String(get(o, 'spec', 'holderIdentity') ?? '')), age],
  Namespace: [name, col('Status', 0, (o) => String(get(o, 'status', 'phase') ?? '')), age],
  // The mcs-api CRD's printer columns.
  ServiceImport: [name, col('Type', 0, (o) => String(get(o, 'spec', 'type') ?? '')), col('IP', 0, (o) => JSON.stringify(get(o, 'spec', 'ips') ?? [])), age],
};

function rowObject(info: KindInfo, obj: KubeObj, include: IncludeObject): Json | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return toWire(info, obj);
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/** A meta.k8s.io/v1 Table of `objects` (ages relative to `now`). */
export function toTable(
  info: KindInfo,
  objects: readonly KubeObj[],
  now: number,
  listMeta: Readonly<Record<string, unknown>>,
  include: IncludeObject = 'Metadata',
): Record<string, unknown> {
  const columns = COLUMNS[info.kind] ?? [name, age];
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns.map((c) => ({ name: c.name, type: 'string', format: c.format ?? '', description: c.description, priority: c.priority })),
    rows: objects.map((obj) => {
      const object = rowObject(info, obj, include);
      return { cells: columns.map((c) => c.cell(obj as Json, now)), ...(object ? { object } : {}) };
    }),
  };
}

/** Metadata-only form of an object (`as=PartialObjectMetadata`). */
export function partialMetadata(obj: KubeObj): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function partialMetadataList(objects: readonly KubeObj[], listMeta: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: listMeta, items: objects.map(partialMetadata) };
}
