// The pure heart of one reconcile: the view of a Service in, its final slice plan out. The
// live slicer, the replay and the CLI all call planService, so they compute slices the same way.

import type { EndpointSlice, Endpoints, KubeEvent, Node, Pod, Service, SlicePlan } from '@slicemesh/model';
import { DEFAULT_MAX_ENDPOINTS_PER_SLICE, LABEL_MANAGED_BY, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import type { ListChanges, PlanSlicesInput } from '@slicemesh/slicing';
import { EMPTY_PLAN, finalizePlan, isSelectorless, planSlices, reconcileMirroring } from '@slicemesh/slicing';

/** Everything one reconcile of `namespace/name` reads. */
export interface ServiceView {
  readonly namespace: string;
  readonly name: string;
  /** undefined when the Service does not exist (or is deleted). */
  readonly service: Service | undefined;
  /** The same-named Endpoints (mirroring input); undefined when absent. */
  readonly endpoints: Endpoints | undefined;
  /** The live pods the Service's selector picks (A.1.1), sorted by name (serviceView gives them). */
  readonly pods: readonly Pod[];
  /** How `pods` changed since earlier reconciles (the projection's list); optional. */
  readonly podChanges?: ListChanges;
  readonly nodes: ReadonlyMap<string, Node>;
  /** Slices labelled with this Service's name, every managed-by value. */
  readonly slices: readonly EndpointSlice[];
  /** Names new slices must avoid besides `slices` (other slices of the namespace). */
  readonly takenNames: readonly string[];
}

/**
 * The settings a reconcile runs with. Recorded with every reconcile, so a replay plans with what
 * live used.
 */
export interface ReconcileSettings {
  readonly managedBy: string;
  readonly maxEndpointsPerSlice: number;
}

export interface PlanOptions extends ReconcileSettings {
  /**
   * The trigger time (A.10) for a Service with a selector and its selected pods; null removes
   * the annotation. Called at most once per plan.
   */
  readonly triggerTime: (service: Service, selectedPods: readonly Pod[], podChanges?: ListChanges) => string | null;
}

export type PlanMode =
  /** The EndpointSlice reconciler ran (Service with a selector). */
  | 'selector'
  /** The Service has no selector (or is ExternalName): only mirroring can give it slices. */
  | 'mirroring'
  /** The Service is gone: its slices are deleted, as garbage collection would. */
  | 'absent';

export interface ServicePlan {
  /** Final: recycled and named. `unchanged` lists slices left alone. */
  readonly plan: SlicePlan;
  readonly mode: PlanMode;
  /** Non-fatal problems (A.3.4 pod on an unknown node): write the plan, retry with backoff. */
  readonly errors: readonly string[];
  /** Warnings mirroring would record on the Endpoints (B.2.5, B.2.6). */
  readonly events: readonly KubeEvent[];
}

function concat(a: SlicePlan, b: SlicePlan): SlicePlan {
  return { create: [...a.create, ...b.create], update: [...a.update, ...b.update], delete: [...a.delete, ...b.delete], unchanged: [...a.unchanged, ...b.unchanged] };
}

// finalizePlan only reads the names of the slices it must avoid.
function nameOnly(name: string): EndpointSlice {
  return { kind: 'EndpointSlice', metadata: { name }, addressType: 'IPv4', endpoints: [], ports: [] };
}

/**
 * Plans one Service key:
 * - Service with a selector (not ExternalName): its selected pods → planSlices → finalizePlan (A);
 *   mirrored slices of the name are deleted (B.1.4). Hints are not computed here: the hints
 *   service adds them downstream.
 * - Service without a selector, or ExternalName: reconcileMirroring with the same-named
 *   Endpoints (B); slices of the EndpointSlice controller are left alone (A.1.2).
 * - No Service: every slice of the name managed by `managedBy` or by mirroring is deleted
 *   (A.1.3: upstream's garbage collector does this through ownerReferences).
 * With no slices, pods or Endpoints the plan is empty (or a placeholder, A.7.4).
 */
export function planService(view: ServiceView, opts: PlanOptions): ServicePlan {
  const mirroring = reconcileMirroring({ endpoints: view.endpoints ?? null, service: view.service ?? null, existingSlices: view.slices });
  const mirrorEvents = mirroring.mirrored ? mirroring.events : [];
  const service = view.service;
  if (service === undefined) {
    const ours = view.slices.filter((s) => s.metadata.labels?.[LABEL_MANAGED_BY] === opts.managedBy);
    return { plan: concat({ ...EMPTY_PLAN, delete: ours }, mirroring.plan), mode: 'absent', errors: [], events: [] };
  }
  // A.1.2: the same test planSlices applies before doing anything.
  if (service.spec.type === 'ExternalName' || isSelectorless(service)) return { plan: mirroring.plan, mode: 'mirroring', errors: [], events: mirrorEvents };
  const selected = view.pods;

  const triggerTime = opts.triggerTime(service, selected, view.podChanges);
  const result = planSlices({
    service,
    pods: selected,
    ...(view.podChanges !== undefined ? { podChanges: view.podChanges } : {}),
    nodes: view.nodes,
    existingSlices: view.slices,
    maxEndpointsPerSlice: opts.maxEndpointsPerSlice,
    managedBy: opts.managedBy,
    triggerTime,
  });
  const taken = [...view.slices, ...view.takenNames.map(nameOnly)];
  const plan = finalizePlan(result.plan, { service, existingSlices: taken, triggerTime });
  return { plan: concat(plan, mirroring.plan), mode: 'selector', errors: result.errors, events: mirrorEvents };
}

/** True when the plan writes nothing. */
export function isEmptyPlan(plan: SlicePlan): boolean {
  return plan.create.length === 0 && plan.update.length === 0 && plan.delete.length === 0;
}

/** The inputs of one Service's plan given as objects (benchmarks, tests, one-off tools). */
export type PlanObjectsInput = PlanSlicesInput;

/** planService for a Service given as objects rather than read from a ClusterState. */
export function planServiceObjects(i: PlanObjectsInput): ServicePlan {
  const view: ServiceView = {
    namespace: i.service.metadata.namespace ?? 'default',
    name: i.service.metadata.name,
    service: i.service,
    endpoints: undefined,
    pods: i.pods,
    nodes: i.nodes,
    slices: i.existingSlices,
    takenNames: [],
  };
  return planService(view, {
    managedBy: i.managedBy ?? MANAGED_BY_CONTROLLER,
    maxEndpointsPerSlice: i.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    triggerTime: () => i.triggerTime ?? null,
  });
}
