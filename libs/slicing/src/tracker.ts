// Stale-informer protection (A.11): remember the generation of every slice this controller
// wrote, so a listing that predates our own writes is recognised and never acted upon.

import type { EndpointSlice, Service } from '@slicemesh/model';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, MANAGED_BY_CONTROLLER } from '@slicemesh/model';
import { namespaceOf } from './selector.ts';

/** Sentinel generation: we deleted this slice and wait for the deletion to show up. */
export const DELETION_EXPECTED = -1;

/** A sync saw slices older than our own writes; retry later with backoff (metric label `stale`). */
export class StaleInformerCacheError extends Error {
  override readonly name = 'StaleInformerCacheError';
  constructor(readonly service: string) {
    super(`EndpointSlice informer cache is out of date for Service ${service}`);
  }
}

function sliceId(slice: EndpointSlice): string {
  // Slices from a real API server always have a uid; hand-written ones fall back to the name.
  return slice.metadata.uid ?? `name:${slice.metadata.name}`;
}

/** `<namespace>/<service-name label>`, or null when the slice has no service-name label. */
export function sliceServiceKey(slice: EndpointSlice): string | null {
  const svc = slice.metadata.labels?.[LABEL_SERVICE_NAME] ?? '';
  return svc === '' ? null : `${namespaceOf(slice.metadata)}/${svc}`;
}

/**
 * Per Service: slice uid -> generation we wrote, or DELETION_EXPECTED. Pure state; the caller
 * feeds it the objects returned by its writes and the informer events it sees.
 */
export class EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, number>>();

  constructor(private readonly managedBy: string = MANAGED_BY_CONTROLLER) {}

  private gens(slice: EndpointSlice, create: boolean): Map<string, number> | undefined {
    const key = sliceServiceKey(slice);
    if (key === null) return undefined;
    let g = this.byService.get(key);
    if (!g && create) {
      g = new Map();
      this.byService.set(key, g);
    }
    return g;
  }

  /** The slice is tracked (written or expected deleted). */
  has(slice: EndpointSlice): boolean {
    return this.gens(slice, false)?.has(sliceId(slice)) ?? false;
  }

  /** Untracked, or its generation is newer than the one we wrote (A.11.3). */
  shouldSync(slice: EndpointSlice): boolean {
    const g = this.gens(slice, false)?.get(sliceId(slice));
    return g === undefined || (slice.metadata.generation ?? 0) > g;
  }

  /**
   * A.11.2: true when a listed slice is older than we wrote, a slice we deleted is still
   * listed, or a slice we wrote is missing. False for an untracked Service (nothing to compare).
   */
  staleSlices(service: Service, slices: readonly EndpointSlice[]): boolean {
    const gens = this.byService.get(`${namespaceOf(service.metadata)}/${service.metadata.name}`);
    if (!gens) return false;
    const listed = new Set<string>();
    for (const s of slices) {
      const id = sliceId(s);
      listed.add(id);
      const g = gens.get(id);
      if (g !== undefined && (g === DELETION_EXPECTED || g > (s.metadata.generation ?? 0))) return true;
    }
    for (const [id, g] of gens) {
      if (g !== DELETION_EXPECTED && !listed.has(id)) return true;
    }
    return false;
  }

  /** Records a slice as written with its (server-assigned) generation. */
  update(slice: EndpointSlice): void {
    this.gens(slice, true)?.set(sliceId(slice), slice.metadata.generation ?? 0);
  }

  /** Records that we deleted the slice (A.11.1). */
  expectDeletion(slice: EndpointSlice): void {
    this.gens(slice, true)?.set(sliceId(slice), DELETION_EXPECTED);
  }

  /** Forgets the slice; true when the deletion was expected or the slice was not tracked. */
  handleDeletion(slice: EndpointSlice): boolean {
    const gens = this.gens(slice, false);
    if (!gens) return true;
    const id = sliceId(slice);
    const g = gens.get(id);
    gens.delete(id);
    return g === undefined || g === DELETION_EXPECTED;
  }

  /** Forgets a Service entirely (A.11.5). */
  deleteService(namespace: string, name: string): void {
    this.byService.delete(`${namespace}/${name}`);
  }

  /** The slice carries this controller's managed-by label. */
  managedByUs(slice: EndpointSlice): boolean {
    return slice.metadata.labels?.[LABEL_MANAGED_BY] === this.managedBy;
  }

  /** A.11.3: Services to requeue for a slice add event (none or one key). */
  servicesForSliceAdd(slice: EndpointSlice): string[] {
    const key = sliceServiceKey(slice);
    return key !== null && this.managedByUs(slice) && this.shouldSync(slice) ? [key] : [];
  }

  /**
   * A.11.3: Services to requeue for a slice update. A service-name label change requeues the
   * new and the old Service; a managed-by change in either direction requeues; otherwise only a
   * managed slice with a newer generation than tracked. Sorted, without duplicates.
   */
  servicesForSliceUpdate(prev: EndpointSlice, cur: EndpointSlice): string[] {
    const keys = new Set<string>();
    const add = (s: EndpointSlice): void => {
      const k = sliceServiceKey(s);
      if (k !== null) keys.add(k);
    };
    if ((prev.metadata.labels?.[LABEL_SERVICE_NAME] ?? '') !== (cur.metadata.labels?.[LABEL_SERVICE_NAME] ?? '')) {
      add(cur);
      add(prev);
    } else if (this.managedByUs(prev) !== this.managedByUs(cur) || (this.managedByUs(cur) && this.shouldSync(cur))) {
      add(cur);
    }
    return [...keys].sort();
  }

  /** A.11.4: requeue only for a managed slice we tracked and did not expect to be deleted. Forgets it. */
  servicesForSliceDelete(slice: EndpointSlice): string[] {
    if (!this.managedByUs(slice) || !this.has(slice)) return [];
    const expected = this.handleDeletion(slice);
    const key = sliceServiceKey(slice);
    return expected || key === null ? [] : [key];
  }
}

/** Throws StaleInformerCacheError when `slices` is a stale view for the Service (A.11.2). */
export function assertSlicesFresh(tracker: EndpointSliceTracker, service: Service, slices: readonly EndpointSlice[]): void {
  if (tracker.staleSlices(service, slices)) throw new StaleInformerCacheError(`${namespaceOf(service.metadata)}/${service.metadata.name}`);
}
