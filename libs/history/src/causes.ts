// The cluster events behind a change, in plain words, from the object before and after one KUBE
// event: "pod shop/web-7 became Ready on worker-b-2", "node worker-a-1 moved to zone-c". Only
// what the control plane reads is described; anything else is "updated".

import type { EndpointSlice, Endpoints, Node, Pod, Service, ServiceExport } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_MANAGED_BY, LABEL_ZONE } from '@slicemesh/model';
import type { WatchedObject } from '@slicemesh/contracts';

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const ns = (o: { metadata: { namespace?: string; name: string } }): string => `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

function podReady(p: Pod): boolean {
  return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function podIPs(p: Pod): string[] {
  return p.status?.podIPs?.map((x) => x.ip) ?? (p.status?.podIP ? [p.status.podIP] : []);
}

const onNode = (p: Pod): string => (p.spec.nodeName ? ` on ${p.spec.nodeName}` : '');

function labelsText(l: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(l ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? '{}' : entries.map(([k, v]) => `${k}=${v}`).join(',');
}

function describePod(before: Pod | undefined, after: Pod | undefined): string[] {
  const p = (after ?? before) as Pod;
  const name = `pod ${ns(p)}`;
  if (after === undefined) return [`${name} was deleted${onNode(p)}`];
  if (before === undefined) return [`${name} was created${onNode(after)}${podReady(after) ? ' and is Ready' : ''}`];
  const out: string[] = [];
  if (!before.spec.nodeName && after.spec.nodeName) out.push(`${name} was scheduled to ${after.spec.nodeName}`);
  if (!same(podIPs(before), podIPs(after))) out.push(`${name} got IP ${podIPs(after).join(', ') || 'none'}${onNode(after)}`);
  if (podReady(before) !== podReady(after)) out.push(`${name} became ${podReady(after) ? 'Ready' : 'NotReady'}${onNode(after)}`);
  if (!before.metadata.deletionTimestamp && after.metadata.deletionTimestamp) out.push(`${name} started terminating${onNode(after)}`);
  if (!same(before.metadata.labels, after.metadata.labels)) out.push(`${name} labels changed to ${labelsText(after.metadata.labels)}`);
  if (before.status?.phase !== after.status?.phase && after.status?.phase !== undefined) out.push(`${name} phase is now ${after.status.phase}`);
  return out.length > 0 ? out : [`${name} was updated`];
}

const zoneOf = (n: Node): string | undefined => n.metadata.labels?.[LABEL_ZONE];
const nodeReady = (n: Node): boolean => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

function describeNode(before: Node | undefined, after: Node | undefined): string[] {
  const n = (after ?? before) as Node;
  const name = `node ${n.metadata.name}`;
  if (after === undefined) return [`${name} was removed`];
  if (before === undefined) return [`${name} joined${zoneOf(after) ? ` in ${zoneOf(after)}` : ' without a zone'}`];
  const out: string[] = [];
  if (zoneOf(before) !== zoneOf(after)) out.push(zoneOf(after) === undefined ? `${name} lost its zone label (was ${zoneOf(before)})` : `${name} moved to ${zoneOf(after)}${zoneOf(before) ? ` from ${zoneOf(before)}` : ''}`);
  if (nodeReady(before) !== nodeReady(after)) out.push(`${name} became ${nodeReady(after) ? 'Ready' : 'NotReady'}`);
  const cpu = (x: Node): string | undefined => x.status?.allocatable?.['cpu'];
  if (cpu(before) !== cpu(after)) out.push(`${name} allocatable CPU is now ${cpu(after) ?? 'unknown'}`);
  if (Boolean(before.spec?.unschedulable) !== Boolean(after.spec?.unschedulable)) out.push(`${name} was ${after.spec?.unschedulable ? 'cordoned' : 'uncordoned'}`);
  if (out.length === 0 && !same(before.metadata.labels, after.metadata.labels)) out.push(`${name} labels changed`);
  return out.length > 0 ? out : [`${name} was updated`];
}

function describeService(before: Service | undefined, after: Service | undefined): string[] {
  const s = (after ?? before) as Service;
  const name = `service ${ns(s)}`;
  if (after === undefined) return [`${name} was deleted`];
  if (before === undefined) return [`${name} was created`];
  const out: string[] = [];
  const b = before.spec;
  const a = after.spec;
  if (!same(b.selector, a.selector)) out.push(`${name} selector changed to ${a.selector ? labelsText(a.selector) : 'none'}`);
  if (!same(b.ports, a.ports)) out.push(`${name} ports changed`);
  const mode = (x: Service): string | undefined => x.metadata.annotations?.[ANNOTATION_TOPOLOGY_MODE];
  if (mode(before) !== mode(after)) out.push(`${name} topology mode annotation is now ${mode(after) ?? 'unset'}`);
  if (b.trafficDistribution !== a.trafficDistribution) out.push(`${name} trafficDistribution is now ${a.trafficDistribution ?? 'unset'}`);
  if (b.internalTrafficPolicy !== a.internalTrafficPolicy) out.push(`${name} internalTrafficPolicy is now ${a.internalTrafficPolicy ?? 'unset'}`);
  if (b.externalTrafficPolicy !== a.externalTrafficPolicy) out.push(`${name} externalTrafficPolicy is now ${a.externalTrafficPolicy ?? 'unset'}`);
  if (b.type !== a.type) out.push(`${name} type is now ${a.type ?? 'ClusterIP'}`);
  if (Boolean(b.publishNotReadyAddresses) !== Boolean(a.publishNotReadyAddresses)) out.push(`${name} publishNotReadyAddresses is now ${Boolean(a.publishNotReadyAddresses)}`);
  if (out.length === 0 && !same(before.metadata.labels, after.metadata.labels)) out.push(`${name} labels changed to ${labelsText(after.metadata.labels)}`);
  return out.length > 0 ? out : [`${name} was updated`];
}

function describeEndpoints(before: Endpoints | undefined, after: Endpoints | undefined): string[] {
  const e = (after ?? before) as Endpoints;
  const name = `endpoints ${ns(e)}`;
  const count = (x: Endpoints): number => (x.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
  if (after === undefined) return [`${name} was deleted`];
  if (before === undefined) return [`${name} was created with ${count(after)} addresses`];
  return [`${name} was updated (${count(after)} addresses)`];
}

function describeSlice(before: EndpointSlice | undefined, after: EndpointSlice | undefined): string[] {
  const s = (after ?? before) as EndpointSlice;
  const who = s.metadata.labels?.[LABEL_MANAGED_BY] ?? 'no controller';
  const name = `endpointslice ${ns(s)} (managed by ${who})`;
  if (after === undefined) return [`${name} was deleted`];
  if (before === undefined) return [`${name} was created with ${after.endpoints.length} endpoints`];
  return [`${name} was updated (${after.endpoints.length} endpoints)`];
}

/** What changed between `before` and `after` (one of them may be absent), as sentences. */
export function describeChange(before: WatchedObject | undefined, after: WatchedObject | undefined): string[] {
  const kind = (after ?? before)?.kind;
  switch (kind) {
    case 'Pod':
      return describePod(before as Pod | undefined, after as Pod | undefined);
    case 'Node':
      return describeNode(before as Node | undefined, after as Node | undefined);
    case 'Service':
      return describeService(before as Service | undefined, after as Service | undefined);
    case 'Endpoints':
      return describeEndpoints(before as Endpoints | undefined, after as Endpoints | undefined);
    case 'EndpointSlice':
      return describeSlice(before as EndpointSlice | undefined, after as EndpointSlice | undefined);
    case 'ServiceExport': {
      // Exporting changes no slice of this cluster (the mcs service acts on it).
      const meta = ((after ?? before) as ServiceExport).metadata;
      return [`service export ${meta.namespace ?? 'default'}/${meta.name} was ${after === undefined ? 'deleted' : before === undefined ? 'created' : 'updated'}`];
    }
    case undefined:
      return [];
    default: {
      const never: never = kind;
      return [`${String(never)} changed`];
    }
  }
}
