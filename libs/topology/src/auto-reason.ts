// The plain-words reason of an enabled Auto decision, from the summary it is made of: written
// by addAutoHints after walking every endpoint, and by the core's incremental hinting
// (HintReuse) from the counts it keeps, so both say the same thing the same way.

import type { Allocations } from './allocation.ts';
import { OVERLOAD_THRESHOLD } from './allocation.ts';

import { decimal as twoDecimals, plural } from './explain-format.ts';

export interface AutoSummary {
  /** Ready endpoints of the address type. */
  readonly total: number;
  readonly allocations: Allocations;
  /** Hinted endpoints per zone after balancing. */
  readonly hinted: ReadonlyMap<string, number>;
  /** Endpoints hinted to another zone, per (from, to) pair in order of the first such move. */
  readonly moved: readonly { readonly from: string; readonly to: string; readonly count: number }[];
  readonly movedCount: number;
  /** Slices kept as they were (no ready endpoint) and slices rewritten. */
  readonly keptSlices: number;
  readonly rewrittenSlices: number;
}

/** The reason after "<mode reason>; " of an enabled Auto decision. */
export function autoEnabledReason(s: AutoSummary): string {
  const perZone = [...s.allocations]
    .map(([zone, a]) => `${zone} ${s.hinted.get(zone) ?? 0} hinted (target ${twoDecimals(a.target)}, min ${a.minimum}, max ${a.maximum})`)
    .join(', ');
  const parts = [
    `CPU-proportional zone hints for ${plural(s.total, 'ready endpoint')} across ${s.allocations.size} zones ` +
      `(each zone within ${OVERLOAD_THRESHOLD * 100}% of its CPU share): ${perZone}`,
  ];
  const outside = [...s.hinted.keys()].filter((zone) => !s.allocations.has(zone)).sort();
  if (outside.length > 0) parts.push(`endpoints in ${outside.join(', ')} (no counted node CPU there) are hinted for their own zone`);
  if (s.movedCount > 0) {
    parts.push(`${plural(s.movedCount, 'endpoint')} hinted to another zone to balance load (${s.moved.map((m) => `${m.from}->${m.to} x${m.count}`).join(', ')})`);
  }
  if (s.keptSlices + s.rewrittenSlices > 0) {
    parts.push(`${plural(s.keptSlices, 'unchanged slice')} kept ${s.keptSlices === 1 ? 'its' : 'their'} hints, ${s.rewrittenSlices} rewritten`);
  }
  return parts.join('; ');
}
