// Shared builders for this package's tests (not exported from the package).

import type { Endpoint, EndpointSlice, Node, Pod, Service } from '@slicemesh/model';
import type { PodOpts, SliceOpts } from '@slicemesh/testing';
import { deepFreeze, makeNode, makePod, makeSlice } from '@slicemesh/testing';
import { endpointFromPod } from './endpoint-from-pod.ts';

/** A unique IPv4 address per index. */
export function ipv4(i: number): string {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

/** Pods `<prefix>-<i>` for i in [from, from+n), each with its own IPv4 address, on node-1. */
export function makePods(n: number, o: { readonly from?: number; readonly prefix?: string; readonly opts?: (i: number) => PodOpts } = {}): Pod[] {
  const from = o.from ?? 0;
  const out: Pod[] = [];
  for (let i = from; i < from + n; i++) out.push(makePod(`${o.prefix ?? 'web'}-${i}`, { ips: [ipv4(i)], ...o.opts?.(i) }));
  return out;
}

/** Frozen node map: node-1 in zone-a, node-2 in zone-b, node-3 without zone. */
export const NODES: ReadonlyMap<string, Node> = deepFreeze(
  new Map([
    ['node-1', makeNode('node-1', { zone: 'zone-a' })],
    ['node-2', makeNode('node-2', { zone: 'zone-b' })],
    ['node-3', makeNode('node-3')],
  ]),
);

/** The endpoints the controller would publish for `pods` (IPv4 unless told). */
export function endpointsOf(pods: readonly Pod[], service: Service, family: 'IPv4' | 'IPv6' = 'IPv4'): Endpoint[] {
  return pods.map((p) => endpointFromPod(p, NODES.get(p.spec.nodeName ?? ''), service, family));
}

/** An existing controller-owned slice holding exactly the desired endpoints of `pods`. */
export function sliceOf(name: string, pods: readonly Pod[], service: Service, o: SliceOpts = {}): EndpointSlice {
  return makeSlice(name, endpointsOf(pods, service, o.addressType === 'IPv6' ? 'IPv6' : 'IPv4'), { service: service.metadata.name, ...o });
}

/** Endpoint counts, largest first. */
export function sizes(slices: readonly EndpointSlice[]): number[] {
  return slices.map((s) => s.endpoints.length).sort((a, b) => b - a);
}

/** Names of slices, sorted. */
export function names(slices: readonly EndpointSlice[]): string[] {
  return slices.map((s) => s.metadata.name).sort();
}

/** Pod names of a slice's endpoints, in slice order. */
export function podNames(slice: EndpointSlice | undefined): string[] {
  return (slice?.endpoints ?? []).map((e) => e.targetRef?.name ?? '');
}
