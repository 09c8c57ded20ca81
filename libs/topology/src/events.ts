// The Kubernetes events the hints logic records on a Service. Reasons and message texts are
// upstream's (k8s.io/endpointslice topologycache), so `kubectl describe svc` output and alerts
// written against upstream keep matching.

import type { AddressType, KubeEvent } from '@slicemesh/model';

export const REASON_HINTS_ENABLED = 'TopologyAwareHintsEnabled';
export const REASON_HINTS_DISABLED = 'TopologyAwareHintsDisabled';

export const MSG_NO_ZONE_SPECIFIED = 'One or more endpoints do not have a zone specified';
export const MSG_NO_ALLOCATED_HINTS = 'No hints allocated for zones';
export const MSG_HINTS_ENABLED = 'Topology Aware Hints has been enabled';
export const MSG_HINTS_DISABLED = 'Topology Aware Hints has been disabled';
export const MSG_INSUFFICIENT_NODE_INFO =
  'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes';
export const MSG_NODES_READY_IN_ONE_ZONE = 'Nodes only ready in one zone';
export const MSG_INSUFFICIENT_ENDPOINTS = 'Insufficient number of endpoints';
export const MSG_MIN_EXCEEDS_THRESHOLD =
  'Unable to allocate minimum required endpoints to each zone without exceeding overload threshold';

/** Upstream suffixes every hints event message with the address type it was computed for. */
export function withAddressType(message: string, addressType: AddressType): string {
  return `${message}, addressType: ${addressType}`;
}

/** Warning `TopologyAwareHintsDisabled` with `message` (address type appended). */
export function hintsDisabledEvent(message: string, addressType: AddressType): KubeEvent {
  return { type: 'Warning', reason: REASON_HINTS_DISABLED, message: withAddressType(message, addressType) };
}

/** Normal `TopologyAwareHintsEnabled`, recorded the first time the cache populates hints. */
export function hintsEnabledEvent(addressType: AddressType): KubeEvent {
  return { type: 'Normal', reason: REASON_HINTS_ENABLED, message: withAddressType(MSG_HINTS_ENABLED, addressType) };
}
