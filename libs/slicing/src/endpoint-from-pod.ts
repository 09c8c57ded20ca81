// One pod -> one endpoint per address type (A.2.4, A.2.5, A.3, A.4).

import type { Endpoint, EndpointConditions, IPFamily, Node, ObjectReference, Pod, Service } from '@slicemesh/model';
import { LABEL_ZONE, parseIP } from '@slicemesh/model';
import { isCanonicalV4 } from './ipv4-text.ts';
import { namespaceOf } from './selector.ts';

/** A.3.1, A.3.2: not terminal (Succeeded/Failed) and has `podIP` or some `podIPs`. Terminating pods stay. */
export function shouldPodBeInEndpoints(pod: Pod): boolean {
  const st = pod.status;
  if (st?.phase === 'Succeeded' || st?.phase === 'Failed') return false;
  return (st?.podIP ?? '') !== '' || (st?.podIPs?.length ?? 0) > 0;
}

/** The pod has condition `Ready=True`. */
export function isPodReady(pod: Pod): boolean {
  // A plain loop: this runs once per new pod object, and a callback would be one more
  // allocation each time.
  for (const c of pod.status?.conditions ?? []) {
    if (c.type === 'Ready' && c.status === 'True') return true;
  }
  return false;
}

/** A.4.7: hostname is published only with a matching subdomain in the Service's namespace. */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  const h = pod.spec.hostname ?? '';
  return h !== '' && pod.spec.subdomain === service.metadata.name && namespaceOf(pod.metadata) === namespaceOf(service.metadata);
}

/** Family and canonical text of one pod IP (A.2.4); null when it is not an IP address. */
export function canonicalPodIP(ip: string): { readonly family: IPFamily; readonly text: string } | null {
  if (isCanonicalV4(ip)) return { family: 'IPv4', text: ip };
  const parsed = parseIP(ip);
  return parsed ? { family: parsed.family, text: parsed.text } : null;
}

/** Canonical addresses of `status.podIPs` split by family (A.2.4). Unparseable entries are skipped. */
export function podAddressesByFamily(pod: Pod): { readonly IPv4: string[]; readonly IPv6: string[] } {
  const out = { IPv4: [] as string[], IPv6: [] as string[] };
  for (const entry of pod.status?.podIPs ?? []) {
    const c = canonicalPodIP(entry.ip);
    if (c) out[c.family].push(c.text);
  }
  return out;
}

/**
 * An endpoint built from a pod. It is a class only so the planner can attach a private,
 * invisible link to its bookkeeping (see endpoint-cache.ts); JSON, spreading and equality see a
 * plain Endpoint. Absent optional fields are not own properties.
 */
export class PodEndpoint implements Endpoint {
  readonly addresses: readonly string[];
  readonly conditions: EndpointConditions;
  declare readonly hostname?: string;
  declare readonly targetRef?: ObjectReference;
  declare readonly nodeName?: string;
  declare readonly zone?: string;
  #link: unknown = null;

  constructor(
    addresses: readonly string[],
    conditions: EndpointConditions,
    hostname: string | undefined,
    targetRef: ObjectReference,
    nodeName: string | undefined,
    zone: string | undefined,
  ) {
    this.addresses = addresses;
    this.conditions = conditions;
    const self = this as { -readonly [K in keyof Endpoint]: Endpoint[K] };
    if (hostname !== undefined) self.hostname = hostname;
    self.targetRef = targetRef;
    if (nodeName !== undefined) self.nodeName = nodeName;
    if (zone !== undefined) self.zone = zone;
  }

  /** The private link of an endpoint built here, or null for any other endpoint. */
  static linkOf(ep: Endpoint): unknown {
    return ep instanceof PodEndpoint ? ep.#link : null;
  }

  /** Sets the private link (once, right after construction). */
  static setLink(ep: PodEndpoint, link: unknown): void {
    ep.#link = link;
  }
}

// The eight possible condition triples, shared (and frozen) rather than one object per endpoint:
// a Service with 100k pods would otherwise keep 100k identical small objects alive.
const CONDITIONS: readonly EndpointConditions[] = Array.from({ length: 8 }, (_, i) =>
  Object.freeze({ ready: (i & 4) !== 0, serving: (i & 2) !== 0, terminating: (i & 1) !== 0 }),
);

function conditionsOf(ready: boolean, serving: boolean, terminating: boolean): EndpointConditions {
  return CONDITIONS[(ready ? 4 : 0) | (serving ? 2 : 0) | (terminating ? 1 : 0)] as EndpointConditions;
}

/**
 * The endpoint for a pod with the given addresses (A.4): all three conditions set,
 * targetRef without resourceVersion, nodeName/zone/hostname only when known. `node` is
 * undefined when the node is not known (no zone then). The conditions object is shared
 * between endpoints and frozen.
 */
export function endpointForPod(pod: Pod, node: Node | undefined, service: Service, addresses: readonly string[]): PodEndpoint {
  const serving = isPodReady(pod);
  const terminating = pod.metadata.deletionTimestamp != null;
  const ready = service.spec.publishNotReadyAddresses === true || (serving && !terminating);
  const nodeName = pod.spec.nodeName ?? '';
  const zone = node?.metadata.labels?.[LABEL_ZONE] ?? '';
  return new PodEndpoint(
    addresses,
    conditionsOf(ready, serving, terminating),
    shouldSetHostname(pod, service) ? pod.spec.hostname : undefined,
    { kind: 'Pod', namespace: namespaceOf(pod.metadata), name: pod.metadata.name, uid: pod.metadata.uid ?? '' },
    nodeName !== '' ? nodeName : undefined,
    zone !== '' ? zone : undefined,
  );
}

/** The pod's endpoint for one family; its `addresses` are empty when the pod has no IP of that family (A.2.5). */
export function endpointFromPod(pod: Pod, node: Node | undefined, service: Service, family: IPFamily): Endpoint {
  return endpointForPod(pod, node, service, podAddressesByFamily(pod)[family]);
}
