// Which proxy agents a stack runs: one per node (what a cluster runs), one per zone (every view
// is still exercised, at a fraction of the cost), or none.

import { join } from 'node:path';
import { LABEL_ZONE } from '@slicemesh/model';
import type { AgentSpec } from './service-env.ts';

export const AGENT_MODES = ['node', 'zone', 'none'] as const;
export type AgentMode = (typeof AGENT_MODES)[number];

/** The parts of a Node the choice reads. */
export interface NodeLike {
  readonly metadata: { readonly name: string; readonly labels?: Readonly<Record<string, string>> };
  readonly status?: { readonly addresses?: readonly { readonly type: string; readonly address: string }[] };
}

const zoneOf = (n: NodeLike): string => n.metadata.labels?.[LABEL_ZONE] ?? '';

/**
 * The agents for `nodes` under `mode`, sorted by node name, each writing `<rulesDir>/<node>.rules`.
 * - node: every node;
 * - zone: the first node (by name) of each zone, and of the unzoned nodes if there are any;
 * - none, or no nodes: [].
 */
export function pickAgents(nodes: readonly NodeLike[], mode: AgentMode, rulesDir: string): AgentSpec[] {
  if (mode === 'none') return [];
  const sorted = [...nodes].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  const chosen: NodeLike[] = [];
  const zones = new Set<string>();
  for (const n of sorted) {
    if (mode === 'zone') {
      if (zones.has(zoneOf(n))) continue;
      zones.add(zoneOf(n));
    }
    chosen.push(n);
  }
  return chosen.map((n) => ({
    node: n.metadata.name,
    zone: zoneOf(n),
    nodeIPs: (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address).slice(0, 1),
    rulesFile: join(rulesDir, `${n.metadata.name}.rules`),
  }));
}
