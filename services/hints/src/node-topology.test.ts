import { describe, expect, it } from 'vitest';
import type { Node } from '@slicemesh/model';
import { deepFreeze, makeNode } from '@slicemesh/testing';
import { TopologyCache } from '@slicemesh/topology';
import type { KubeEnvelope } from './messages.ts';
import { NodeSet, applyNodeChange, isStaleVersion, zoneLayoutOf } from './node-topology.ts';
import { autoService, threeZoneNodes, threeZoneSlice } from './test-fixtures.ts';
import { hintService } from '@slicemesh/core';

function withRv(node: Node, rv: string): Node {
  return { ...node, metadata: { ...node.metadata, resourceVersion: rv } };
}
function env(type: 'Upserted.v1' | 'Deleted.v1', object: Node): KubeEnvelope<Node> {
  return deepFreeze({ type, cluster: 'c1', object, observedAt: '' });
}

describe('isStaleVersion', () => {
  const cases: { name: string; incoming: string | undefined; stored: string | undefined; stale: boolean }[] = [
    { name: 'an older integer version is stale', incoming: '9', stored: '10', stale: true },
    { name: 'a newer integer version is not (numeric, not text, order)', incoming: '10', stored: '9', stale: false },
    { name: 'the same version is not (a redelivery re-applies the same object)', incoming: '7', stored: '7', stale: false },
    { name: 'opaque versions cannot be ordered, so they are accepted', incoming: 'abc', stored: 'abd', stale: false },
    { name: 'a missing version is accepted', incoming: undefined, stored: '5', stale: false },
    { name: 'a missing stored version is accepted', incoming: '5', stored: '', stale: false },
  ];
  for (const tc of cases) it(tc.name, () => expect(isStaleVersion(tc.incoming, tc.stored)).toBe(tc.stale));
});

describe('NodeSet', () => {
  it('applies upserts and deletes, ignores stale versions, lists by name', () => {
    const set = new NodeSet();
    expect(set.apply(env('Upserted.v1', withRv(makeNode('n-b', { zone: 'z1' }), '5')))).toBe(true);
    expect(set.apply(env('Upserted.v1', withRv(makeNode('n-a', { zone: 'z1' }), '3')))).toBe(true);
    expect(set.apply(env('Upserted.v1', withRv(makeNode('n-b', { zone: 'z2' }), '4')))).toBe(false);
    expect(set.list().map((n) => [n.metadata.name, n.metadata.labels?.['topology.kubernetes.io/zone']])).toEqual([['n-a', 'z1'], ['n-b', 'z1']]);
    expect(set.apply(env('Deleted.v1', withRv(makeNode('n-a'), '2')))).toBe(false);
    expect(set.apply(env('Deleted.v1', withRv(makeNode('n-a'), '6')))).toBe(true);
    expect(set.list().map((n) => n.metadata.name)).toEqual(['n-b']);
  });
});

describe('zoneLayoutOf / applyNodeChange', () => {
  const base = threeZoneNodes();
  const cases: { name: string; next: Node[]; requeueAll: boolean }[] = [
    { name: 'the same nodes in another order: layout unchanged', next: [...base].reverse(), requeueAll: false },
    { name: 'a node turning NotReady changes CPU, not the zone layout', next: [base[0]!, base[1]!, makeNode('n-c', { zone: 'zone-c', ready: false })], requeueAll: false },
    { name: 'a node changing zone changes the layout', next: [base[0]!, base[1]!, makeNode('n-c', { zone: 'zone-a' })], requeueAll: true },
    { name: 'a node losing its zone label changes the layout', next: [base[0]!, base[1]!, makeNode('n-c')], requeueAll: true },
    { name: 'a node joining changes the layout', next: [...base, makeNode('n-d', { zone: 'zone-a' })], requeueAll: true },
    { name: 'a node leaving changes the layout', next: base.slice(0, 2), requeueAll: true },
  ];
  for (const tc of cases) {
    it(`${tc.name}`, () => {
      const cache = new TopologyCache();
      const out = applyNodeChange(cache, deepFreeze(tc.next), zoneLayoutOf(base));
      expect(out.requeueAll).toBe(tc.requeueAll);
      expect(out.zoneLayout).toBe(zoneLayoutOf(tc.next));
    });
  }

  it('no nodes give the empty layout', () => expect(zoneLayoutOf([])).toBe(''));

  it('A.12.5/C.4 reports services whose cached hints are overloaded by the new distribution', () => {
    const cache = new TopologyCache();
    cache.setNodes(base);
    hintService({ service: autoService(), slices: [threeZoneSlice()], cache, preferSameTrafficDistribution: true });
    expect(applyNodeChange(cache, base, zoneLayoutOf(base)).overloaded).toEqual([]);
    const bigA = [makeNode('n-a', { zone: 'zone-a', cpu: '40' }), base[1]!, base[2]!];
    const out = applyNodeChange(cache, bigA, zoneLayoutOf(base));
    expect(out.overloaded.map((o) => [o.service, o.addressType])).toEqual([['default/web', 'IPv4']]);
    expect(out.requeueAll).toBe(false);
    expect(out.distribution.ratios?.['zone-a']).toBeCloseTo(40 / 48);
  });
});
