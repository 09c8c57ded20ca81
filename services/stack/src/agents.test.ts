import { describe, expect, it } from 'vitest';
import { LABEL_ZONE } from '@slicemesh/model';
import { deepFreeze } from '@slicemesh/testing';
import type { NodeLike } from './agents.ts';
import { pickAgents } from './agents.ts';

const node = (name: string, zone?: string, ip?: string): NodeLike => ({
  metadata: { name, ...(zone !== undefined ? { labels: { [LABEL_ZONE]: zone } } : {}) },
  ...(ip !== undefined ? { status: { addresses: [{ type: 'Hostname', address: name }, { type: 'InternalIP', address: ip }] } } : {}),
});
const NODES = deepFreeze([node('b-2', 'zone-b'), node('a-1', 'zone-a', '172.18.0.10'), node('b-1', 'zone-b'), node('edge.1'), node('a-2', 'zone-a'), node('edge.0')]);

describe('pickAgents', () => {
  const cases = [
    { name: 'node: one agent per node, sorted by name', mode: 'node' as const, want: ['a-1', 'a-2', 'b-1', 'b-2', 'edge.0', 'edge.1'] },
    { name: 'zone: the first node of each zone, and one unzoned node when there are any', mode: 'zone' as const, want: ['a-1', 'b-1', 'edge.0'] },
    { name: 'none: no agents', mode: 'none' as const, want: [] },
  ];
  for (const tc of cases) it(tc.name, () => expect(pickAgents(NODES, tc.mode, '/run').map((a) => a.node)).toEqual(tc.want));

  it('an agent carries its zone (empty when unzoned), its InternalIP and its rules file', () => {
    expect(pickAgents(NODES, 'zone', '/run')).toEqual([
      { node: 'a-1', zone: 'zone-a', nodeIPs: ['172.18.0.10'], rulesFile: '/run/a-1.rules' },
      { node: 'b-1', zone: 'zone-b', nodeIPs: [], rulesFile: '/run/b-1.rules' },
      { node: 'edge.0', zone: '', nodeIPs: [], rulesFile: '/run/edge.0.rules' },
    ]);
  });

  it('no nodes: no agents in any mode', () => {
    for (const mode of ['node', 'zone', 'none'] as const) expect(pickAgents([], mode, '/run')).toEqual([]);
  });
});
