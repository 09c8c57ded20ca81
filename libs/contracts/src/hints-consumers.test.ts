import { describe, expect, it } from 'vitest';
import { hintsKubeFilter, hintsOffsetName, isHintsKubeRole, parseHintsOffsetName } from './hints-consumers.ts';

describe('hints consumers of KUBE', () => {
  it.each([
    ['nodes: every node of the cluster', 'nodes', 'rx.kube.c1.node.>'],
    ["services: the partition's Services", 'services', 'rx.kube.c1.5.service.>'],
    ["endpointslices: the partition's other controllers' slices", 'endpointslices', 'rx.kube.c1.5.endpointslice.>'],
  ] as const)('%s', (_name, role, want) => {
    expect(hintsKubeFilter(role, 'c1', 5, { prefix: 'rx.' })).toBe(want);
  });

  it.each([
    ['a plain name', 'c1', 'KUBE_x', 5, 'services'],
    ['a cluster name with colons', 'a:b', 'KUBE', 0, 'nodes'],
    ['the SLICES consumer', 'c1', 'SLICES_x', 2, 'slices'],
  ])('reads back its offset name: %s', (_name, cluster, stream, partition, role) => {
    expect(parseHintsOffsetName(hintsOffsetName(cluster, stream, partition, role))).toEqual({ cluster, stream, partition, role });
  });

  it.each(['hints:c1:KUBE:services', 'hints:odd', 'slicer:c1:KUBE:p1:nodes', 'hints:c1:KUBE:px:nodes'])('no other name parses: %s', (name) => {
    expect(parseHintsOffsetName(name)).toBeUndefined();
  });

  it('only nodes, services and endpointslices read KUBE', () => {
    expect(['nodes', 'services', 'endpointslices', 'slices', 'pods'].map(isHintsKubeRole)).toEqual([true, true, true, false, false]);
  });
});
