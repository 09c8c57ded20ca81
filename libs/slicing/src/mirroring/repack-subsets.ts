// Canonical form of Endpoints subsets (B.2.1), as the mirroring controller computes it before
// mapping subsets to slices: every port is mapped to the set of addresses serving it, and ports
// served by exactly the same addresses (with the same readiness) end up in one subset.

import type { EndpointAddress, EndpointPort, EndpointSlicePort, EndpointSubset } from '@slicemesh/model';
import { canonicalPorts, portKey, portSetKey } from './mirror-ports.ts';

export interface RepackedSubset {
  /** Normalised ports (protocol defaulted to TCP, name to ""), de-duplicated, in key order. */
  readonly ports: readonly EndpointSlicePort[];
  /** Ready addresses, sorted by IP text then targetRef uid. */
  readonly addresses: readonly EndpointAddress[];
  readonly notReadyAddresses: readonly EndpointAddress[];
}

// Addresses listed under a subset without ports are kept under this stand-in port, which never
// appears in the output (so they yield a port-less subset unless their set matches a real port).
const NO_PORT = '<none>';

/** Two entries are the same address when IP text and targetRef uid match (not canonical IP). */
function addressKey(a: EndpointAddress): string {
  return JSON.stringify([a.ip, a.targetRef?.uid ?? '']);
}

function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const ua = a.targetRef?.uid ?? '';
  const ub = b.targetRef?.uid ?? '';
  return ua < ub ? -1 : ua > ub ? 1 : 0;
}

interface PortEntry {
  readonly port: EndpointPort | null;
  /** address key -> ready; not-ready wins when an address is listed both ways for a port. */
  readonly ready: Map<string, boolean>;
}

/**
 * Repacks subsets into canonical form: addresses de-duplicated by (IP, targetRef uid) keeping
 * the first entry seen; each subset holds the ports that share one identical address set.
 * Subsets are ordered by port set. Returns `[]` for no subsets or when no subset has an address
 * (ports without addresses vanish).
 */
export function repackSubsets(subsets: readonly EndpointSubset[] | undefined): RepackedSubset[] {
  const firstSeen = new Map<string, EndpointAddress>();
  const byPort = new Map<string, PortEntry>();

  const note = (key: string, port: EndpointPort | null, a: EndpointAddress, ready: boolean): void => {
    const ak = addressKey(a);
    if (!firstSeen.has(ak)) firstSeen.set(ak, a);
    let entry = byPort.get(key);
    if (!entry) {
      entry = { port, ready: new Map() };
      byPort.set(key, entry);
    }
    const was = entry.ready.get(ak);
    entry.ready.set(ak, was === undefined ? ready : was && ready);
  };

  for (const subset of subsets ?? []) {
    const ports = subset.ports ?? [];
    const targets: [string, EndpointPort | null][] = ports.length === 0 ? [[NO_PORT, null]] : ports.map((p) => [portKey(p), p]);
    for (const [key, port] of targets) {
      for (const a of subset.addresses ?? []) note(key, port, a, true);
      for (const a of subset.notReadyAddresses ?? []) note(key, port, a, false);
    }
  }

  // Group ports whose address->readiness maps are identical.
  const groups = new Map<string, { ready: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const entry of byPort.values()) {
    const setKey = [...entry.ready.entries()]
      .map(([k, r]) => `${k}=${r}`)
      .sort()
      .join('|');
    let g = groups.get(setKey);
    if (!g) {
      g = { ready: entry.ready, ports: [] };
      groups.set(setKey, g);
    }
    if (entry.port) g.ports.push(entry.port);
  }

  const out: RepackedSubset[] = [];
  for (const g of groups.values()) {
    const ready: EndpointAddress[] = [];
    const notReady: EndpointAddress[] = [];
    for (const [k, r] of g.ready) {
      const a = firstSeen.get(k);
      if (a) (r ? ready : notReady).push(a);
    }
    out.push({ ports: canonicalPorts(g.ports), addresses: ready.sort(compareAddresses), notReadyAddresses: notReady.sort(compareAddresses) });
  }
  const keyOf = (s: RepackedSubset): string => portSetKey(s.ports);
  return out.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}
