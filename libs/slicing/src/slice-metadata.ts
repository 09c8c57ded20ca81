// Labels, owner reference and annotations of the slices this controller writes (A.9, A.7.8).

import type { AddressType, Endpoint, EndpointSlice, EndpointSlicePort, OwnerReference, Service } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME, DISCOVERY_API_VERSION, LABEL_HEADLESS, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from '@slicemesh/model';
import { isServiceIPSet } from './address-types.ts';
import { namespaceOf } from './selector.ts';
import { generateNamePrefix } from './slice-name.ts';

/** Labels only this controller sets; the Service's own values for them are ignored (A.9.3). */
export function isReservedLabel(key: string): boolean {
  return key === LABEL_SERVICE_NAME || key === LABEL_MANAGED_BY || key === LABEL_HEADLESS;
}

/**
 * The full label set of a slice written for `service`: the Service's non-reserved labels, the
 * headless label iff the ClusterIP is `None` or empty, service-name and managed-by.
 */
export function sliceLabels(service: Service, managedBy: string): Record<string, string> {
  const out: Record<string, string> = {};
  const svc = service.metadata.labels ?? {};
  for (const k of Object.keys(svc).sort()) {
    if (!isReservedLabel(k)) out[k] = svc[k] ?? '';
  }
  if (!isServiceIPSet(service)) out[LABEL_HEADLESS] = '';
  out[LABEL_SERVICE_NAME] = service.metadata.name;
  out[LABEL_MANAGED_BY] = managedBy;
  return out;
}

/**
 * A.9.4: the slice's non-reserved labels differ from the Service's. The reserved labels
 * (headless included) never count, so a headless/ClusterIP conversion alone writes nothing.
 */
export function labelsDrifted(slice: EndpointSlice, service: Service): boolean {
  const a = slice.metadata.labels ?? {};
  const b = service.metadata.labels ?? {};
  let n = 0;
  for (const k in a) {
    if (isReservedLabel(k)) continue;
    n++;
    if (b[k] !== a[k]) return true;
  }
  for (const k in b) {
    if (!isReservedLabel(k)) n--;
  }
  return n !== 0;
}

/** A.9.2: the controller reference every slice carries. */
export function serviceOwnerReference(service: Service): OwnerReference {
  return { apiVersion: 'v1', kind: 'Service', name: service.metadata.name, uid: service.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
}

/** A.7.5: some ownerReference has apiVersion v1, kind Service and the Service's uid. */
export function ownedBy(slice: EndpointSlice, service: Service): boolean {
  const uid = service.metadata.uid ?? '';
  return (slice.metadata.ownerReferences ?? []).some((o) => o.uid === uid && o.kind === 'Service' && o.apiVersion === 'v1');
}

/**
 * A.7.8: `annotations` with the trigger-time annotation set to `triggerTime`, or removed when
 * it is null/undefined. Returns undefined when nothing is left (the field is then omitted).
 */
export function withTriggerTime(annotations: Readonly<Record<string, string>> | undefined, triggerTime: string | null | undefined): Record<string, string> | undefined {
  const out: Record<string, string> = { ...annotations };
  if (triggerTime != null && triggerTime !== '') out[ANNOTATION_TRIGGER_TIME] = triggerTime;
  else delete out[ANNOTATION_TRIGGER_TIME];
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The slice with the trigger-time annotation applied (A.7.8); other annotations kept. */
export function stampTriggerTime(slice: EndpointSlice, triggerTime: string | null | undefined): EndpointSlice {
  const { annotations: _old, ...meta } = slice.metadata;
  const annotations = withTriggerTime(slice.metadata.annotations, triggerTime);
  return { ...slice, metadata: annotations ? { ...meta, annotations } : meta };
}

export interface NewSliceSpec {
  readonly service: Service;
  readonly addressType: AddressType;
  readonly ports: readonly EndpointSlicePort[];
  readonly endpoints: readonly Endpoint[];
  readonly managedBy: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A to-create slice (A.9): generateName `<service>-`, empty name, controller ownerReference. */
export function newSlice(spec: NewSliceSpec): EndpointSlice {
  const { service } = spec;
  return {
    apiVersion: DISCOVERY_API_VERSION,
    kind: 'EndpointSlice',
    metadata: {
      name: '',
      generateName: generateNamePrefix(service.metadata.name),
      namespace: namespaceOf(service.metadata),
      labels: spec.labels ?? sliceLabels(service, spec.managedBy),
      ownerReferences: [serviceOwnerReference(service)],
    },
    addressType: spec.addressType,
    endpoints: spec.endpoints,
    ports: spec.ports,
  };
}

/** An existing slice rewritten with new endpoints and labels (everything else kept). */
export function rewriteSlice(slice: EndpointSlice, endpoints: readonly Endpoint[], labels: Readonly<Record<string, string>>): EndpointSlice {
  return { ...slice, apiVersion: DISCOVERY_API_VERSION, kind: 'EndpointSlice', metadata: { ...slice.metadata, labels }, endpoints };
}
