import { describe, expect, it } from 'vitest';
import type { AddressType, KubeEvent } from '@slicemesh/model';
import {
  MSG_HINTS_DISABLED,
  MSG_INSUFFICIENT_ENDPOINTS,
  MSG_INSUFFICIENT_NODE_INFO,
  MSG_MIN_EXCEEDS_THRESHOLD,
  MSG_NO_ALLOCATED_HINTS,
  MSG_NO_ZONE_SPECIFIED,
  MSG_NODES_READY_IN_ONE_ZONE,
  hintsDisabledEvent,
  hintsEnabledEvent,
} from './events.ts';

// Upstream's texts, pinned so alerts written against kube-controller-manager events keep matching.
describe('hints events (C.3.1, C.3.4, C.3.7, C.2.3)', () => {
  const W = 'TopologyAwareHintsDisabled';
  const cases: { name: string; got: KubeEvent; want: KubeEvent }[] = [
    {
      name: 'C.3.1 insufficient node information',
      got: hintsDisabledEvent(MSG_INSUFFICIENT_NODE_INFO, 'IPv4'),
      want: { type: 'Warning', reason: W, message: 'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4' },
    },
    { name: 'C.3.1 nodes in one zone', got: hintsDisabledEvent(MSG_NODES_READY_IN_ONE_ZONE, 'IPv6'), want: { type: 'Warning', reason: W, message: 'Nodes only ready in one zone, addressType: IPv6' } },
    {
      name: 'C.3.1 too few endpoints (counts are added by the allocator)',
      got: hintsDisabledEvent(`${MSG_INSUFFICIENT_ENDPOINTS} (2 endpoints, 3 zones)`, 'IPv4'),
      want: { type: 'Warning', reason: W, message: 'Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4' },
    },
    {
      name: 'C.3.1 minimums exceed the overload threshold',
      got: hintsDisabledEvent(`${MSG_MIN_EXCEEDS_THRESHOLD} (4 endpoints, 3 zones)`, 'IPv4'),
      want: { type: 'Warning', reason: W, message: 'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (4 endpoints, 3 zones), addressType: IPv4' },
    },
    { name: 'C.3.4 endpoint without zone', got: hintsDisabledEvent(MSG_NO_ZONE_SPECIFIED, 'IPv4'), want: { type: 'Warning', reason: W, message: 'One or more endpoints do not have a zone specified, addressType: IPv4' } },
    // Unreachable through the allocator (every ready endpoint is counted somewhere), kept like upstream.
    { name: 'C.3.7 nothing allocated', got: hintsDisabledEvent(MSG_NO_ALLOCATED_HINTS, 'IPv6'), want: { type: 'Warning', reason: W, message: 'No hints allocated for zones, addressType: IPv6' } },
    { name: 'C.2.3 annotation path left', got: hintsDisabledEvent(MSG_HINTS_DISABLED, 'IPv4'), want: { type: 'Warning', reason: W, message: 'Topology Aware Hints has been disabled, addressType: IPv4' } },
    ...(['IPv4', 'IPv6'] as AddressType[]).map((at) => ({
      name: `C.3.7 first enabled (${at})`,
      got: hintsEnabledEvent(at),
      want: { type: 'Normal' as const, reason: 'TopologyAwareHintsEnabled', message: `Topology Aware Hints has been enabled, addressType: ${at}` },
    })),
  ];
  for (const tc of cases) it(tc.name, () => expect(tc.got).toEqual(tc.want));
});
