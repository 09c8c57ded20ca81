// Comparing states for people: the trigger-time annotation is left out (like the replay check,
// it depends on which syncs a process saw), and a hints decision is compared without its
// one-off Event (the cache records "enabled" once), so only real changes show.

import type { EndpointSlice } from '@slicemesh/model';
import { ANNOTATION_TRIGGER_TIME } from '@slicemesh/model';
import type { HintsDecision } from '@slicemesh/topology';

/** The slice as JSON without the trigger-time annotation. */
export function sliceText(s: EndpointSlice): string {
  const annotations = { ...(s.metadata.annotations ?? {}) };
  delete annotations[ANNOTATION_TRIGGER_TIME];
  const metadata = { ...s.metadata, annotations: Object.keys(annotations).length === 0 ? undefined : annotations };
  return JSON.stringify({ ...s, metadata });
}

export function decisionText(d: HintsDecision): string {
  return JSON.stringify([d.addressType, d.enabled, d.mode, d.reason, d.allocations ?? null]);
}

export interface NameDiff {
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly deleted: readonly string[];
}

/** Slices created, updated and deleted from `a` to `b`, by name, sorted. */
export function diffSlices(a: readonly EndpointSlice[], b: readonly EndpointSlice[]): NameDiff {
  const before = new Map(a.map((s) => [s.metadata.name, sliceText(s)]));
  const after = new Map(b.map((s) => [s.metadata.name, sliceText(s)]));
  const created: string[] = [];
  const updated: string[] = [];
  const deleted: string[] = [];
  for (const [name, text] of after) {
    const was = before.get(name);
    if (was === undefined) created.push(name);
    else if (was !== text) updated.push(name);
  }
  for (const name of before.keys()) if (!after.has(name)) deleted.push(name);
  return { created: created.sort(), updated: updated.sort(), deleted: deleted.sort() };
}

/** Endpoint addresses (ready or not) of a set of slices, sorted and unique. */
export function addressesOf(slices: readonly EndpointSlice[]): string[] {
  return [...new Set(slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)))].sort();
}

/** Zones whose view differs between `a` and `b`, sorted. */
export function changedZones(a: Readonly<Record<string, readonly EndpointSlice[]>>, b: Readonly<Record<string, readonly EndpointSlice[]>>): string[] {
  const zones = new Set([...Object.keys(a), ...Object.keys(b)]);
  const text = (l: readonly EndpointSlice[] | undefined): string => (l ?? []).map(sliceText).join('\n');
  return [...zones].filter((z) => text(a[z]) !== text(b[z])).sort();
}

export function decisionsDiffer(a: readonly HintsDecision[], b: readonly HintsDecision[]): boolean {
  return a.map(decisionText).join('\n') !== b.map(decisionText).join('\n');
}
