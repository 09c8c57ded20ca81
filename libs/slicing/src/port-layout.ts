// Port-mapping groups (A.5) without per-pod port work. A pod's slice ports depend on the pod
// only through the numbers its named target ports resolve to, so pods are keyed by those
// numbers and all pods with the same numbers share one resolved layout (ports, sorted ports,
// port-map key) instead of each building its own list, text and hash.

import type { EndpointSlicePort, Pod, Service, ServicePort } from '@slicemesh/model';
import { portMapKey, sortPorts } from './port-map-key.ts';
import { endpointPortsForPod, findTargetPort } from './target-port.ts';

/** The resolved slice ports shared by the pods of one layout. */
export interface PortLayout {
  /** endpointPortsForPod of every pod with this layout. */
  readonly ports: readonly EndpointSlicePort[];
  /** `ports` in canonical order, as the group's new slices carry them. */
  readonly sorted: readonly EndpointSlicePort[];
  /** portMapKey(ports). */
  readonly key: string;
}

// Frozen: the same arrays end up in the slices of many syncs, so a consumer modifying one
// must fail loudly rather than change what later syncs plan.
function layoutOf(ports: readonly EndpointSlicePort[]): PortLayout {
  for (const p of ports) Object.freeze(p);
  return { ports: Object.freeze(ports), sorted: Object.freeze(sortPorts(ports)), key: portMapKey(ports) };
}

// Bounds the cache for pathological inputs (every pod with its own container port).
const MAX_LAYOUTS = 4096;

// One resolved number as a cache key; undefined for anything that is not a plain number
// (such a pod is resolved on its own, uncached). -0 stays apart from 0 as the ports would.
function part(n: number | null): number | string | undefined {
  if (n === null) return 'none';
  if (typeof n !== 'number') return undefined;
  return Object.is(n, -0) ? '-0' : n;
}

/** The layouts of one `spec.ports` value (compare `ports` by identity to reuse it). */
export class PortLayouts {
  private readonly service: Service;
  readonly ports: Service['spec']['ports'];
  private readonly named: readonly ServicePort[];
  private readonly byResolution = new Map<number | string, PortLayout>();
  private shared: PortLayout | null = null;

  constructor(service: Service) {
    this.service = service;
    this.ports = service.spec.ports;
    this.named = (service.spec.ports ?? []).filter((p) => typeof (p.targetPort ?? p.port) !== 'number');
  }

  /** True when no target port is named: every pod has the same layout (A.5.1). */
  get podIndependent(): boolean {
    return this.named.length === 0;
  }

  /** The layout of `pod`: equal to building it from endpointPortsForPod(service, pod). */
  layoutFor(pod: Pod): PortLayout {
    if (this.named.length === 0) return (this.shared ??= layoutOf(endpointPortsForPod(this.service, pod)));
    const key = this.resolution(pod);
    let layout = key === undefined ? undefined : this.byResolution.get(key);
    if (layout === undefined) {
      layout = layoutOf(endpointPortsForPod(this.service, pod));
      if (key !== undefined) {
        if (this.byResolution.size >= MAX_LAYOUTS) this.byResolution.clear();
        this.byResolution.set(key, layout);
      }
    }
    return layout;
  }

  // The resolved numbers of the named target ports: the number itself for one named port
  // (no string to build), else a joined text.
  private resolution(pod: Pod): number | string | undefined {
    const named = this.named;
    if (named.length === 1) return part(findTargetPort(pod, named[0] as ServicePort));
    let text = '';
    for (const sp of named) {
      const p = part(findTargetPort(pod, sp));
      if (p === undefined) return undefined;
      text += `${p},`;
    }
    return text;
  }
}
