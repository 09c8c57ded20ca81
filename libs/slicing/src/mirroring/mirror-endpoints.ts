// Desired mirrored content for one Endpoints object (B.2): canonical subsets split by address
// family into (port set, family) groups, with the per-subset cap and the two warning events.

import type { Endpoint, EndpointAddress, Endpoints, EndpointSlicePort, IPFamily, KubeEvent } from '@slicemesh/model';
import { parseIP } from '@slicemesh/model';
import { endpointKey } from './endpoint-identity.ts';
import { portSetKey } from './mirror-ports.ts';
import { repackSubsets } from './repack-subsets.ts';

/** One (port set, address family) group: at most one slice holds it (B.2.2, B.2.6). */
export interface MirrorGroup {
  /** `${addressType}/${portKey}`; the sort key of groups and the slice-name origin. */
  readonly key: string;
  readonly addressType: IPFamily;
  /** Order-insensitive key of the port set (see portSetKey). */
  readonly portKey: string;
  readonly ports: readonly EndpointSlicePort[];
  /** Ready addresses first, then not-ready, each in canonical-subset order. */
  readonly endpoints: readonly Endpoint[];
}

export interface DesiredMirror {
  /** Non-empty groups, sorted by key. */
  readonly groups: readonly MirrorGroup[];
  /** Addresses that are not IPs (hostnames, FQDNs, garbage), seen before the cap was hit. */
  readonly invalidAddresses: number;
  /** Every address not mirrored: the invalid ones plus those over the per-subset cap. */
  readonly skippedAddresses: number;
  readonly events: readonly KubeEvent[];
}

export const REASON_INVALID_IP = 'InvalidIPAddress';
export const REASON_TOO_MANY_ADDRESSES = 'TooManyAddressesToMirror';

/** B.2.3: one endpoint per address; only `ready` is set, from the list the address came from. */
function toEndpoint(a: EndpointAddress, ip: string, ready: boolean): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready },
    ...(a.hostname ? { hostname: a.hostname } : {}),
    ...(a.nodeName !== undefined ? { nodeName: a.nodeName } : {}),
    ...(a.targetRef !== undefined ? { targetRef: a.targetRef } : {}),
  };
}

/**
 * Computes the groups an Endpoints object mirrors to. Per canonical subset, ready addresses are
 * taken before not-ready ones until `maxEndpointsPerSubset` valid addresses were taken; the rest
 * are skipped. Events follow upstream: `InvalidIPAddress` when any non-IP address was seen, and
 * `TooManyAddressesToMirror` (counting every skipped address, invalid ones included) when the cap
 * dropped something. No subsets, or only invalid addresses, yield no groups.
 */
export function mirrorEndpoints(endpoints: Endpoints, maxEndpointsPerSubset: number): DesiredMirror {
  const groups = new Map<string, { addressType: IPFamily; portKey: string; ports: readonly EndpointSlicePort[]; eps: Map<string, Endpoint> }>();
  let invalid = 0;
  let skipped = 0;

  for (const subset of repackSubsets(endpoints.subsets)) {
    const candidates: [EndpointAddress, boolean][] = [
      ...subset.addresses.map((a): [EndpointAddress, boolean] => [a, true]),
      ...subset.notReadyAddresses.map((a): [EndpointAddress, boolean] => [a, false]),
    ];
    const pk = portSetKey(subset.ports);
    let taken = 0;
    for (const [a, ready] of candidates) {
      if (taken >= maxEndpointsPerSubset) break;
      const ip = parseIP(a.ip);
      if (!ip) {
        invalid++;
        continue;
      }
      const key = `${ip.family}/${pk}`;
      let g = groups.get(key);
      if (!g) {
        g = { addressType: ip.family, portKey: pk, ports: subset.ports, eps: new Map() };
        groups.set(key, g);
      }
      const ep = toEndpoint(a, ip.text, ready);
      g.eps.set(endpointKey(ep), ep); // same identity twice (e.g. "10.0.0.01" and "10.0.0.1"): last wins
      taken++;
    }
    skipped += candidates.length - taken;
  }

  const events: KubeEvent[] = [];
  if (invalid > 0) {
    events.push({ type: 'Warning', reason: REASON_INVALID_IP, message: `Skipped ${invalid} invalid IP addresses when mirroring to EndpointSlices` });
  }
  if (skipped > invalid) {
    events.push({
      type: 'Warning',
      reason: REASON_TOO_MANY_ADDRESSES,
      message: `A max of ${maxEndpointsPerSubset} addresses can be mirrored to EndpointSlices per Endpoints subset. ${skipped} addresses were skipped`,
    });
  }

  const sorted = [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, g]): MirrorGroup => ({ key, addressType: g.addressType, portKey: g.portKey, ports: g.ports, endpoints: [...g.eps.values()] }));
  return { groups: sorted, invalidAddresses: invalid, skippedAddresses: skipped, events };
}
