// `slicemesh hints`: hints for a snapshot of slices, computed Service by Service by the same
// hintService the hints service runs, as if slicing had left every slice unchanged.

import type { EndpointSlice, Node, Service } from '@slicemesh/model';
import { ANNOTATION_TOPOLOGY_MODE, LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import type { HintsDecision } from '@slicemesh/topology';
import { TopologyCache } from '@slicemesh/topology';
import { hintService } from './hint-service.ts';

export interface HintClusterInput {
  readonly nodes: readonly Node[];
  readonly slices: readonly EndpointSlice[];
  /** The slices' Services; a Service not given is treated as topology-mode: Auto. */
  readonly services?: readonly Service[];
  /** Only slices with this managed-by label (or none) get hints. Default: the EndpointSlice controller's. */
  readonly managedBy?: string;
  /** The PreferSameTrafficDistribution gate; default true (GA). */
  readonly preferSameTrafficDistribution?: boolean;
}

export interface HintClusterOutput {
  /** Every input slice in input order; slices whose hints changed are new objects. */
  readonly slices: EndpointSlice[];
  /** Per Service (namespace/name order), one decision per address type with slices. */
  readonly decisions: HintsDecision[];
}

// A Service with nothing but topology-mode: Auto, standing in for one that was not supplied.
function assumedService(namespace: string, name: string): Service {
  return { kind: 'Service', metadata: { name, namespace, annotations: { [ANNOTATION_TOPOLOGY_MODE]: 'Auto' } }, spec: {} };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Groups `slices` by namespace and `kubernetes.io/service-name` label and hints each group with
 * hintService and one topology cache fed `nodes` (fresh: the first enabled Service records
 * `TopologyAwareHintsEnabled`, none records "disabled"). Slices without the label come back
 * untouched with no decision. A decision says when its Service was assumed, and how many slices
 * of another manager it left alone. Empty input: no slices, no decisions.
 */
export function hintCluster(input: HintClusterInput): HintClusterOutput {
  const managedBy = input.managedBy ?? MANAGED_BY_CONTROLLER;
  const cache = new TopologyCache();
  cache.setNodes(input.nodes);
  const services = new Map((input.services ?? []).map((s) => [`${s.metadata.namespace ?? 'default'}/${s.metadata.name}`, s]));
  const groups = new Map<string, EndpointSlice[]>();
  for (const slice of input.slices) {
    const name = slice.metadata.labels?.[LABEL_SERVICE_NAME];
    if (name === undefined || name === '') continue;
    const key = `${slice.metadata.namespace ?? 'default'}/${name}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [slice]);
    else group.push(slice);
  }
  const replaced = new Map<EndpointSlice, EndpointSlice>();
  const decisions: HintsDecision[] = [];
  for (const key of [...groups.keys()].sort()) {
    const slices = groups.get(key) ?? [];
    const i = key.indexOf('/');
    const given = services.get(key);
    const service = given ?? assumedService(key.slice(0, i), key.slice(i + 1));
    const assumed = given === undefined ? `Service ${key} was not supplied, so it is treated as annotated ${ANNOTATION_TOPOLOGY_MODE}: Auto; ` : '';
    const out = hintService({ service, slices, cache, managedBy, preferSameTrafficDistribution: input.preferSameTrafficDistribution ?? true, assumeSynced: given === undefined });
    slices.forEach((s, k) => {
      const after = out.slices[k];
      if (after !== undefined && after !== s) replaced.set(s, after);
    });
    for (const d of out.decisions) {
      const ofType = slices.filter((s) => s.addressType === d.addressType);
      const foreign = ofType.filter((s) => {
        const owner = s.metadata.labels?.[LABEL_MANAGED_BY];
        return owner !== undefined && owner !== managedBy;
      }).length;
      const suffix = foreign > 0 && foreign < ofType.length ? `; ${plural(foreign, 'slice')} managed by another controller left untouched` : '';
      decisions.push({ ...d, service: key, reason: `${assumed}${d.reason}${suffix}` });
    }
  }
  return { slices: input.slices.map((s) => replaced.get(s) ?? s), decisions };
}
