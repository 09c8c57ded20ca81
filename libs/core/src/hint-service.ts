// The hints step of one service reconcile: the slicer's slices, taken as they are ("unchanged"
// in the controller's terms), get the hints the service's mode asks for, per address type, with
// the long-lived topology cache so enable/disable events and overload re-checks work as
// upstream's (C.2-C.4).

import type { AddressType, EndpointSlice, Service } from '@slicemesh/model';
import { LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import type { HintsDecision, TopologyCache } from '@slicemesh/topology';
import { isSelectorless } from '@slicemesh/slicing';
import { hintsMode, reconcileHints, serviceKey } from '@slicemesh/topology';

export interface HintServiceInput {
  readonly service: Service;
  /** Every stored slice of the service (any address type, any manager). */
  readonly slices: readonly EndpointSlice[];
  /** The service's long-lived cache; this call updates its per-service state. */
  readonly cache: TopologyCache;
  /** The PreferSameTrafficDistribution gate. */
  readonly preferSameTrafficDistribution: boolean;
  /** Only slices managed by this controller (or unlabelled) get hints. Default: the EndpointSlice controller. */
  readonly managedBy?: string;
  /**
   * Treat the Service as one the controller syncs whatever its spec says (the CLI's stand-in
   * for a Service it was not given). Default: decided from the spec (see unmanagedBecause).
   */
  readonly assumeSynced?: boolean;
}

/**
 * Why the EndpointSlice controller does not sync `service` (A.1.2), or null when it does: it
 * syncs only Services with a selector that are not ExternalName. Their existing slices are left
 * as they are: no slicing, no hint changes, no Events.
 */
export function unmanagedBecause(service: Service): string | null {
  if (service.spec.type === 'ExternalName') return 'it is of type ExternalName';
  if (isSelectorless(service)) return 'it has no selector';
  return null;
}

export interface HintServiceOutput {
  /** Every input slice in input order; slices whose hints changed are new objects. */
  readonly slices: readonly EndpointSlice[];
  /** One decision per IP address type that has slices, IPv4 before IPv6. */
  readonly decisions: readonly HintsDecision[];
}

const HINTED_TYPES: readonly AddressType[] = ['IPv4', 'IPv6'];

/**
 * Computes the hinted slices and the decisions for one service.
 * - A Service the controller does not sync (no selector, ExternalName; A.1.2) changes nothing:
 *   its slices come back as they are, with a decision saying why.
 * - Slices of another manager (e.g. mirrored ones) pass through untouched; an address type with
 *   only such slices gets a decision saying so (not enabled, no event).
 * - FQDN slices pass through untouched and get no decision.
 * - An address type without slices gets no decision, and any counts the cache holds for it are
 *   forgotten so it no longer takes part in overload re-checks (C.4).
 * No slices: the input back (empty) and no decisions.
 */
export function hintService(input: HintServiceInput): HintServiceOutput {
  const { service, cache } = input;
  const key = serviceKey(service);
  const skipped = input.assumeSynced === true ? null : unmanagedBecause(service);
  if (skipped !== null) return unsyncedService(input, skipped);
  const managedBy = input.managedBy ?? MANAGED_BY_CONTROLLER;
  const replaced = new Map<string, EndpointSlice>();
  const decisions: HintsDecision[] = [];

  for (const addressType of HINTED_TYPES) {
    const ofType = slicesOfType(input, key, addressType);
    if (ofType === null) continue;
    const eligible = ofType.filter((s) => {
      const owner = s.metadata.labels?.[LABEL_MANAGED_BY];
      return owner === undefined || owner === managedBy;
    });
    if (eligible.length === 0) {
      decisions.push({
        service: key,
        addressType,
        enabled: false,
        mode: hintsMode(service, { preferSameTrafficDistribution: input.preferSameTrafficDistribution }).mode,
        event: null,
        reason: `every ${addressType} slice (${ofType.length}) is managed by another controller than ${managedBy}; only that controller's slices get hints`,
      });
      continue;
    }
    const out = reconcileHints({
      service,
      addressType,
      plan: { create: [], update: [], delete: [], unchanged: eligible },
      cache,
      preferSameTrafficDistribution: input.preferSameTrafficDistribution,
    });
    // Rewritten slices come back in `update` as new objects; names are unique per namespace.
    for (const s of out.plan.update) replaced.set(s.metadata.name, s);
    decisions.push(out.decision);
  }

  return { slices: input.slices.map((s) => replaced.get(s.metadata.name) ?? s), decisions };
}

// A.1.2: the slices of a Service the controller does not sync pass through as they are, with a
// decision per address type that says so (no event: the controller records none).
function unsyncedService(input: HintServiceInput, why: string): HintServiceOutput {
  const key = serviceKey(input.service);
  const mode = hintsMode(input.service, { preferSameTrafficDistribution: input.preferSameTrafficDistribution }).mode;
  const decisions: HintsDecision[] = HINTED_TYPES.filter((t) => input.slices.some((s) => s.addressType === t)).map((addressType) => ({
    service: key,
    addressType,
    enabled: false,
    mode,
    event: null,
    reason: `the EndpointSlice controller does not sync Service ${key} (${why}), so its slices keep the hints they have`,
  }));
  return { slices: input.slices, decisions };
}

/**
 * The input's slices of `addressType`; null when there are none, after making the cache forget
 * the counts it holds for that type, so it no longer takes part in overload re-checks (C.4).
 */
export function slicesOfType(input: Pick<HintServiceInput, 'slices' | 'cache'>, key: string, addressType: AddressType): EndpointSlice[] | null {
  const ofType = input.slices.filter((s) => s.addressType === addressType);
  if (ofType.length > 0) return ofType;
  if (input.cache.hintedCounts(key, addressType) !== undefined) input.cache.removeHints(key, addressType);
  return null;
}
