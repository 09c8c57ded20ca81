import { describe, expect, it } from 'vitest';
import type { Node } from '@slicemesh/model';
import { LABEL_ZONE } from '@slicemesh/model';
import { deepFreeze, makeNode } from '@slicemesh/testing';
import { nodeCpuDistribution } from './cpu-distribution.ts';

const cp = { 'node-role.kubernetes.io/control-plane': '' };
const master = { 'node-role.kubernetes.io/master': 'true' };

describe('nodeCpuDistribution (C.1)', () => {
  const cases: { name: string; nodes: Node[]; ratios: Record<string, number> | null; reason: RegExp }[] = [
    { name: 'C.1.4 no nodes is insufficient', nodes: [], ratios: null, reason: /no nodes are known/ },
    {
      name: 'C.1.4 a single node is insufficient',
      nodes: [makeNode('n1', { zone: 'zone-a', cpu: '1000m' })],
      ratios: null,
      reason: /^ready worker nodes \(1\) exist only in zone zone-a; hints need at least two zones$/,
    },
    {
      name: 'C.1.4 a single zone is insufficient',
      nodes: [makeNode('n1', { zone: 'zone-a', cpu: '1' }), makeNode('n2', { zone: 'zone-a', cpu: '1' })],
      ratios: null,
      reason: /\(2\) exist only in zone zone-a/,
    },
    {
      name: 'C.1.3 two equal zones split 0.5/0.5',
      nodes: [makeNode('n1', { zone: 'zone-a', cpu: '1000m' }), makeNode('n2', { zone: 'zone-b', cpu: '1' })],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /^2 zones from 2 ready worker nodes: zone-a 1000m \(50%\), zone-b 1000m \(50%\)$/,
    },
    {
      name: 'C.1.4 two zones where one only has an unready node is insufficient',
      nodes: [makeNode('n1', { zone: 'zone-a', ready: false }), makeNode('n2', { zone: 'zone-b' })],
      ratios: null,
      reason: /in zone zone-b \(ignored: 1 not ready\)/,
    },
    {
      name: 'C.1.4 two zones where one only has a control-plane node is insufficient',
      nodes: [makeNode('n1', { zone: 'zone-a' }), makeNode('n2', { zone: 'zone-b', labels: cp })],
      ratios: null,
      reason: /in zone zone-a \(ignored: 1 control-plane\)/,
    },
    {
      name: 'C.1.1 an unready node beside a ready one in the same zone is ignored',
      nodes: [makeNode('n1', { zone: 'zone-a', cpu: '1' }), makeNode('n2', { zone: 'zone-b', cpu: '1' }), makeNode('n3', { zone: 'zone-b', cpu: '1', ready: false })],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /\(ignored: 1 not ready\)/,
    },
    {
      name: 'C.1.1 control-plane and master labels exclude a node whatever their value',
      nodes: [
        makeNode('n1', { zone: 'zone-a', cpu: '1' }),
        makeNode('n2', { zone: 'zone-b', cpu: '1' }),
        makeNode('n3', { zone: 'zone-b', cpu: '8', labels: cp }),
        makeNode('n4', { zone: 'zone-a', cpu: '8', labels: master }),
      ],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /\(ignored: 2 control-plane\)/,
    },
    {
      name: 'C.1.4 worked example 5000m/4500m/500m gives 0.5/0.45/0.05',
      nodes: [
        makeNode('a1', { zone: 'zone-a', cpu: '1000m' }),
        makeNode('a2', { zone: 'zone-a', cpu: '1000m' }),
        makeNode('a3', { zone: 'zone-a', cpu: '1000m' }),
        makeNode('a4', { zone: 'zone-a', cpu: '2000m' }),
        makeNode('b1', { zone: 'zone-b', cpu: '3000m' }),
        makeNode('b2', { zone: 'zone-b', cpu: '1500m' }),
        makeNode('c1', { zone: 'zone-c', cpu: '500m' }),
      ],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.45, 'zone-c': 0.05 },
      reason: /zone-a 5000m \(50%\), zone-b 4500m \(45%\), zone-c 500m \(5%\)/,
    },
    {
      name: 'C.1.3 mixed quantity spellings ("4", "3500m", "0.5") are summed in millicores',
      nodes: [makeNode('a1', { zone: 'zone-a', cpu: '4' }), makeNode('b1', { zone: 'zone-b', cpu: '3500m' }), makeNode('b2', { zone: 'zone-b', cpu: '0.5' })],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /zone-a 4000m \(50%\), zone-b 4000m \(50%\)/,
    },
    {
      name: 'C.1.2 one ready worker without a zone label makes everything insufficient',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b' }), makeNode('x1', {})],
      ratios: null,
      reason: new RegExp(`1 ready worker node without a ${LABEL_ZONE} label \\(x1\\)`),
    },
    {
      name: 'C.1.2 an empty zone label counts as missing',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b' }), makeNode('x1', { zone: '' })],
      ratios: null,
      reason: /without a .* label \(x1\)/,
    },
    {
      name: 'C.1.2 zero allocatable CPU makes everything insufficient',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b', cpu: '0' })],
      ratios: null,
      reason: /1 ready worker node without allocatable CPU \(b1\)/,
    },
    {
      name: 'C.1.2 unparseable allocatable CPU counts as zero',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b', cpu: 'lots' })],
      ratios: null,
      reason: /without allocatable CPU \(b1\)/,
    },
    {
      name: 'C.1.1 a zoneless node that is not ready or is control-plane does not matter',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b' }), makeNode('x1', { ready: false }), makeNode('x2', { labels: cp })],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /\(ignored: 1 control-plane, 1 not ready\)/,
    },
    {
      name: 'C.1.1 a node without any Ready condition is not ready',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('b1', { zone: 'zone-b' }), { ...makeNode('b2', { zone: 'zone-b' }), status: { allocatable: { cpu: '4' } } }],
      ratios: { 'zone-a': 0.5, 'zone-b': 0.5 },
      reason: /1 not ready/,
    },
    {
      name: 'offending nodes are all counted and listed by name',
      nodes: [makeNode('a1', { zone: 'zone-a' }), makeNode('z4'), makeNode('z1'), makeNode('z3'), makeNode('z2')],
      ratios: null,
      reason: /4 ready worker nodes without a .* label \(z1, z2, z3 and 1 more\)/,
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const got = nodeCpuDistribution(deepFreeze(tc.nodes));
      expect(got.ratios).toEqual(tc.ratios);
      expect(got.reason).toMatch(tc.reason);
    });
  }

  it('C.1 zone order in the result does not depend on node order', () => {
    const nodes = [makeNode('b1', { zone: 'zone-b', cpu: '3' }), makeNode('a1', { zone: 'zone-a', cpu: '1' })];
    const one = nodeCpuDistribution(deepFreeze(nodes));
    const two = nodeCpuDistribution(deepFreeze([...nodes].reverse()));
    expect(Object.keys(one.ratios ?? {})).toEqual(['zone-a', 'zone-b']);
    expect(JSON.stringify(one)).toBe(JSON.stringify(two));
    expect(one.cpuMillisByZone).toEqual({ 'zone-a': 1000, 'zone-b': 3000 });
  });
});
