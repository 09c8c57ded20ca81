// Small builders for topology-hint tests: three zones, a topology-aware Service, and slices
// whose endpoints sit one per zone.

import type { Endpoint, EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE } from '@slicemesh/model';
import { makeNode, makeService, makeSlice } from './fixtures.ts';

/** A ready endpoint in `zone` on `node`, with optional zone hints. */
export function ep(ip: string, zone: string | undefined, node: string, o: { ready?: boolean; forZones?: readonly string[] } = {}): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready: o.ready ?? true, serving: o.ready ?? true, terminating: false },
    nodeName: node,
    ...(zone !== undefined ? { zone } : {}),
    ...(o.forZones ? { hints: { forZones: o.forZones.map((name) => ({ name })) } } : {}),
  };
}

/** Three zones a/b/c with one node each (4 CPUs), named n-a, n-b, n-c. */
export function threeZoneNodes(): Node[] {
  return ['a', 'b', 'c'].map((z) => makeNode(`n-${z}`, { zone: `zone-${z}` }));
}

/** Service `web` with topology-mode: Auto. */
export function autoService(name = 'web', namespace = 'default'): Service {
  return makeService(name, { namespace, annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } });
}

/** One slice of `web` with one ready endpoint per zone a/b/c (on n-a/n-b/n-c). */
export function threeZoneSlice(name = 'web-abc', service = 'web'): EndpointSlice {
  return makeSlice(name, [ep('10.0.0.1', 'zone-a', 'n-a'), ep('10.0.0.2', 'zone-b', 'n-b'), ep('10.0.0.3', 'zone-c', 'n-c')], { service });
}
