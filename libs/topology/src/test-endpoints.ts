// Test-only builders for endpoints and plans (imported by *.test.ts in this package only).

import type { Endpoint, EndpointSlice, Node, SlicePlan } from '@slicemesh/model';
import { makeNode } from '@slicemesh/testing';

export interface EpOpts {
  readonly zone?: string;
  readonly node?: string;
  /** true / false / 'unknown' (conditions.ready unset). Default true. */
  readonly ready?: boolean | 'unknown';
  /** Zone hints; `[]` means `hints: { forZones: [] }`. */
  readonly hz?: readonly string[];
  /** Node hints. */
  readonly hn?: readonly string[];
}

export function ep(ip: string, o: EpOpts = {}): Endpoint {
  const ready = o.ready ?? true;
  const hints =
    o.hz !== undefined || o.hn !== undefined
      ? {
          ...(o.hz !== undefined ? { forZones: o.hz.map((name) => ({ name })) } : {}),
          ...(o.hn !== undefined ? { forNodes: o.hn.map((name) => ({ name })) } : {}),
        }
      : undefined;
  return {
    addresses: [ip],
    conditions: ready === 'unknown' ? {} : { ready },
    ...(o.zone !== undefined ? { zone: o.zone } : {}),
    ...(o.node !== undefined ? { nodeName: o.node } : {}),
    ...(hints !== undefined ? { hints } : {}),
  };
}

export function plan(p: Partial<SlicePlan>): SlicePlan {
  return { create: p.create ?? [], update: p.update ?? [], delete: p.delete ?? [], unchanged: p.unchanged ?? [] };
}

/** Compact view of a slice's hints: one entry per endpoint, `ip:zones|nodes` (`-` = no hints). */
export function hintsOf(slice: EndpointSlice): string[] {
  return slice.endpoints.map((e) => {
    if (e.hints == null) return `${e.addresses[0]}:-`;
    const z = (e.hints.forZones ?? []).map((x) => x.name).join(',');
    const n = e.hints.forNodes !== undefined ? `|${e.hints.forNodes.map((x) => x.name).join(',')}` : '';
    return `${e.addresses[0]}:${z}${n}`;
  });
}

/** Counts endpoints per hinted zone across slices (ready or not), and cross-zone hints. */
export function zoneHintStats(slices: readonly EndpointSlice[]): { byZone: Record<string, number>; crossZone: number } {
  const byZone: Record<string, number> = {};
  let crossZone = 0;
  for (const s of slices) {
    for (const e of s.endpoints) {
      for (const z of e.hints?.forZones ?? []) {
        byZone[z.name] = (byZone[z.name] ?? 0) + 1;
        if (z.name !== e.zone) crossZone++;
      }
    }
  }
  return { byZone, crossZone };
}

/** Nodes giving each zone the listed millicores (one node per zone), e.g. { 'zone-a': 450, 'zone-b': 550 }. */
export function zoneNodes(millis: Readonly<Record<string, number>>): Node[] {
  return Object.entries(millis).map(([zone, m]) => makeNode(`node-${zone}`, { zone, cpu: `${m}m` }));
}
