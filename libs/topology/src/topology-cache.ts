// The hints service's memory between reconciles (upstream `TopologyCache`): the node CPU
// distribution, and per service the hinted endpoint counts by zone that the annotation path
// last produced. Pure and synchronous: callers own concurrency and persistence.

import type { AddressType, Node } from '@slicemesh/model';
import type { AllocationOutcome } from './allocation.ts';
import { computeAllocations, overloadReason } from './allocation.ts';
import type { CpuDistribution, ZoneRatios } from './cpu-distribution.ts';
import { nodeCpuDistribution } from './cpu-distribution.ts';

/** A service whose cached hints no longer fit the node distribution (C.4). */
export interface OverloadedService {
  readonly service: string;
  readonly addressType: AddressType;
  readonly reason: string;
}

const NO_NODES_YET: CpuDistribution = { ratios: null, reason: 'no node information has reached the topology cache yet' };

export class TopologyCache {
  #distribution: CpuDistribution = NO_NODES_YET;
  #nodesSeen = false;
  readonly #hintedByService = new Map<string, Map<AddressType, ReadonlyMap<string, number>>>();
  /** Services that had cache-populated hints (upstream tracks this per service, not per family). */
  readonly #populated = new Set<string>();

  /**
   * Recomputes the zone CPU distribution (C.1) from the full current node list and returns it.
   * Follow with `overloadedServices()` to find services to requeue (A.12.5, C.4).
   */
  setNodes(nodes: readonly Node[]): CpuDistribution {
    this.#distribution = nodeCpuDistribution(nodes);
    this.#nodesSeen = true;
    return this.#distribution;
  }

  /** The current distribution; `ratios: null` before the first `setNodes`. */
  get distribution(): CpuDistribution {
    return this.#distribution;
  }

  /** C.3.1/C.3.2 allocations for `readyEndpoints` under the current distribution. */
  allocate(readyEndpoints: number): AllocationOutcome {
    const ratios: ZoneRatios | null | undefined = this.#nodesSeen ? this.#distribution.ratios : undefined;
    return computeAllocations(ratios, readyEndpoints, this.#distribution.reason);
  }

  /** C.4: service keys ("ns/name") whose cached allocation is now overloaded, sorted. */
  overloadedServices(): string[] {
    return [...new Set(this.overloadedServicesWithReasons().map((o) => o.service))];
  }

  /** C.4 with the reason per (service, address type), sorted by service then address type. */
  overloadedServicesWithReasons(): OverloadedService[] {
    const ratios = this.#distribution.ratios;
    const out: OverloadedService[] = [];
    for (const service of [...this.#hintedByService.keys()].sort()) {
      const byType = this.#hintedByService.get(service);
      if (byType === undefined) continue;
      for (const addressType of [...byType.keys()].sort()) {
        const counts = byType.get(addressType);
        const reason = counts === undefined ? null : overloadReason(counts, ratios);
        if (reason !== null) out.push({ service, addressType, reason });
      }
    }
    return out;
  }

  /** Records the hinted counts by zone for a service/address type and marks hints populated. */
  setHints(serviceKey: string, addressType: AddressType, hintedByZone: ReadonlyMap<string, number>): void {
    let byType = this.#hintedByService.get(serviceKey);
    if (byType === undefined) {
      byType = new Map();
      this.#hintedByService.set(serviceKey, byType);
    }
    byType.set(addressType, new Map(hintedByZone));
    this.#populated.add(serviceKey);
  }

  /**
   * Forgets one address type's counts and clears the service's populated mark (for every
   * address type, as upstream does), so the next successful allocation emits "enabled" again.
   */
  removeHints(serviceKey: string, addressType: AddressType): void {
    const byType = this.#hintedByService.get(serviceKey);
    byType?.delete(addressType);
    if (byType !== undefined && byType.size === 0) this.#hintedByService.delete(serviceKey);
    this.#populated.delete(serviceKey);
  }

  /** Forget a service (deleted). */
  removeService(serviceKey: string): void {
    this.#hintedByService.delete(serviceKey);
    this.#populated.delete(serviceKey);
  }

  /** Whether the annotation path populated hints for the service and has not removed them since. */
  hasPopulatedHints(serviceKey: string): boolean {
    return this.#populated.has(serviceKey);
  }

  /** The cached hinted counts by zone, or undefined when none are cached. */
  hintedCounts(serviceKey: string, addressType: AddressType): ReadonlyMap<string, number> | undefined {
    return this.#hintedByService.get(serviceKey)?.get(addressType);
  }
}
