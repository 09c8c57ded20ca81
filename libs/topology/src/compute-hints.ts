// The core of `slicemesh hints`: hints for a snapshot of slices, as the controller would
// compute them if every slice were left unchanged by slicing.

import type { AddressType, EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import type { HintsDecision } from './decision.ts';
import { plural } from './explain-format.ts';
import { hintsMode } from './hints-mode.ts';
import { newHintsWork } from './hints-work.ts';
import { decideHints } from './reconcile-hints.ts';
import { TopologyCache } from './topology-cache.ts';

export interface ComputeHintsInput {
  readonly nodes: readonly Node[];
  readonly slices: readonly EndpointSlice[];
  /** Services by namespace/name; a slice group without its Service is treated as topology-mode: Auto. */
  readonly services?: readonly Service[];
  /** Only slices with this managed-by label (or none) get hints. Default: the EndpointSlice controller's. */
  readonly managedBy?: string;
  /** The PreferSameTrafficDistribution feature gate; default true (GA). */
  readonly preferSameTrafficDistribution?: boolean;
}

export interface ComputeHintsOutput {
  /** Every input slice in input order; slices whose hints changed are new objects. */
  readonly slices: EndpointSlice[];
  /** One decision per (namespace, service, address type) group, sorted by that key. */
  readonly decisions: HintsDecision[];
}

interface Group {
  readonly namespace: string;
  readonly name: string;
  readonly addressType: AddressType;
  readonly eligible: EndpointSlice[];
  foreign: number;
}

/** A Service with nothing but topology-mode: Auto, standing in for one that was not supplied. */
function assumedService(namespace: string, name: string): Service {
  return { kind: 'Service', metadata: { name, namespace, annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } }, spec: {} };
}

/**
 * Groups `slices` by (namespace, `kubernetes.io/service-name` label, addressType), treats every
 * slice as unchanged, and computes hints per group with a fresh topology cache fed `nodes`.
 *
 * Documented choices:
 * - A group whose Service is not in `services` is treated as if the Service had annotation
 *   `service.kubernetes.io/topology-mode: Auto` (the decision says so).
 * - Slices without a service-name label are returned untouched and get no decision.
 * - Slices labelled as managed by another controller (e.g. mirroring) are returned untouched,
 *   as upstream only hints its own slices; a group with only such slices gets a decision
 *   saying so. Slices without a managed-by label are treated as the controller's.
 * - Because the cache is fresh, the first enabled group of a service records
 *   `TopologyAwareHintsEnabled` and none records "has been disabled".
 *
 * Empty input: no slices, no decisions.
 */
export function computeHints(input: ComputeHintsInput): ComputeHintsOutput {
  const managedBy = input.managedBy ?? MANAGED_BY_CONTROLLER;
  const preferSame = input.preferSameTrafficDistribution ?? true;
  const cache = new TopologyCache();
  cache.setNodes(input.nodes);

  const services = new Map<string, Service>();
  for (const svc of input.services ?? []) services.set(`${svc.metadata.namespace ?? ''}/${svc.metadata.name}`, svc);

  const groups = new Map<string, Group>();
  for (const slice of input.slices) {
    const name = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (name === undefined || name === '') continue;
    const namespace = slice.metadata.namespace ?? '';
    const key = `${namespace}\u0000${name}\u0000${slice.addressType}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { namespace, name, addressType: slice.addressType, eligible: [], foreign: 0 };
      groups.set(key, group);
    }
    const owner = slice.metadata.labels?.[LABEL_MANAGED_BY];
    if (owner === undefined || owner === managedBy) group.eligible.push(slice);
    else group.foreign++;
  }

  const replaced = new Map<EndpointSlice, EndpointSlice>();
  const decisions: HintsDecision[] = [];
  for (const key of [...groups.keys()].sort()) {
    const group = groups.get(key);
    if (group === undefined) continue;
    const svcKey = `${group.namespace}/${group.name}`;
    const given = services.get(svcKey);
    const service = given ?? assumedService(group.namespace, group.name);
    const assumed = given === undefined ? `Service ${svcKey} was not supplied, so it is treated as annotated ${ANNOTATION_TOPOLOGY_MODE}: Auto; ` : '';

    if (group.eligible.length === 0) {
      decisions.push({
        service: svcKey,
        addressType: group.addressType,
        enabled: false,
        mode: hintsMode(service, { preferSameTrafficDistribution: preferSame }).mode,
        event: null,
        reason: `${assumed}every slice of this group (${group.foreign}) is managed by another controller than ${managedBy}; only that controller's slices get hints`,
      });
      continue;
    }

    const work = newHintsWork([], [], group.eligible);
    const decision = decideHints(work, {
      service,
      addressType: group.addressType,
      plan: { create: [], update: [], delete: [], unchanged: group.eligible },
      cache,
      preferSameTrafficDistribution: preferSame,
    });
    for (const draft of work.update) replaced.set(draft.original, draft.result());
    const foreign = group.foreign > 0 ? `; ${plural(group.foreign, 'slice')} managed by another controller left untouched` : '';
    decisions.push({ ...decision, reason: `${assumed}${decision.reason}${foreign}` });
  }

  return { slices: input.slices.map((s) => replaced.get(s) ?? s), decisions };
}
