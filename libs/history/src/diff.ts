// `log diff A B`: what changed between two states, Service by Service.

import type { HintsDecision } from '@slicemesh/topology';
import type { NameDiff } from './compare.ts';
import { addressesOf, changedZones, decisionsDiffer, diffSlices } from './compare.ts';
import type { ServiceState } from './service-state.ts';
import type { StateAt } from './state-at.ts';

export interface ServiceDiff {
  readonly namespace: string;
  readonly name: string;
  /** `added`/`removed`: the Service (spec or slices) exists only at B / only at A. */
  readonly change: 'added' | 'removed' | 'changed';
  readonly specChanged: boolean;
  readonly slices: NameDiff;
  readonly endpoints: { readonly added: readonly string[]; readonly removed: readonly string[] };
  readonly decisionsChanged: boolean;
  readonly decisions: { readonly before: readonly HintsDecision[]; readonly after: readonly HintsDecision[] };
  readonly zoneViewsChanged: readonly string[];
}

const EMPTY = (namespace: string, name: string): ServiceState => ({ namespace, name, service: null, slices: [], ownSlices: [], decisions: [], zoneViews: {} });

/** The Services that differ from `a` to `b`, sorted by namespace and name; [] when equal. */
export function diffStates(a: StateAt, b: StateAt): readonly ServiceDiff[] {
  const key = (s: ServiceState): string => `${s.namespace}/${s.name}`;
  const before = new Map(a.services.map((s) => [key(s), s]));
  const after = new Map(b.services.map((s) => [key(s), s]));
  const out: ServiceDiff[] = [];
  for (const k of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const i = k.indexOf('/');
    const x = before.get(k) ?? EMPTY(k.slice(0, i), k.slice(i + 1));
    const y = after.get(k) ?? EMPTY(k.slice(0, i), k.slice(i + 1));
    const slices = diffSlices(x.slices, y.slices);
    const specChanged = JSON.stringify(x.service?.spec ?? null) !== JSON.stringify(y.service?.spec ?? null);
    const decisionsChanged = decisionsDiffer(x.decisions, y.decisions);
    const zoneViewsChanged = changedZones(x.zoneViews, y.zoneViews);
    if (!specChanged && !decisionsChanged && zoneViewsChanged.length === 0 && slices.created.length + slices.updated.length + slices.deleted.length === 0) continue;
    const ax = new Set(addressesOf(x.slices));
    const ay = new Set(addressesOf(y.slices));
    out.push({
      namespace: x.namespace,
      name: x.name,
      change: !before.has(k) ? 'added' : !after.has(k) ? 'removed' : 'changed',
      specChanged,
      slices,
      endpoints: { added: [...ay].filter((e) => !ax.has(e)), removed: [...ax].filter((e) => !ay.has(e)) },
      decisionsChanged,
      decisions: { before: x.decisions, after: y.decisions },
      zoneViewsChanged,
    });
  }
  return out;
}
