// Port handling shared by repacking and grouping. Endpoints ports and EndpointSlice ports are
// compared after normalising what the API server would have defaulted (protocol TCP, name "").

import type { EndpointPort, EndpointSlicePort } from '@slicemesh/model';

/** A slice port with the defaulted fields filled in, so equal ports compare equal. */
export function toSlicePort(p: EndpointPort | EndpointSlicePort): EndpointSlicePort {
  return {
    name: p.name ?? '',
    ...(p.port !== undefined ? { port: p.port } : {}),
    protocol: p.protocol ?? 'TCP',
    ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
  };
}

/** Identity of one port: every field takes part, so `http:80` and `web:80` differ. */
export function portKey(p: EndpointPort | EndpointSlicePort): string {
  const n = toSlicePort(p);
  return JSON.stringify([n.name, n.port ?? null, n.protocol, n.appProtocol ?? null]);
}

/**
 * Identity of a port set: order-insensitive and duplicate-insensitive (a set, as upstream's
 * port map key). Returns `[]` for no ports.
 */
export function portSetKey(ports: readonly (EndpointPort | EndpointSlicePort)[]): string {
  const keys = [...new Set(ports.map(portKey))].sort();
  return `[${keys.join(',')}]`;
}

/** Normalised, de-duplicated ports in key order (a stable order for output). */
export function canonicalPorts(ports: readonly (EndpointPort | EndpointSlicePort)[]): EndpointSlicePort[] {
  const byKey = new Map<string, EndpointSlicePort>();
  for (const p of ports) {
    const k = portKey(p);
    if (!byKey.has(k)) byKey.set(k, toSlicePort(p));
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, p]) => p);
}
