// D.2: merging a service's EndpointSlices into the proxy's per-port endpoint lists.

import type { EndpointSlice, IPFamily, Protocol } from '@slicemesh/model';
import { LABEL_SERVICE_NAME, parseIP } from '@slicemesh/model';
import { compareStrings, sortedBy } from './order.ts';

/** One endpoint of one service port, as the proxy sees it after merging. */
export interface EndpointInfo {
  /** `ip:port`, or `[ip]:port` for IPv6; the identity used for de-duplication and ordering. */
  readonly endpoint: string;
  /** Canonical IP text. */
  readonly ip: string;
  readonly port: number;
  /** The endpoint's nodeName equals the proxy's node name. */
  readonly isLocal: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly nodeName: string | null;
  readonly zone: string | null;
  /** hints.forZones names, sorted and unique. */
  readonly zoneHints: readonly string[];
  /** hints.forNodes names, sorted and unique. */
  readonly nodeHints: readonly string[];
}

export interface MergeOptions {
  /** The proxy's node name ('' never matches, so nothing is local). */
  readonly nodeName: string;
  readonly family: IPFamily;
}

/** Key of a slice/service port inside one service: `<portName>/<protocol>`. */
export function portKey(portName: string, protocol: Protocol): string {
  return `${portName}/${protocol}`;
}

/** The `kubernetes.io/service-name` label of a slice, or null when missing or empty. */
export function sliceServiceName(slice: EndpointSlice): string | null {
  const name = slice.metadata.labels?.[LABEL_SERVICE_NAME];
  return name ? name : null;
}

/** Where a merged endpoint came from: indexes into the (ordered) slice list and its endpoints. */
export interface EndpointRef {
  readonly slice: number;
  readonly endpoint: number;
}

export interface MergedEntry {
  readonly info: EndpointInfo;
  /** The copy that won de-duplication. */
  readonly ref: EndpointRef;
}

/**
 * The order in which slices are merged: by name (stable). De-duplication depends on order,
 * and upstream iterates a map; a fixed order makes the winner reproducible everywhere,
 * including from a zone view that holds a subset of each slice.
 */
export function orderSlices(slices: readonly EndpointSlice[]): EndpointSlice[] {
  return sortedBy(slices, (s) => s.metadata.name);
}

const NONE: readonly string[] = Object.freeze([]);

function uniqueSorted(names: readonly { readonly name: string }[] | undefined): readonly string[] {
  if (!names || names.length === 0) return NONE;
  if (names.length === 1) return [names[0]?.name ?? ''];
  return [...new Set(names.map((n) => n.name))].sort(compareStrings);
}

/**
 * Core of D.2 over slices already in merge order. Returns, per port key, the winning copy of
 * every endpoint key (unsorted). `onDuplicate` is told, for every further copy of an endpoint
 * key, one copy seen before, for callers that must know which slice endpoints share an identity.
 */
export function mergeOrderedSlices(
  ordered: readonly EndpointSlice[],
  opts: MergeOptions,
  onDuplicate?: (seen: EndpointRef, copy: EndpointRef) => void,
): Map<string, Map<string, MergedEntry>> {
  const out = new Map<string, Map<string, MergedEntry>>();
  ordered.forEach((slice, si) => {
    if (slice.addressType !== opts.family || sliceServiceName(slice) === null) return;
    const ports: { port: number; group: Map<string, MergedEntry> }[] = [];
    for (const p of slice.ports) {
      // A nil name or a nil/zero port number cannot be matched to a service port.
      if (p.name == null || !p.port) continue;
      const key = portKey(p.name, p.protocol ?? 'TCP');
      let group = out.get(key);
      if (!group) out.set(key, (group = new Map()));
      ports.push({ port: p.port, group });
    }
    if (ports.length === 0) return;
    slice.endpoints.forEach((ep, ei) => {
      const addr = ep.addresses[0];
      if (addr === undefined) return;
      const ip = parseIP(addr);
      if (!ip || ip.family !== opts.family) return;
      const c = ep.conditions;
      const isLocal = opts.nodeName !== '' && ep.nodeName === opts.nodeName;
      const ready = c.ready ?? true;
      const serving = c.serving ?? true;
      const terminating = c.terminating ?? false;
      const nodeName = ep.nodeName ?? null;
      const zone = ep.zone ?? null;
      const zoneHints = uniqueSorted(ep.hints?.forZones);
      const nodeHints = uniqueSorted(ep.hints?.forNodes);
      const host = ip.family === 'IPv6' ? `[${ip.text}]` : ip.text;
      const ref = { slice: si, endpoint: ei };
      for (const { port, group } of ports) {
        const endpoint = `${host}:${port}`;
        const seen = group.get(endpoint);
        if (seen) onDuplicate?.(seen.ref, ref);
        // Keep the first copy unless a later one is not terminating: a live pod that reused
        // an IP beats the terminating pod that held it before.
        if (seen && terminating) continue;
        const info = { endpoint, ip: ip.text, port, isLocal, ready, serving, terminating, nodeName, zone, zoneHints, nodeHints };
        group.set(endpoint, { info, ref });
      }
    });
  });
  return out;
}

/**
 * Merges the EndpointSlices of ONE service for the `family` proxy on node `nodeName`.
 * Returns, per port key `<portName>/<protocol>` (keys in order), the de-duplicated endpoints
 * sorted by `endpoint`. Slices of another address type or without the service-name label,
 * ports without a name or port number, and endpoints without an address of this family are
 * ignored. Ports without any endpoint are left out (as upstream), so no slices, or only
 * empty ones, give an empty map.
 */
export function mergeEndpoints(slices: readonly EndpointSlice[], opts: MergeOptions): Map<string, EndpointInfo[]> {
  const merged = mergeOrderedSlices(orderSlices(slices), opts);
  const out = new Map<string, EndpointInfo[]>();
  for (const key of [...merged.keys()].sort(compareStrings)) {
    const group = merged.get(key);
    if (group && group.size > 0) out.set(key, sortedBy(group.values(), (e) => e.info.endpoint).map((e) => e.info));
  }
  return out;
}
