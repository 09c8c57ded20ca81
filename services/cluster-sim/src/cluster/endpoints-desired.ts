// The Endpoints object the upstream Endpoints controller would write for a Service with a
// selector, from the pods it selects:
// - a pod is included when it has an IP, is not finished, and is not terminating (unless
//   the service publishes not-ready addresses);
// - it is a ready address when the service publishes not-ready addresses or the pod is
//   Ready, otherwise a notReadyAddress;
// - each service port resolves per pod (a named targetPort looks up the container port of
//   that name and protocol; a pod without it is left out of that port);
// - addresses with the same resolved ports share a subset; everything is sorted so the
//   result is stable; over 1000 addresses the rest are dropped and the object is annotated
//   `endpoints.kubernetes.io/over-capacity: truncated`.
// An empty selection yields no subsets.
import type { KubeObj } from '../store/types.ts';
import { isPodReady, isTerminal, isTerminating, nodeNameOf, podIP, specOf } from './pod-status.ts';

type Json = Record<string, unknown>;

export const MAX_ENDPOINT_ADDRESSES = 1000;
export const ANNOTATION_OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';

export interface EndpointPortOut {
  readonly name?: string;
  readonly port: number;
  readonly protocol: string;
  readonly appProtocol?: string;
}

export interface AddressOut {
  readonly ip: string;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly targetRef: { readonly kind: 'Pod'; readonly namespace: string; readonly name: string; readonly uid: string };
}

export interface SubsetOut {
  readonly addresses?: readonly AddressOut[];
  readonly notReadyAddresses?: readonly AddressOut[];
  readonly ports?: readonly EndpointPortOut[];
}

export interface DesiredEndpoints {
  readonly subsets: readonly SubsetOut[];
  readonly truncated: boolean;
}

function resolvePort(pod: KubeObj, target: unknown, protocol: string): number | undefined {
  if (podIndependent(target)) return Number(target);
  if (typeof target !== 'string') return undefined;
  for (const c of (specOf(pod)['containers'] as Json[] | undefined) ?? []) {
    for (const p of (c['ports'] as Json[] | undefined) ?? []) {
      if (p['name'] === target && (p['protocol'] ?? 'TCP') === protocol) return p['containerPort'] as number;
    }
  }
  return undefined;
}

function addressOf(pod: KubeObj, serviceName: string): AddressOut {
  const spec = specOf(pod);
  const node = nodeNameOf(pod);
  const hostname = spec['hostname'] && spec['subdomain'] === serviceName ? String(spec['hostname']) : undefined;
  return {
    ip: podIP(pod)!,
    ...(hostname ? { hostname } : {}),
    ...(node ? { nodeName: node } : {}),
    targetRef: { kind: 'Pod', namespace: pod.metadata.namespace!, name: pod.metadata.name, uid: pod.metadata.uid! },
  };
}

/** A pod that makes it into the Endpoints, before the cap decides whether it is written. */
interface Candidate {
  readonly pod: KubeObj;
  readonly ip: string;
  readonly uid: string;
}

const byAddress = (a: { readonly ip: string; readonly uid: string }, b: { readonly ip: string; readonly uid: string }): number => a.ip.localeCompare(b.ip) || a.uid.localeCompare(b.uid);

/**
 * The `k` first of `list` in byAddress order, sorted: `list.sort(byAddress).slice(0, k)` without
 * sorting everything. A Service of 100k pods would sort them all on every pod change (85-150 ms
 * in the bench process, which also timestamps the pipeline); a heap of the k best so far looks
 * at most pods once.
 */
export function firstK<C extends { readonly ip: string; readonly uid: string }>(list: readonly C[], k: number): C[] {
  if (k <= 0) return [];
  if (list.length <= k) return [...list].sort(byAddress);
  // A max-heap: heap[0] is the worst of the k kept.
  const heap: C[] = [];
  const worse = (i: number, j: number): boolean => byAddress(heap[i]!, heap[j]!) > 0;
  const swap = (i: number, j: number): void => {
    const t = heap[i]!;
    heap[i] = heap[j]!;
    heap[j] = t;
  };
  for (const c of list) {
    if (heap.length < k) {
      heap.push(c);
      for (let i = heap.length - 1; i > 0 && worse(i, (i - 1) >> 1); i = (i - 1) >> 1) swap(i, (i - 1) >> 1);
    } else if (byAddress(c, heap[0]!) < 0) {
      heap[0] = c;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let top = i;
        if (l < k && worse(l, top)) top = l;
        if (r < k && worse(r, top)) top = r;
        if (top === i) break;
        swap(i, top);
        i = top;
      }
    }
  }
  return heap.sort(byAddress);
}

/** A target port every pod resolves alike (a number, or a string of digits). */
function podIndependent(target: unknown): boolean {
  return typeof target === 'number' || (typeof target === 'string' && /^\d+$/.test(target));
}

export function desiredEndpoints(service: KubeObj, pods: readonly KubeObj[]): DesiredEndpoints {
  const spec = specOf(service);
  const publishNotReady = spec['publishNotReadyAddresses'] === true;
  const servicePorts = (spec['ports'] as Json[] | undefined) ?? [];
  const portsOf = (pod: KubeObj): EndpointPortOut[] => {
    const ports: EndpointPortOut[] = [];
    for (const sp of servicePorts) {
      const protocol = String(sp['protocol'] ?? 'TCP');
      const port = resolvePort(pod, sp['targetPort'] ?? sp['port'], protocol);
      if (port === undefined) continue;
      ports.push({
        ...(sp['name'] ? { name: String(sp['name']) } : {}),
        port,
        protocol,
        ...(sp['appProtocol'] ? { appProtocol: String(sp['appProtocol']) } : {}),
      });
    }
    ports.sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.port - b.port || a.protocol.localeCompare(b.protocol));
    return ports;
  };
  // With numeric target ports every pod has the same ports: resolve them once.
  const shared = servicePorts.every((sp) => podIndependent(sp['targetPort'] ?? sp['port'])) && pods.length > 0 ? portsOf(pods[0]!) : undefined;
  const sharedKey = shared === undefined ? undefined : JSON.stringify(shared);
  const groups = new Map<string, { ports: EndpointPortOut[]; ready: Candidate[]; notReady: Candidate[] }>();
  for (const pod of pods) {
    const ip = podIP(pod);
    if (!ip || isTerminal(pod) || (isTerminating(pod) && !publishNotReady)) continue;
    const ports = shared ?? portsOf(pod);
    if (servicePorts.length > 0 && ports.length === 0) continue;
    const key = sharedKey ?? JSON.stringify(ports);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { ports, ready: [], notReady: [] }));
    (publishNotReady || isPodReady(pod) ? group.ready : group.notReady).push({ pod, ip, uid: pod.metadata.uid ?? '' });
  }
  let budget = MAX_ENDPOINT_ADDRESSES;
  let truncated = false;
  const take = (list: Candidate[]): AddressOut[] => {
    const kept = firstK(list, budget);
    budget -= kept.length;
    if (kept.length < list.length) truncated = true;
    return kept.map((c) => addressOf(c.pod, service.metadata.name));
  };
  const ordered = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => g);
  // Ready addresses keep their place before not-ready ones when the cap bites.
  const ready = ordered.map((g) => take(g.ready));
  const notReady = ordered.map((g) => take(g.notReady));
  const subsets = ordered
    .map((g, i): SubsetOut => ({
      ...(ready[i]!.length > 0 ? { addresses: ready[i] } : {}),
      ...(notReady[i]!.length > 0 ? { notReadyAddresses: notReady[i] } : {}),
      ...(g.ports.length > 0 ? { ports: g.ports } : {}),
    }))
    .filter((s) => s.addresses || s.notReadyAddresses);
  return { subsets, truncated };
}
