// C.1: the share of allocatable CPU each zone holds, which sizes every zone's hint allocation.

import type { Node } from '@slicemesh/model';
import { LABEL_CONTROL_PLANE, LABEL_MASTER, LABEL_ZONE } from '@slicemesh/model';
import { parseCpuMillis } from './cpu-quantity.ts';
import { nameList, percent, plural } from './explain-format.ts';

/** Zone name -> fraction of the cluster's counted allocatable CPU (the values sum to 1). */
export interface ZoneRatios {
  readonly [zone: string]: number;
}

export interface CpuDistribution {
  /** `null` = node information is insufficient for hints; `reason` says why. */
  readonly ratios: ZoneRatios | null;
  readonly reason: string;
  /** Counted millicores per zone (absent when `ratios` is null). */
  readonly cpuMillisByZone?: Readonly<Record<string, number>>;
}

/** Nodes upstream leaves out of the capacity sums whatever the label's value. */
export function isControlPlaneNode(node: Node): boolean {
  const labels = node.metadata.labels;
  return labels !== undefined && (LABEL_CONTROL_PLANE in labels || LABEL_MASTER in labels);
}

/** The first `Ready` condition decides; no such condition means not ready. */
export function isNodeReady(node: Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True';
}

/**
 * Computes zone CPU ratios the way upstream `TopologyCache.SetNodes` does (C.1):
 * control-plane/master nodes and nodes that are not Ready are ignored; one remaining node
 * without a zone label or with zero/missing/unparseable allocatable CPU makes the whole
 * distribution insufficient; fewer than two zones is insufficient too.
 *
 * Returns `{ ratios: null }` for no nodes, no counted nodes, or one zone. Zones are keyed in
 * name order so the result serialises identically for the same nodes in any order.
 *
 * ### Example
 * zone-a 5000m, zone-b 4500m, zone-c 500m -> { 'zone-a': 0.5, 'zone-b': 0.45, 'zone-c': 0.05 }
 */
export function nodeCpuDistribution(nodes: readonly Node[]): CpuDistribution {
  let controlPlane = 0;
  let notReady = 0;
  const noZone: string[] = [];
  const noCpu: string[] = [];
  const millisByZone = new Map<string, number>();
  let total = 0;
  let counted = 0;

  for (const node of nodes) {
    if (isControlPlaneNode(node)) {
      controlPlane++;
      continue;
    }
    if (!isNodeReady(node)) {
      notReady++;
      continue;
    }
    const zone = node.metadata.labels?.[LABEL_ZONE] ?? '';
    const cpu = parseCpuMillis(node.status?.allocatable?.cpu ?? '') ?? 0;
    // Upstream stops at the first such node; we keep scanning only to name every offender.
    if (zone === '') noZone.push(node.metadata.name);
    else if (cpu === 0) noCpu.push(node.metadata.name);
    if (zone === '' || cpu === 0) continue;
    millisByZone.set(zone, (millisByZone.get(zone) ?? 0) + cpu);
    total += cpu;
    counted++;
  }

  const ignored = ignoredNote(controlPlane, notReady);
  if (noZone.length > 0 || noCpu.length > 0) {
    const parts: string[] = [];
    if (noZone.length > 0) parts.push(`${plural(noZone.length, 'ready worker node')} without a ${LABEL_ZONE} label (${nameList(noZone)})`);
    if (noCpu.length > 0) parts.push(`${plural(noCpu.length, 'ready worker node')} without allocatable CPU (${nameList(noCpu)})`);
    return {
      ratios: null,
      reason: `insufficient node information: ${parts.join('; ')}; a single such node disables hints cluster-wide`,
    };
  }
  if (counted === 0) {
    return {
      ratios: null,
      reason: nodes.length === 0 ? 'no nodes are known' : `no ready worker nodes${ignored}`,
    };
  }
  const zones = [...millisByZone.keys()].sort();
  if (zones.length < 2) {
    return {
      ratios: null,
      reason: `ready worker nodes (${counted}) exist only in zone ${zones.join('')}${ignored}; hints need at least two zones`,
    };
  }

  const ratios: Record<string, number> = {};
  const cpuMillisByZone: Record<string, number> = {};
  for (const zone of zones) {
    const millis = millisByZone.get(zone) ?? 0;
    ratios[zone] = millis / total;
    cpuMillisByZone[zone] = millis;
  }
  const shares = zones.map((z) => `${z} ${cpuMillisByZone[z]}m (${percent(ratios[z] ?? 0)})`).join(', ');
  return {
    ratios,
    cpuMillisByZone,
    reason: `${zones.length} zones from ${plural(counted, 'ready worker node')}${ignored}: ${shares}`,
  };
}

function ignoredNote(controlPlane: number, notReady: number): string {
  const parts: string[] = [];
  if (controlPlane > 0) parts.push(`${controlPlane} control-plane`);
  if (notReady > 0) parts.push(`${notReady} not ready`);
  return parts.length > 0 ? ` (ignored: ${parts.join(', ')})` : '';
}
